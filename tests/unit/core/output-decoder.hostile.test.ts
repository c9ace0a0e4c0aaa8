/**
 * Output shaped to make a naive stripper quadratic (unterminated control strings, C1 introducers,
 * erase storms, lone CRs, deep CSI parameters, a 20 MB line, random bytes), through the real decoding
 * path: an OutputDecoder fed in one read and in 64 KiB reads, and a real job printing it from a file.
 * Each must finish in seconds and leave no control character in the text. Rendered at its ends, each
 * must give the cut a whole render gives, and the shapes a whole render is too slow for (text many
 * times its size, random bytes) must be rendered at their ends.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { after, describe, it } from "node:test";
import { truncateTail } from "@earendil-works/pi-coding-agent";
import { HeadTailBuffer, omissionMarker } from "../../../src/core/output/head-tail-buffer.ts";
import { continuationPrefix, OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import { renderTerminalText } from "../../../src/core/output/terminal-text.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { CONTROL_CHARACTER, HOSTILE_SHAPES } from "../../helpers/hostile-output.ts";

/** Generous: the stripper does 1 MiB of its worst shape in tens of milliseconds on a loaded 2-core VM. */
const DECODE_BOUND_MS = 5_000;
const JOB_BOUND_MS = 15_000;
const READ = 64 * 1024;

const noControl = (text: string, what: string) => {
  const found = CONTROL_CHARACTER.exec(text);
  const code = found ? (found[0].codePointAt(0) ?? 0).toString(16).padStart(4, "0") : "";
  assert.equal(found, null, `${what}: control character U+${code} at ${found?.index}`);
};

describe("hostile output through an OutputDecoder", () => {
  for (const shape of HOSTILE_SHAPES) {
    it(`${shape.name}: linear, and no control character left, in one read or in 64 KiB reads`, () => {
      const bytes = shape.bytes();
      const t0 = performance.now();
      const whole = new OutputDecoder().take({ head: bytes, tail: Buffer.alloc(0), omittedBytes: 0 }, true).text;
      const wholeMs = performance.now() - t0;
      noControl(whole, "one read");
      assert.ok(wholeMs < DECODE_BOUND_MS, `one read took ${wholeMs.toFixed(0)} ms`);

      const decoder = new OutputDecoder();
      const t1 = performance.now();
      let longest = 0;
      for (let offset = 0; offset < bytes.length; offset += READ) {
        const r0 = performance.now();
        const text = decoder.take(
          { head: bytes.subarray(offset, offset + READ), tail: Buffer.alloc(0), omittedBytes: 0 },
          offset + READ >= bytes.length,
        ).text;
        longest = Math.max(longest, performance.now() - r0);
        noControl(text, `read at ${offset}`);
      }
      const splitMs = performance.now() - t1;
      assert.ok(splitMs < DECODE_BOUND_MS, `64 KiB reads took ${splitMs.toFixed(0)} ms`);
      assert.ok(longest < 1_000, `one 64 KiB read took ${longest.toFixed(0)} ms`);
    });
  }
});

describe("hostile output rendered at its ends", () => {
  const piCut = (text: string) => {
    const cut = truncateTail(text, { maxBytes: 50 * 1024, maxLines: 2000 });
    return { content: cut.content, lines: cut.outputLines, partial: cut.lastLinePartial };
  };
  const utf8 = (bytes: Buffer) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  const slowWhole = ["cursor to a far column on every line", "random bytes"];

  for (const shape of HOSTILE_SHAPES) {
    it(`${shape.name}: Pi's cut of the ends is the cut of the whole render`, () => {
      const buffer = new HeadTailBuffer();
      buffer.push(shape.bytes());
      const { head, tail, omittedBytes } = buffer.drain();
      const gap = omittedBytes > 0 ? `${utf8(head)}${omissionMarker(omittedBytes)}` : "";
      const whole = renderTerminalText(
        gap + utf8(omittedBytes > 0 ? tail.subarray(continuationPrefix(tail)) : Buffer.concat([head, tail])),
      );
      const ends = new OutputDecoder().take({ head, tail, omittedBytes }, true);
      assert.deepEqual(piCut(ends.text), piCut(whole));
      if (slowWhole.includes(shape.name)) assert.ok(ends.elided, "rendered at its ends");
    });
  }
});

describe("hostile output printed by a real job", () => {
  const dir = mkdtempSync(join(tmpdir(), "piue-hostile-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const shape of HOSTILE_SHAPES) {
    it(`${shape.name}: the job's reads finish in seconds, the event loop stays responsive, no control character reaches the model`, async () => {
      const file = join(dir, `${shape.name.replace(/\W+/g, "-")}.bin`);
      const bytes = shape.bytes();
      writeFileSync(file, bytes);
      const runtime = new ExecRuntime();
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const t0 = performance.now();
      try {
        let report = await runtime.exec(
          prepareExec({ cmd: `head -c ${bytes.length} '${file}'`, yield_time_ms: 30_000 }, process.cwd(), process.env),
        );
        noControl(report.output.text, "first read");
        while (!report.job.exit) {
          report = await runtime.interact({ jobId: report.job.jobId, window: { ms: 30_000 } });
          noControl(report.output.text, "a poll");
        }
        assert.equal(report.job.exit.exitCode, 0);
      } finally {
        loop.disable();
        await runtime.shutdown();
      }
      const ms = performance.now() - t0;
      assert.ok(ms < JOB_BOUND_MS, `took ${ms.toFixed(0)} ms`);
      assert.ok(loop.max / 1e6 < 2_000, `event loop blocked for ${(loop.max / 1e6).toFixed(0)} ms`);
    });
  }
});
