/**
 * Seeded fuzzing of the output path: random byte streams, rich in escape introducers, terminators,
 * C1 controls, CRs, invisible characters and broken UTF-8, fed to an OutputDecoder whole and split
 * across reads at random points. Checks: no control character ever comes out, every stream is done
 * in bounded time, and (for streams without a lone CR, whose redraw may straddle reads, and without
 * retention gaps) the text does not depend on where the reads were split. A failure names its seed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutputDecoder } from "../../../src/core/output-decoder.ts";
import { CONTROL_CHARACTER, fuzzStream, prng } from "../../helpers/hostile-output.ts";

const CASES = 3_000;

/** The stream through one decoder in reads ending at `cuts`; the last read is final. */
function decode(bytes: Buffer, cuts: number[]): string {
  const decoder = new OutputDecoder();
  let text = "";
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    text += decoder.take({ head: bytes.subarray(from, cut), tail: Buffer.alloc(0), omittedBytes: 0 }, cut === bytes.length);
    from = cut;
  }
  return text;
}

function randomCuts(random: () => number, length: number): number[] {
  const cuts = new Set<number>();
  const count = Math.floor(random() * 12);
  for (let i = 0; i < count; i++) cuts.add(Math.floor(random() * length));
  return [...cuts].sort((a, b) => a - b).filter((cut) => cut > 0 && cut < length);
}

const show = (text: string) => JSON.stringify(text.length > 300 ? `${text.slice(0, 300)}…` : text);

describe("output fuzzing (seeded)", () => {
  it(`${CASES} random streams with lone CRs: never a control character, always quick, whole or split`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const random = prng(seed);
      const bytes = fuzzStream(random, true);
      const t0 = performance.now();
      const whole = decode(bytes, []);
      const split = decode(bytes, randomCuts(random, bytes.length));
      const ms = performance.now() - t0;
      assert.ok(!CONTROL_CHARACTER.test(whole), `seed ${seed}: ${show(whole)}`);
      assert.ok(!CONTROL_CHARACTER.test(split), `seed ${seed} (split): ${show(split)}`);
      assert.ok(ms < 1_000, `seed ${seed}: ${bytes.length} bytes took ${ms.toFixed(0)} ms`);
    }
  });

  it(`${CASES} random streams without lone CRs: the text is the same however the reads were split`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const random = prng(1_000_000 + seed);
      const bytes = fuzzStream(random, false);
      const whole = decode(bytes, []);
      const cuts = randomCuts(random, bytes.length);
      const split = decode(bytes, cuts);
      assert.ok(split === whole, `seed ${1_000_000 + seed}, cuts ${cuts.join(",")}:\n whole ${show(whole)}\n split ${show(split)}`);
      const bytewise = bytes.length <= 400 ? decode(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)) : whole;
      assert.ok(bytewise === whole, `seed ${1_000_000 + seed}, one byte per read:\n whole ${show(whole)}\n split ${show(bytewise)}`);
      assert.ok(!CONTROL_CHARACTER.test(whole), `seed ${1_000_000 + seed}: ${show(whole)}`);
    }
  });
});
