/**
 * Reading the environment the same way everywhere: whole numbers a typo cannot turn into a lifted
 * limit, and keys Windows treats case-insensitively (`Path`, `PATH`).
 */

/** A whole number ≥ `min` from an environment value, or undefined for anything else (a typo, a sign, a fraction). */
export function wholeNumber(raw: string | undefined, min = 1): number | undefined {
  const text = raw?.trim();
  if (!text || !/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= min ? value : undefined;
}

/** The key under which `env` holds `name`, ignoring case (as Windows does); `name` when it holds none. */
export function envKey(env: NodeJS.ProcessEnv, name: string): string {
  const lower = name.toLowerCase();
  return Object.keys(env).find((key) => key.toLowerCase() === lower) ?? name;
}
