/**
 * A large read decoded only as far as its result can show it must show exactly what a whole decode
 * shows: Pi's tail cut of both is the same, Codex's head and tail of both are the same, and the
 * streaming state carries on identically into the next read. Seeded streams rich in what crosses
 * lines (control strings with LFs, OSC ended by BEL, C1 strings, CR redraws, broken UTF-8), read
 * whole and through a retention gap. A failure names its seed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { truncateTail } from "@earendil-works/pi-coding-agent";
import { HeadTailBuffer } from "../../../src/core/output/head-tail-buffer.ts";
import { OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import { type ShownPart, safeLineStart } from "../../../src/core/output/shown-part.ts";
import { PARTIAL_DECODE_MIN_SKIP_BYTES } from "../../../src/core/shared/constants.ts";
import { fuzzStream, prng } from "../../helpers/hostile-output.ts";

const SEEDS = 60;

/** One line of a kind that a renderer might get wrong when it starts mid-stream. */
function line(random: () => number): string {
  const roll = random();
  const n = Math.floor(random() * 120);
  if (roll < 0.2) return `${"plain é中😀 text ".repeat(1 + (n % 8))}${n}\n`;
  if (roll < 0.35) return `\x1b[3${n % 8}mcolored ${n}\x1b[0m\n`;
  if (roll < 0.45) return `${Array.from({ length: 1 + (n % 5) }, (_, i) => `\rprogress ${i * 20}%`).join("")}\n`;
  if (roll < 0.52) return `\x1b]0;title ${n}\x07after title\n`;
  if (roll < 0.7) return `\x1bPq${"hidden line\n".repeat(1 + n)}\x1b\\shown after DCS\n`;
  if (roll < 0.76) return `\u009d0;c1 title\u009cc1 after\n\u0090${"c1 hidden\n".repeat(1 + n)}\u009cc1 shown\n`;
  if (roll < 0.8) return `\x1b]8;;${"open osc\n".repeat(1 + n)}`; // ended by whatever ESC comes next
  if (roll < 0.85) return `${fuzzStream(random, false).toString("latin1").slice(0, 300)}\n`;
  return `${"x".repeat(n * 7)}\n`;
}

function stream(seed: number, bytes: number): Buffer {
  const random = prng(seed);
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    const next = line(random);
    parts.push(next);
    size += Buffer.byteLength(next);
  }
  return Buffer.from(parts.join(""));
}

const PI_CUT: ShownPart = { headBytes: 0, tailBytes: 3000, tailLines: 40 };
const CODEX_CUT: ShownPart = { headBytes: 2000, tailBytes: 2000, tailLines: Number.POSITIVE_INFINITY };

function piCut(text: string, shown: ShownPart) {
  const cut = truncateTail(text, { maxBytes: shown.tailBytes, maxLines: shown.tailLines });
  return { content: cut.content, truncated: cut.truncated, lines: cut.outputLines, partial: cut.lastLinePartial };
}

function codexEnds(text: string, shown: ShownPart): [string, string] {
  const bytes = Buffer.from(text);
  return [bytes.subarray(0, shown.headBytes).toString("latin1"), bytes.subarray(bytes.length - shown.tailBytes).toString("latin1")];
}

