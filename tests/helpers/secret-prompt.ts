/**
 * The race of a prompt hidden just before its line is drawn, forced: the job answers a first prompt,
 * turns echo off, says so through a file, then waits for the test's gate before drawing `Password: `
 * and reading. The model's text written between the two is refused, and the job reads none of it.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import { ExecRequestError } from "../../src/core/shared/errors.ts";
import { waitFor } from "./processes.ts";
import { runningId } from "./reports.ts";
import { runtimeWithWakes } from "./runtime.ts";

export async function writeAsPromptIsHidden(dir: string): Promise<void> {
  const base = join(dir, `race-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const [hidden, gate] = [`${base}-hidden`, `${base}-gate`];
  const cmd = `read -p 'Name: ' n; stty -echo; touch ${hidden}; while [ ! -e ${gate} ]; do sleep 0.02; done; printf 'Password: '; read p; echo; echo "len=\${#p}"; sleep 300`;
  const write = (id: number, extra: Record<string, unknown>) =>
    prepareWrite({ session_id: id, yield_time_ms: 1_000, ...extra }, process.env);
  const { runtime } = runtimeWithWakes();
  try {
    const id = runningId(
      await runtime.exec(prepareExec({ cmd, tty: true, until_pattern: "Name: ", yield_time_ms: 10_000 }, dir, process.env)),
    )!;
    await runtime.interact(write(id, { chars: "bob\\r" }));
    // Echo is off, the prompt not drawn yet and nothing reads the terminal: the write comes now.
    await waitFor(() => existsSync(hidden), "echo turned off");
    await assert.rejects(runtime.interact(write(id, { chars: "hunter2\\r" })), (error: Error) => {
      assert.ok(error instanceof ExecRequestError);
      assert.match(error.message, new RegExp(`session ${id} asks for a secret`));
      return true;
    });
    writeFileSync(gate, "");
    await runtime.interact(write(id, { until_pattern: "Password: ", yield_time_ms: 10_000 }));
    const entered = await runtime.interact(write(id, { chars: "\\r", until_pattern: "^len=", yield_time_ms: 10_000 }));
    assert.match(entered.output.text, /^len=0$/m, "hunter2 never reached the job");
  } finally {
    await runtime.shutdown();
  }
}
