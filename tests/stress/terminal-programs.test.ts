/**
 * Timing-bound behaviours of this round's terminal work, repeated beside two CPU burners (20 rounds,
 * `npm run test:stress`): a watcher's second failure wakes within 5 s of the edit once the model has
 * called on the job, and the read a pattern wake names returns the failure at once; a program that
 * repaints its screen by cursor addressing and then sits in a read of its terminal is shown as its
 * screen and never called waiting for input. Each round is ordered by the job's own output, never by
 * a sleep.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { startBurners } from "../helpers/load.ts";
import { waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { runningId } from "../helpers/reports.ts";
import { runtimeWithWakes } from "../helpers/runtime.ts";

const ROUNDS = 20;
const dir = mkdtempSync(join(tmpdir(), "piue-stress-terminal-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("pattern wakes of a watched test run, beside burners", () => {
  it(`${ROUNDS} rounds: the second failure wakes within 5 s of its edit, and the named read returns the failure in under 3 s`, async () => {
    const stop = startBurners(2);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const { runtime, batches } = runtimeWithWakes();
        const wakes = () => batches.flatMap((batch) => batch.patterns ?? []).length;
        const edited = join(dir, `edited-${round}`);
        const watcher = `while :; do if [ -e '${edited}' ]; then rm -f '${edited}'; echo 'FAIL a.test.js'; echo ' Tests failed'; fi; sleep 0.05; done`;
        try {
          const id = runningId(
            await runtime.exec(prepareExec({ cmd: watcher, yield_time_ms: 250, wake_on_pattern: "Tests failed" }, dir, process.env)),
          )!;
          for (const nth of [1, 2]) {
            const at = performance.now();
            writeFileSync(edited, "");
            await waitFor(() => wakes() === nth, `round ${round}: wake ${nth}`, 10_000, 10);
            const woke = performance.now() - at;
            assert.ok(woke < 5_000, `round ${round}: wake ${nth} came ${Math.round(woke)} ms after the edit`);
            const read0 = performance.now();
            const read = await runtime.interact(prepareWrite({ session_id: id, until_quiet_ms: 500 }, process.env));
            const took = performance.now() - read0;
            assert.equal(read.output.text, "FAIL a.test.js\n Tests failed\n", `round ${round}`);
            assert.ok(took < 3_000, `round ${round}: the named read took ${Math.round(took)} ms`);
          }
        } finally {
          await runtime.shutdown();
        }
      }
    } finally {
      stop();
    }
  });
});

describe("a program repainting its screen, beside burners", () => {
  it(
    `${ROUNDS} rounds: shown as its screen, never waiting for input while it sits in a read between paints`,
    { skip: SKIP_WITHOUT_PTY },
    async () => {
      const stop = startBurners(2);
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const runtime = new ExecRuntime();
          const paint = (i: number, wait: number) => `printf '\\033[Hframe ${i}\\033[K\\r\\nload 0.${i}\\033[K'; read -t ${wait} -n 1 key`;
          const script = `printf '\\033[H\\033[2J'; ${[1, 2, 3].map((i) => paint(i, 0.2)).join("; ")}; ${paint(4, 6)}; exec sleep 30`;
          try {
            const report = await runtime.exec(
              prepareExec({ cmd: script, tty: true, cols: 40, rows: 10, until_quiet_ms: 1_000, yield_time_ms: 20_000 }, dir, process.env),
            );
            assert.deepEqual(report.screen?.lines, ["frame 4", "load 0.4"], `round ${round}: ${report.output.text}`);
            assert.equal(report.screen?.repainting, true, `round ${round}`);
            assert.equal(
              report.inputWait?.likely ?? false,
              false,
              `round ${round}: it sits in a read between paints, yet repaints by itself`,
            );
          } finally {
            await runtime.shutdown();
          }
        }
      } finally {
        stop();
      }
    },
  );
});
