/**
 * For the tests that check what a user typed reaches the job and nothing else: a passphrase prompt
 * that echoes nothing and prints only the length and a hash of what it read, and every file of a
 * directory (the job logs) to search for the secret.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** `read -s` a passphrase, then print `len=N sum=<16 hex>`: proof the job read exactly what was typed, without the secret. */
export const PASSPHRASE_PROMPT =
  'read -r -s -p \'Passphrase: \' p; echo; echo "len=$(printf %s "$p" | wc -c) sum=$(printf %s "$p" | sha256sum | cut -c1-16)"; sleep 300';

/** Every file under `dir`, read whole as Latin-1 (bytes kept). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, "latin1"));
}
