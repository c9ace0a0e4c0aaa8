/**
 * One forced interleaving with real jobs, for `tests/unit/core/until-match-cut.test.ts` (once) and
 * `tests/stress/waits.test.ts` (again beside CPU burners): a job whose output the test releases only
 * once the runtime holds the match, while the call still delivers its input.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { waitFor } from "./processes.ts";
import { runningId } from "./reports.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 20_000, ...extra }, process.cwd(), process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);

/**
 * The job prints `first` once it read the call's first line, then `second` when the test creates
 * `gate1`, then reads the rest of the call's input only when the test creates `gate2`: the call's
 * input (larger than a pipe or terminal holds) is delivered only then, and its read comes after.
 */
function gatedJob(dir: string, first: string, second: string, tty: boolean): string {
  const gate = (name: string) => `while [ ! -e '${join(dir, name)}' ]; do sleep 0.02; done`;
  // On a terminal: no echo of the input (the output stays exact) and no line editing (a line of
  // any length is read).
  const setup = tty ? "stty -echo -icanon; " : "";
  return `${setup}echo waiting; read -r go; printf '${first}'; ${gate("gate1")}; printf '${second}'; ${gate("gate2")}; exec cat >/dev/null`;
}

/** One forced interleaving: the match arrives while the call's input is still being delivered, then more output. */
export async function matchThenMore(
  first: string,
  second: string,
  tty: boolean,
): Promise<{ read: string; next: string; matched: string | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), "until-cut-"));
  const runtime = new ExecRuntime();
  try {
    const started = await runtime.exec(exec(gatedJob(dir, first, second, tty), { tty, until_pattern: "^waiting$" }));
    const id = runningId(started)!;
    const job = runtime.jobs().find((candidate) => candidate.id === id)!;
    const input = `go\\n${"x".repeat(200_000)}`;
    const call = runtime.interact(write(id, { chars: input, yield_time_ms: 60_000, until_pattern: "ready" }));
    await waitFor(() => job.previewText().includes("ready"), "the matching output", 30_000);
    writeFileSync(join(dir, "gate1"), "");
    await waitFor(() => job.previewText().includes("next"), "the output after it", 30_000);
    writeFileSync(join(dir, "gate2"), "");
    const report = await call;
    assert.equal(report.waitEnd, "matched");
    const rest = await runtime.interact(write(id, { yield_time_ms: 20_000, until_pattern: "next" }));
    return { read: report.output.text, next: rest.output.text, matched: report.matchedLine };
  } finally {
    await runtime.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}
