/**
 * A large read is rendered at its ends only, and must show exactly what a whole render shows: Pi's
 * tail cut of both is the same, Codex's head and tail of both are the same, and the streaming state
 * carries on identically into the next read. Seeded streams rich in what crosses lines (control
 * strings with LFs, OSC ended by BEL, C1 strings, CR redraws, broken UTF-8) and in long lines of
 * controls, read whole and through a retention gap, with reads cut anywhere or just inside a control
 * string (so the next read starts with one held). And below the decoder, the line start itself:
 * rendering from it gives the end of the whole render, after every state a previous read or a gap
 * can leave. A failure names its seed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { truncateTail } from "@earendil-works/pi-coding-agent";
import { HeadTailBuffer, omissionMarker, type RetainedOutput } from "../../../src/core/output/head-tail-buffer.ts";
import { continuationPrefix, OutputDecoder, safeLineStart } from "../../../src/core/output/output-decoder.ts";
import { MAX_CONTROL_SEQUENCE_CHARS, TerminalText } from "../../../src/core/output/terminal-text.ts";
import { fuzzStream, prng } from "../../helpers/hostile-output.ts";

const SEEDS = 24;
/** Bytes a control sequence may span: a line start is looked for at least this far into a read. */
const REACH = 3 * (MAX_CONTROL_SEQUENCE_CHARS + 4);

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

/** The most a result shows: Pi's cap, and Codex's head and tail at its default budget (and at a small one). */
const PI_CAP = { maxBytes: 50 * 1024, maxLines: 2000 };
const CODEX_HALVES = [20_000, 2_000];

function piCut(text: string) {
  const cut = truncateTail(text, PI_CAP);
  return { content: cut.content, truncated: cut.truncated, lines: cut.outputLines, partial: cut.lastLinePartial };
}

function codexEnds(text: string, half: number): [string, string] {
  const bytes = Buffer.from(text);
  return [bytes.subarray(0, half).toString("latin1"), bytes.subarray(bytes.length - half).toString("latin1")];
}

/** The reference: each read rendered whole, as the decoder renders a small one. */
class WholeDecoder {
  private readonly utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  private readonly terminal = new TerminalText();

  take({ head, tail, omittedBytes }: RetainedOutput, final: boolean): string {
    const gap = omittedBytes > 0 ? `${this.utf8.decode(head)}${omissionMarker(omittedBytes)}` : "";
    const stream = omittedBytes > 0 ? tail.subarray(continuationPrefix(tail)) : Buffer.concat([head, tail]);
    return this.terminal.write(gap + this.utf8.decode(stream, { stream: !final }), final);
  }
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
 * Three reads of one stream through the decoder and the whole reference; `gap` keeps them in a
 * retention buffer smaller than a read; `inside` cuts the reads just inside a control string, so the
 * next read starts with one held back (and past a gap, the head may end in one).
 */
function compare(seed: number, gap: boolean, inside = false): number {
  const bytes = stream(seed, 3 * (gap ? 700_000 : 400_000));
  const whole = new WholeDecoder();
  const ends = new OutputDecoder();
  const cuts = [0, Math.floor(bytes.length / 3) + (seed % 97), Math.floor((2 * bytes.length) / 3) - (seed % 89), bytes.length];
  if (inside) for (const k of [1, 2]) cuts[k] = insideString(bytes, cuts[k]!, seed);
  let elided = 0;
  for (let read = 0; read < 3; read++) {
    const buffer = new HeadTailBuffer(gap ? 600_000 : 4 * 1024 * 1024);
    buffer.push(bytes.subarray(cuts[read], cuts[read + 1]));
    const retained = buffer.drain();
    const final = read === 2;
    const a = whole.take(retained, final);
    const b = ends.take(retained, final);
    const where = `seed ${seed}, read ${read}${gap ? ", with a gap" : ""}${inside ? ", cut inside a control string" : ""}`;
    if (!b.elided) {
      assert.equal(b.text, a, `${where}: not elided, so the same text`);
      continue;
    }
    elided++;
    assert.deepEqual(piCut(b.text), piCut(a), `${where}: Pi's cut`);
    for (const half of CODEX_HALVES) assert.deepEqual(codexEnds(b.text, half), codexEnds(a, half), `${where}: Codex's head and tail`);
  }
  return elided;
}

describe("a large read rendered at its ends", () => {
  it("shows what a whole render shows (Pi's cut, Codex's head and tail), read after read, with and without a retention gap", () => {
    let elided = 0;
    for (let seed = 1; seed <= SEEDS; seed++) elided += compare(seed, false) + compare(seed, seed % 3 === 0);
    // The comparison means something only if most reads were in fact rendered at their ends.
    assert.ok(elided > SEEDS * 3, `only ${elided} of ${SEEDS * 6} reads were rendered at their ends`);
  });

  it("shows what a whole render shows when a read starts inside a control string", () => {
    let elided = 0;
    for (let seed = 1; seed <= SEEDS; seed++) elided += compare(seed, false, true) + compare(seed, seed % 3 === 1, true);
    assert.ok(elided > SEEDS * 3, `only ${elided} of ${SEEDS * 6} reads were rendered at their ends`);
  });

  it("is not used for a read too small to skip much of, and then returns the whole text", () => {
    const bytes = Buffer.from("line\n".repeat(20_000));
    const decoded = new OutputDecoder().take({ head: bytes, tail: Buffer.alloc(0), omittedBytes: 0 }, true);
    assert.equal(decoded.elided, undefined);
    assert.equal(decoded.text, bytes.toString());
  });

  it("renders a 1 MiB flood's start and end only, and says how much it left out", () => {
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `${i}\n`).join(""));
    const decoded = new OutputDecoder().take({ head: bytes, tail: Buffer.alloc(0), omittedBytes: 0 }, true);
    assert.ok(decoded.elided, "elided");
    assert.ok(decoded.text.slice(0, decoded.elided.at).startsWith("0\n1\n2\n"));
    assert.equal(decoded.elided.bytes + Buffer.byteLength(decoded.text), bytes.length);
    assert.ok(decoded.text.length < 160 * 1024, `decoded ${decoded.text.length} characters`);
    assert.ok(decoded.text.endsWith("199998\n199999\n"));
  });
});

