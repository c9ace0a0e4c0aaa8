import { ExecRequestError } from "../shared/errors.ts";
import { decodeEscapes } from "./escapes.ts";

/**
 * What a `write_stdin` call sends to a job. In pipe mode a `chars` of exactly Ctrl-C or Ctrl-D means
 * what a terminal would make of it, since there is no line discipline to do it: Ctrl-C interrupts
 * the job's process group, Ctrl-D closes its stdin (EOF). `chars_b64` is always raw data.
 */
export type JobInput = { kind: "bytes"; bytes: Buffer } | { kind: "interrupt" } | { kind: "eof" };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64: standard alphabet, whitespace ignored, padding optional but never wrong. */
export function decodeBase64Strict(text: string): Buffer {
  const compact = text.replace(/[\t\n\r ]/g, "");
  const padded = compact.includes("=");
  if (!BASE64.test(compact) || (padded ? compact.length % 4 !== 0 : compact.length % 4 === 1)) {
    throw new ExecRequestError(
      "chars_b64 is not valid base64 (standard alphabet A-Z a-z 0-9 + /, optional = padding). Nothing was written.",
    );
  }
  return Buffer.from(compact, "base64");
}

/**
 * The input of a `write_stdin` call, or undefined for a pure poll. `chars` and `chars_b64` are
 * exclusive; both are checked before anything is written.
 */
export function parseInput(chars: string | undefined, charsB64: string | undefined): JobInput | undefined {
  if (chars && charsB64) {
    throw new ExecRequestError(
      "chars and chars_b64 are exclusive: send text in chars or raw bytes in chars_b64, not both. Nothing was written.",
    );
  }
  if (charsB64) {
    const bytes = decodeBase64Strict(charsB64);
    return bytes.length > 0 ? { kind: "bytes", bytes } : undefined;
  }
  if (!chars) return undefined;
  const bytes = decodeEscapes(chars);
  if (bytes.length === 1 && bytes[0] === 0x03) return { kind: "interrupt" };
  if (bytes.length === 1 && bytes[0] === 0x04) return { kind: "eof" };
  return { kind: "bytes", bytes };
}