/** Three reads of one stream through a whole and a partial decoder; `gap` keeps them in a small retention buffer. */
function compare(seed: number, cut: ShownPart, gap: boolean): number {
  // A cut of a different size for each seed, so the part's start lands in every kind of line.
  const shown = { ...cut, tailBytes: cut.tailBytes + ((seed * 131) % 1500) };
  const bytes = stream(seed, 3 * (PARTIAL_DECODE_MIN_SKIP_BYTES + 60_000));
  const whole = new OutputDecoder();
  const part = new OutputDecoder();
  const cuts = [0, Math.floor(bytes.length / 3) + (seed % 97), Math.floor((2 * bytes.length) / 3) - (seed % 89), bytes.length];
  let elided = 0;
  for (let read = 0; read < 3; read++) {
    const buffer = new HeadTailBuffer(gap ? 160_000 : 4 * 1024 * 1024);
    buffer.push(bytes.subarray(cuts[read], cuts[read + 1]));
    const retained = buffer.drain();
    const final = read === 2;
    const a = whole.take(retained, final).text;
    const b = part.take(retained, final, shown);
    const where = `seed ${seed}, read ${read}${gap ? ", with a gap" : ""}`;
    if (!b.elided) {
      assert.equal(b.text, a, `${where}: not elided, so the same text`);
      continue;
    }
    elided++;
    if (shown.headBytes === 0) assert.deepEqual(piCut(b.text, shown), piCut(a, shown), `${where}: Pi's cut`);
    else assert.deepEqual(codexEnds(b.text, shown), codexEnds(a, shown), `${where}: Codex's head and tail`);
  }
  return elided;
}

describe("a read decoded only as far as its result shows", () => {
  for (const [name, shown] of [
    ["Pi's tail cut", PI_CUT],
    ["Codex's head and tail", CODEX_CUT],
  ] as const) {
    it(`shows what a whole decode shows (${name}), read after read, with and without a retention gap`, () => {
      let elided = 0;
      for (let seed = 1; seed <= SEEDS; seed++) elided += compare(seed, shown, false) + compare(seed, shown, true);
      // The comparison means something only if most reads were in fact decoded in part.
      assert.ok(elided > SEEDS * 3, `only ${elided} of ${SEEDS * 6} reads were decoded in part`);
    });
  }

  it("is not used for a read too small to skip much of, and then returns the whole text", () => {
    const bytes = Buffer.from("line\n".repeat(8000));
    const decoded = new OutputDecoder().take({ head: bytes, tail: Buffer.alloc(0), omittedBytes: 0 }, true, PI_CUT);
    assert.equal(decoded.elided, undefined);
    assert.equal(decoded.text, bytes.toString());
  });

  it("renders a 1 MiB flood's end only, and says how much it left out", () => {
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `${i}\n`).join(""));
    const decoded = new OutputDecoder().take({ head: bytes, tail: Buffer.alloc(0), omittedBytes: 0 }, true, {
      headBytes: 0,
      tailBytes: 50 * 1024,
      tailLines: 2000,
    });
    assert.ok(decoded.elided, "elided");
    assert.equal(decoded.elided.at, 0);
    assert.equal(decoded.elided.bytes + Buffer.byteLength(decoded.text), bytes.length);
    assert.ok(decoded.text.length < 80 * 1024, `decoded ${decoded.text.length} characters`);
    assert.ok(decoded.text.endsWith("199998\n199999\n"));
  });
});

describe("safeLineStart", () => {
  const at = (text: string, limit = text.length) => safeLineStart(Buffer.from(text), limit, 0, false);

  it("starts after the last LF at or before the limit", () => {
    assert.equal(at("one\ntwo\nthree"), 8);
    assert.equal(at("one\ntwo\nthree", 6), 4);
    assert.equal(at("no newline"), -1);
  });

  it("does not start inside a control string that may still be open, and does past one that ended", () => {
    assert.equal(at("a\n\x1bPhidden\nhidden\n"), 2); // DCS still open: start before it
    assert.equal(at("a\n\x1bPhidden\n\x1b\\shown\nx"), 19); // ST ended it
    assert.equal(at("a\n\x1b]0;title\nstill title\n"), 2); // OSC open
    assert.equal(at("a\n\x1b]0;title\x07\nafter\n"), 19); // OSC ended by BEL
    assert.equal(at("a\n\u0090c1 dcs\nhidden\n"), 2); // C1 DCS, as UTF-8 C2 90
    assert.equal(at("a\n\x1b[31mred\ncolored\n"), 19); // a CSI never spans a line
    assert.equal(at("\x1bPopen from the start\nhidden\n"), -1);
  });

  it("treats the start of the bytes as a line start past a retention gap", () => {
    assert.equal(safeLineStart(Buffer.from("partial line"), 5, 0, true), 0);
  });
});