describe("safeLineStart", () => {
  /** `text` after a sequence's reach of plain lines, so only what `text` holds decides. */
  const plain = "p\n".repeat(REACH / 2);
  const at = (text: string, limit = text.length) => {
    const start = safeLineStart(Buffer.from(plain + text), plain.length + limit);
    return start === -1 ? -1 : start - plain.length;
  };

  it("starts after the last LF at or before the limit", () => {
    assert.equal(at("one\ntwo\nthree"), 8);
    assert.equal(at("one\ntwo\nthree", 6), 4);
    assert.equal(safeLineStart(Buffer.from("one\ntwo\n"), 10), -1, "not within a sequence's reach of the start");
  });

  it("starts before a control string that may hide the LF, and past a CSI, which never spans a line", () => {
    assert.equal(at("a\n\x1bPhidden\nhidden\n"), 2); // DCS
    assert.equal(at("a\n\x1b]0;title\x07\nafter\n"), 2); // OSC, even ended by BEL
    assert.equal(at("a\n\u0090c1 dcs\nhidden\n"), 2); // C1 DCS, as UTF-8 C2 90
    assert.equal(at("a\n\x1b[31mred\ncolored\n"), 19); // a CSI ends at a LF at the latest
    assert.equal(at("a\n\x1bPhidden\n\x1b\\shown\nx"), 19); // the ST is the last control: the string ended
  });

  it("gives up after stepping back over many control strings", () => {
    assert.equal(at("\x1b]0;t\n".repeat(100)), -1);
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
  if (gapAt === 0) {
    const text = terminal.write(decoder.decode(bytes, { stream: !final }), final);
    return { text, held: terminal.heldText, bytes };
  }
  // As a decoder does it past a retention gap: the head flushed, the marker, the tail past a cut character.
  const head = bytes.subarray(0, gapAt);
  const tail = bytes.subarray(gapAt + 5000);
  const stream = tail.subarray(continuationPrefix(tail));
  const text = terminal.write(`${decoder.decode(head)}${omissionMarker(5000)}${decoder.decode(stream, { stream: !final })}`, final);
  return { text, held: terminal.heldText, bytes: stream };
}

describe("a part rendered from safeLineStart", () => {
  it("is the end of the whole render, after every state a previous read or a retention gap can leave", () => {
    let starts = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const random = prng(5_000_000 + seed);
      const all = seed % 4 === 1 ? Buffer.concat(Array.from({ length: 60 }, () => fuzzStream(random, true))) : stream(seed, 160_000);
      const final = seed % 3 === 0;
      const read = wholeRead(BEFORE[seed % BEFORE.length]!, all, seed % 2 === 0 ? Math.floor(all.length / 3) : 0, final);
      for (let k = 0; k < 8; k++) {
        const limit = Math.floor(random() * (read.bytes.length + 1));
        const at = safeLineStart(read.bytes, limit);
        if (at === -1) continue;
        assert.ok(at <= limit && read.bytes[at - 1] === 0x0a, `seed ${seed}: start ${at} is no line start at or before ${limit}`);
        starts++;
        const terminal = new TerminalText();
        const part = terminal.write(utf8().decode(read.bytes.subarray(at), { stream: !final }), final);
        assert.ok(read.text.endsWith(part), `seed ${seed}, limit ${limit}: the part from ${at} is not the end of the whole render`);
        assert.equal(terminal.heldText, read.held, `seed ${seed}, limit ${limit}, start ${at}: held`);
      }
    }
    assert.ok(starts > 300, `${starts} starts`);
  });
});
