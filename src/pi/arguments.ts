/**
 * Checks of a tool call's raw arguments, derived from the tool's own JSON schema so the schema stays
 * the single source of truth. They run in `prepareArguments`, before Pi's validator: both Pi 1.4 and
 * 1.6 coerce types before `execute` (`cmd: 5` would arrive as "5", `"1000"` as 1000), and each
 * version words schema errors differently. A throw here becomes a clean error result with our message.
 */

import { checkUntilListening, metadataLine } from "../core/index.ts";
import { bounded } from "./results/format.ts";

interface PropertySchema {
  type?: string;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
}

/** The part of a TypeBox object schema the checks read. */
export interface ObjectSchema {
  properties: object;
  required?: readonly string[];
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string "${bounded(metadataLine(value), 40)}"`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

function typeError(tool: string, key: string, rule: PropertySchema, value: unknown): string | undefined {
  switch (rule.type) {
    case "string":
      if (typeof value !== "string") return `${tool}: ${key} must be a string, got ${describe(value)}.`;
      break;
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) return `${tool}: ${key} must be an integer, got ${describe(value)}.`;
      break;
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return `${tool}: ${key} must be a number, got ${describe(value)}.`;
      break;
    case "boolean":
      if (typeof value !== "boolean") return `${tool}: ${key} must be true or false, got ${describe(value)}.`;
      break;
  }
  if (rule.enum && !rule.enum.includes(value)) {
    return `${tool}: ${key} must be one of ${rule.enum.map((v) => JSON.stringify(v)).join(", ")}, got ${describe(value)}.`;
  }
  if (rule.minimum !== undefined && typeof value === "number" && value < rule.minimum) {
    return `${tool}: ${key} must be at least ${rule.minimum}, got ${value}.`;
  }
  if (rule.maximum !== undefined && typeof value === "number" && value > rule.maximum) {
    return `${tool}: ${key} must be at most ${rule.maximum}, got ${value}.`;
  }
  return undefined;
}

/**
 * Returns the arguments when they fit `schema`, with optional fields given as `null` left out (models
 * send `null` for "default"; Pi 1.6 drops them too, Pi 1.4 would refuse). Otherwise throws one error
 * listing every problem: unknown fields by name (with the accepted ones), missing required fields,
 * wrong types and values.
 */
export function checkArguments<T>(tool: string, schema: ObjectSchema, raw: unknown): T {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new Error(`${tool} expects an object of named arguments, got ${describe(raw)}.`);
  }
  const required = schema.required ?? [];
  const args = Object.fromEntries(
    Object.entries(raw as Record<string, unknown>).filter(([key, value]) => value !== null || required.includes(key)),
  );
  const properties = schema.properties as Record<string, PropertySchema>;
  const accepted = Object.keys(properties);
  const problems: string[] = [];
  const unknown = Object.keys(args).filter((key) => !accepted.includes(key));
  if (unknown.length > 0) {
    problems.push(
      `${tool}: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => `"${bounded(metadataLine(key), 40)}"`).join(", ")}. ` +
        `Accepted fields: ${accepted.join(", ")}.`,
    );
  }
  for (const key of required) {
    if (args[key] === undefined || args[key] === null) problems.push(`${tool}: ${key} is required.`);
  }
  for (const [key, rule] of Object.entries(properties)) {
    if (args[key] === undefined || (args[key] === null && required.includes(key))) continue;
    const problem = typeError(tool, key, rule, args[key]);
    if (problem) problems.push(problem);
  }
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return args as T;
}

/**
 * `until_listening` is `true` or a port: a union, which the checks above (one type per field) pass
 * over. Its own check runs on the raw value here, so "8080" or 1.5 is refused in our words on both hosts.
 */
export function checkListening<T>(args: T, untouched: string): T {
  checkUntilListening((args as { until_listening?: unknown }).until_listening, untouched);
  return args;
}
