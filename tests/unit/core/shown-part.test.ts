/**
 * A large read decoded only as far as its result can show it must show exactly what a whole decode
 * shows: Pi's tail cut of both is the same, Codex's head and tail of both are the same, and the
 * streaming state carries on identically into the next read. Seeded streams rich in what crosses
 * lines (control strings with LFs, OSC ended by BEL, C1 strings, CR redraws, broken UTF-8) and in what
 * makes a start mid-line wrong (long lines of controls, a CR late in a long line, joiners, strings
 * holding a CR), read whole and through a retention gap, with reads cut anywhere or just inside a
 * control string (so the next read starts with one held: a start state). And below the decoder, the
 * start itself: rendering from it gives the end of the whole render, after every state a previous
 * read or a gap can leave. A failure names its seed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { truncateTail } from "@earendil-works/pi-coding-agent";
import { HeadTailBuffer, omissionMarker } from "../../../src/core/output/head-tail-buffer.ts";
import { continuationPrefix, OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import {
  CLEAR_ORIGIN,
  originAfter,
  originPastGap,
  partStart,
  type ShownPart,
  type StreamOrigin,
  safeLineStart,
} from "../../../src/core/output/shown-part.ts";
import { TerminalText } from "../../../src/core/output/terminal-text.ts";
import { MAX_CONTROL_SEQUENCE_CHARS, PARTIAL_DECODE_MIN_SKIP_BYTES } from "../../../src/core/shared/constants.ts";
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
  if (roll < 0.96) return `${"x".repeat(n * 7)}\n`;
  return longLine(random, n);
}

/** A line long enough for a part to start inside it, of a kind a mid-line start must get right. */
function longLine(random: () => number, n: number): string {
  const roll = random();
  if (roll < 0.2) return `${"\x1b]0;t".repeat(20 * n)}\n`; // unterminated OSCs, each abandoned by the next
  if (roll < 0.27) return `${"word ".repeat(30 * n)}\rredrawn from the start\n`; // a CR after any mid-line start
  // A cursor move or an erase after any mid-line start, before it, or as the line's last byte before its LF.
  if (roll < 0.35) return `${"word ".repeat(30 * n)}${["\x1b[1G", "\x08", "\x1b[3D", "\x1b[2K", "\u009b7G"][n % 5]}moved\n`;
  if (roll < 0.5) return `${"中😀👨\u200d👩 ".repeat(10 * n)}\n`; // joiners and 3- and 4-byte characters
  if (roll < 0.6) return `\x1bPa\x07${"b\n".repeat(n)}c\x1b\\shown\n`; // BEL does not end a DCS
  if (roll < 0.7) return `\x1b]0;${"ab\rcd\n".repeat(n)}\x18after CAN\n`; // abandoned: its CRs and LFs are shown
  if (roll < 0.75) return `\x1bX${"s".repeat(MAX_CONTROL_SEQUENCE_CHARS - 20 + (n % 40))}\x1b\\after a long SOS\n`; // around the bound
  if (roll < 0.9) return `${"\u009b1;2".repeat(10 * n)}m${"é".repeat(10 * n)}\n`;
  return `${"x".repeat(50 * n)}\r${"\x1b[K".repeat(n)}y\n`; // erased on a redrawn line
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

/** An introducer of a control string (ESC ] P X ^ _, or C1 as C2 90 98 9D 9E 9F) starts at `at`. */
function opensString(bytes: Buffer, at: number): boolean {
  const next = bytes[at + 1] ?? 0;
  if (bytes[at] === 0x1b) return [0x5d, 0x50, 0x58, 0x5e, 0x5f].includes(next);
  return bytes[at] === 0xc2 && [0x90, 0x98, 0x9d, 0x9e, 0x9f].includes(next);
}

/** A read boundary a few bytes into the first control string at or after `at`, so the next read starts inside it; `at` when none. */
function insideString(bytes: Buffer, at: number, seed: number): number {
  for (let i = at; i < bytes.length - 8; i++) if (opensString(bytes, i)) return i + 2 + (seed % 5);
  return at;
}

/**
 * Three reads of one stream through a whole and a partial decoder; `gap` keeps them in a small
 * retention buffer; `inside` cuts the reads just inside a control string, so the next read starts
 * with one held back (and past a gap, the head may end in one).
 */
function compare(seed: number, cut: ShownPart, gap: boolean, inside = false): number {
  // A cut of a different size for each seed, so the part's start lands in every kind of line.
  const shown = { ...cut, tailBytes: cut.tailBytes + ((seed * 131) % 1500) };
  const bytes = stream(seed, 3 * (PARTIAL_DECODE_MIN_SKIP_BYTES + 60_000));
  const whole = new OutputDecoder();
  const part = new OutputDecoder();
  const cuts = [0, Math.floor(bytes.length / 3) + (seed % 97), Math.floor((2 * bytes.length) / 3) - (seed % 89), bytes.length];
  if (inside) for (const k of [1, 2]) cuts[k] = insideString(bytes, cuts[k]!, seed);
  let elided = 0;
  for (let read = 0; read < 3; read++) {
    const buffer = new HeadTailBuffer(gap ? 160_000 : 4 * 1024 * 1024);
    buffer.push(bytes.subarray(cuts[read], cuts[read + 1]));
    const retained = buffer.drain();
    const final = read === 2;
    const a = whole.take(retained, final).text;
    const b = part.take(retained, final, shown);
    const where = `seed ${seed}, read ${read}${gap ? ", with a gap" : ""}${inside ? ", cut inside a control string" : ""}`;
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

    it(`shows what a whole decode shows (${name}) when a read starts inside a control string`, () => {
      let elided = 0;
      for (let seed = 1; seed <= SEEDS; seed++) elided += compare(seed, shown, false, true) + compare(seed, shown, true, true);
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

  it("takes a LF in a control string abandoned after it (its body is shown as text), and none in one the bound would not end", () => {
    assert.equal(at("a\n\x1bPhidden\nmore\x1b[31mx\nz", 15), 11); // abandoned by ESC [
    assert.equal(at("a\n\x1bPhidden\nmore\x18x\nz", 15), 11); // abandoned by CAN
    assert.equal(at("a\n\x1bPa\x07hidden\nmore\x1b\\x\nz", 17), 2); // BEL does not end a DCS; ST does
    const long = (chars: number) => `a\n\x1bP${"x".repeat(chars)}\nz\x1b\\`;
    assert.equal(at(long(MAX_CONTROL_SEQUENCE_CHARS - 2)), 2); // within the bound: ended by ST, its LF hidden
    assert.equal(at(long(MAX_CONTROL_SEQUENCE_CHARS)), MAX_CONTROL_SEQUENCE_CHARS + 5); // past it: abandoned, shown
  });
});

describe("partStart", () => {
  const start = (bytes: Buffer | string, limit: number, origin: StreamOrigin = CLEAR_ORIGIN) =>
    partStart(Buffer.from(bytes), limit, 0, origin);

  it("starts mid-line where nothing can be open, at the start of a character other than a joiner", () => {
    const plain = "é".repeat(40_000); // no control at all: 2 bytes a character
    assert.equal(start(plain, 70_001), 70_000);
    const joined = "😀\u200d".repeat(10_000); // 4 + 3 bytes: a joiner at 7k + 4
    assert.equal(start(joined, 7 * 5000 + 4), 7 * 5000);
  });

  it("starts at the last control before the cut, whose sequence the part then reads whole", () => {
    const oscs = "\x1b]0;tttttttt".repeat(10_000); // 12 bytes each, every OSC abandoned by the next
    assert.equal(start(oscs, 12 * 5000 + 7), 12 * 5000);
    const c1 = "\u009d0;x".repeat(20_000); // C2 9D, 5 bytes each
    assert.equal(start(c1, 5 * 9000 + 3), 5 * 9000);
  });

  it("starts at the cut past a LF the renderer takes, though a control came before it", () => {
    const text = `\x1b[31mred\n${"plain ".repeat(10_000)}`;
    assert.equal(start(text, 30_000), 30_000);
  });

  it("starts at the line's start when the line has a CR before or after the cut (a lone CR redraws the whole line)", () => {
    assert.equal(start(`one\n${"x".repeat(50_000)}\rY\n`, 30_000), 4);
    assert.equal(start(`one\n\r${"x".repeat(50_000)}\n`, 30_000), 4);
    assert.equal(start(`${"x".repeat(50_000)}\rY\n`, 30_000), -1); // no line start at all
  });

  it("starts at the line's start when a cursor move or an erase redraws the line, before or after the cut", () => {
    for (const redraw of ["\x1b[1G", "\x1b[G", "\x08", "\x1b[3D", "\x1b[2C", "\x1b[1K", "\x1b[2K", "\u009b5G"]) {
      assert.equal(start(`one\n${"x".repeat(50_000)}${redraw}Y\n`, 30_000), 4, JSON.stringify(redraw));
      assert.equal(start(`one\n${redraw}${"x".repeat(50_000)}\n`, 30_000), 4, JSON.stringify(redraw));
    }
    // Colours and other sequences leave the line as it is.
    assert.ok(start(`one\n${"\x1b[31mx\x1b[0m".repeat(5_000)}\n`, 30_001) > 29_990);
  });

  it("after a sequence held back from the previous read, starts only where it can no longer be open", () => {
    const afterString = originAfter("\x1b]0;t", false);
    const plain = "x".repeat(4 * MAX_CONTROL_SEQUENCE_CHARS);
    assert.equal(start(plain, 100, afterString), -1);
    assert.equal(start(plain, 4 * MAX_CONTROL_SEQUENCE_CHARS - 1, afterString), 4 * MAX_CONTROL_SEQUENCE_CHARS - 1);
    assert.equal(start(plain, 100, originAfter("", true)), -1); // a C1 control split between the reads
    assert.equal(start(plain, 100, originAfter("", false)), 100);
    // A CR in a held string is shown if the string is abandoned: the line is redrawn until a LF the renderer takes.
    const afterCr = originAfter("\x1b]0;a\rb", false);
    assert.equal(start(plain, 4 * MAX_CONTROL_SEQUENCE_CHARS - 1, afterCr), -1);
    const lined = `${"x".repeat(4 * MAX_CONTROL_SEQUENCE_CHARS)}\n${"x".repeat(1000)}`;
    assert.equal(start(lined, lined.length - 10, afterCr), lined.length - 10);
  });

  it("past a retention gap, starts at 0 only when the head leaves no control string open across the marker", () => {
    const tail = Buffer.from(`${"x".repeat(100)}\r${"x".repeat(100)}\n`);
    assert.equal(partStart(tail, 150, 0, originPastGap(Buffer.from("head\x1b]0;t\x07done"), CLEAR_ORIGIN)), 0);
    assert.equal(partStart(tail, 150, 0, originPastGap(Buffer.from("head\x1b]0;still open"), CLEAR_ORIGIN)), -1);
    assert.equal(partStart(tail, 150, 0, originPastGap(Buffer.from("head\x1b[3"), CLEAR_ORIGIN)), 0); // a CSI ends at the marker's LF
  });
});

/** What a previous read can leave held: nothing, a control string (holding a CR, or a LF), a CSI, a lone ESC, a C1 control's first byte. */
const BEFORE = ["", "\x1b]0;title", "\x1bPq#0;\rhidden", "\x1bPa\nb", "\u009d0;c1", "\x1b[3", "\x1b", "\xc2"].map((held) =>
  held === "\xc2" ? Buffer.from([0xc2]) : Buffer.from(held),
);

const utf8 = () => new TextDecoder("utf-8", { ignoreBOM: true });

/** A read rendered whole after `previous`, and where a start is looked for: the read's bytes, or past a gap the tail's. */
function wholeRead(previous: Buffer, bytes: Buffer, gapAt: number, final: boolean) {
  const terminal = new TerminalText();
  const decoder = utf8();
  terminal.write(decoder.decode(previous, { stream: true }), false);
  const afterPrevious = originAfter(terminal.heldText, previous.at(-1) === 0xc2);
  if (gapAt === 0) {
    const text = terminal.write(decoder.decode(bytes, { stream: !final }), final);
    return { text, held: terminal.heldText, bytes, origin: afterPrevious };
  }
  // As a decoder does it past a retention gap: the head flushed, the marker, the tail past a cut character.
  const head = bytes.subarray(0, gapAt);
  const tail = bytes.subarray(gapAt + 5000);
  const stream = tail.subarray(continuationPrefix(tail));
  const text = terminal.write(`${decoder.decode(head)}${omissionMarker(5000)}${decoder.decode(stream, { stream: !final })}`, final);
  return { text, held: terminal.heldText, bytes: stream, origin: originPastGap(head, afterPrevious) };
}

describe("a part rendered from partStart", () => {
  it("is the end of the whole render, after every state a previous read or a retention gap can leave", () => {
    let starts = 0;
    let midLine = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const random = prng(5_000_000 + seed);
      const all = seed % 4 === 1 ? Buffer.concat(Array.from({ length: 40 }, () => fuzzStream(random, true))) : stream(seed, 110_000);
      const final = seed % 3 === 0;
      const read = wholeRead(BEFORE[seed % BEFORE.length]!, all, seed % 2 === 0 ? Math.floor(all.length / 3) : 0, final);
      for (let k = 0; k < 8; k++) {
        const limit = Math.floor(random() * (read.bytes.length + 1));
        const at = partStart(read.bytes, limit, 0, read.origin);
        if (at === -1) continue;
        assert.ok(at <= limit, `seed ${seed}: start ${at} past the limit ${limit}`);
        starts++;
        if (at > 0 && read.bytes[at - 1] !== 0x0a) midLine++;
        const terminal = new TerminalText();
        const part = terminal.write(utf8().decode(read.bytes.subarray(at), { stream: !final }), final);
        assert.ok(read.text.endsWith(part), `seed ${seed}, limit ${limit}: the part from ${at} is not the end of the whole render`);
        assert.equal(terminal.heldText, read.held, `seed ${seed}, limit ${limit}, start ${at}: held`);
      }
    }
    assert.ok(starts > 400 && midLine > 150, `${starts} starts, ${midLine} of them mid-line`);
  });
});
