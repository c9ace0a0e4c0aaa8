import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  SCREEN_BACKLOG_BYTES,
  SCREEN_CHUNK_BYTES,
  SCREEN_FEED_BYTES,
  type ScreenSnapshot,
  TerminalScreen,
  type TerminalScreenOptions,
} from "../../../src/core/screen/terminal-screen.ts";
import { framesInOrder } from "../../helpers/screen-scenarios.ts";

const b = (text: string) => Buffer.from(text, "utf8");

function screen(options: Partial<TerminalScreenOptions> = {}): TerminalScreen {
  return new TerminalScreen({ cols: 20, rows: 5, ...options });
}

/** Everything a snapshot must never contain: controls, and invisible characters not shown as `<U+…>`. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]|\udb40[\udc00-\udfff]/;

function assertSafe(snapshot: ScreenSnapshot): void {
  for (const line of snapshot.lines) assert.doesNotMatch(line, UNSAFE, JSON.stringify(line));
}

describe("TerminalScreen: what a snapshot shows", () => {
  it("shows the rows as a terminal draws them, trailing blanks trimmed and empty rows below the cursor left out", async () => {
    const s = screen();
    s.write(b("first   \r\nsecond\x1b[1;10Hover\x1b[3;1H"));
    const snap = await s.snapshot();
    assert.deepEqual(snap.lines, ["first    over", "second", ""]);
    assert.deepEqual(snap.cursor, { row: 3, col: 1 });
    assert.equal(snap.alternate, false);
    assert.equal(snap.cols, 20);
    assert.equal(snap.rows, 5);
    assert.equal(snap.skippedBytes, 0);
    s.dispose();
  });

  it("a fresh screen is one empty row with the cursor at 1,1", async () => {
    const s = screen();
    assert.deepEqual(await s.snapshot(), {
      lines: [""],
      cursor: { row: 1, col: 1 },
      alternate: false,
      repainting: false,
      cols: 20,
      rows: 5,
      skippedBytes: 0,
    });
    s.dispose();
  });

  it("trims spaces a program wrote itself (a full-screen program clears with spaces), and keeps inner ones", async () => {
    const s = screen();
    s.write(b(`${"a  b".padEnd(20, " ")}\r\n`));
    assert.deepEqual((await s.snapshot()).lines, ["a  b", ""]);
    s.dispose();
  });

  it("a cursor waiting to wrap after the last column reports the last column", async () => {
    const s = screen({ cols: 10 });
    s.write(b("0123456789"));
    assert.deepEqual((await s.snapshot()).cursor, { row: 1, col: 10 });
    s.dispose();
  });

  it("keeps a UTF-8 character split across writes, and wide characters, whole", async () => {
    const s = screen();
    const bytes = b("日本 é end\r\n😀 ok");
    for (const byte of bytes) s.write(Buffer.of(byte));
    const snap = await s.snapshot();
    assert.deepEqual(snap.lines, ["日本 é end", "😀 ok"]);
    // Each of 日 and 本 takes two columns. (The emulator's Unicode 6 tables count 😀 as one, unlike
    // today's wcwidth: a program that counts two is off by one after it, so no column is asserted there.)
    assert.equal(s.peek().lines[0], "日本 é end");
    const first = new TerminalScreen({ cols: 20, rows: 5 });
    first.write(b("日本 é end"));
    assert.deepEqual((await first.snapshot()).cursor, { row: 1, col: 11 });
    first.dispose();
    s.dispose();
  });

  it("shows only the screen, not the scrollback above it", async () => {
    const s = screen();
    s.write(b(Array.from({ length: 300 }, (_, i) => `line ${i}`).join("\r\n")));
    assert.deepEqual((await s.snapshot()).lines, ["line 295", "line 296", "line 297", "line 298", "line 299"]);
    s.dispose();
  });
});

describe("TerminalScreen: sanitizing", () => {
  it("shows bidi controls, zero-width characters and separators as <U+XXXX>, as the output renderer does", async () => {
    const s = screen({ cols: 40 });
    s.write(b("a\u202Eb\u200Bc\u2028d\u00ADe\u{E0041}g 👩‍💻"));
    assert.deepEqual((await s.snapshot()).lines, ["a<U+202E>b<U+200B>c<U+2028>d<U+00AD>e<U+E0041>g 👩‍💻"]);
    // A byte order mark the emulator drops is not on the screen at all: nothing hidden either way.
    s.write(b("\r\nx\uFEFFy"));
    assert.equal((await s.snapshot()).lines[1], "xy");
    s.dispose();
  });

  it("never lets a control character through, whatever bytes arrive (random bytes, many runs)", async () => {
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    // Bytes weighted towards ESC, C0, C1 (as UTF-8) and the invisible characters' UTF-8 forms.
    const pieces = [
      b("\x1b"),
      b("["),
      b("]"),
      b("\x07"),
      b("\r\n"),
      b("\u0085"),
      b("\u009b"),
      b("\u202e"),
      b("\u200b"),
      b("\u2028"),
      b("x"),
      b("é"),
    ];
    for (let run = 0; run < 40; run++) {
      const s = screen({ cols: 30, rows: 8 });
      for (let i = 0; i < 200; i++) {
        const chunk = random() % 3 === 0 ? Buffer.of(random() & 0xff, random() & 0xff, random() & 0xff) : pieces[random() % pieces.length]!;
        s.write(chunk);
      }
      assertSafe(await s.snapshot());
      s.dispose();
    }
  });
});

describe("TerminalScreen: ordering", () => {
  it("a snapshot taken right after a write reflects every byte written before it (200 frames)", async () => {
    await framesInOrder(200);
  });

  it("applies a resize after the bytes written before it, and a snapshot waits for it", async () => {
    // The size query is answered as each byte is parsed: the answers say which size was in force.
    const replies: string[] = [];
    const s = screen({ cols: 20, rows: 5, onReply: (bytes) => replies.push(bytes.toString("latin1")) });
    s.write(b("abc\r\ndef\x1b[18t"));
    s.resize(40, 3);
    s.write(b("\x1b[18t\x1b[3;1Hlast"));
    const snap = await s.snapshot();
    assert.deepEqual(replies, ["\x1b[8;5;20t", "\x1b[8;3;40t"]);
    assert.deepEqual([snap.cols, snap.rows], [40, 3]);
    assert.deepEqual(snap.lines, ["abc", "def", "last"]);
    s.resize(30, 4);
    assert.deepEqual([(await s.snapshot()).cols, s.peek().rows], [30, 4]);
    s.dispose();
  });

  it("follows the alternate screen for DECSET 1049, 1047 and 47, telling the listener", async () => {
    const changes: boolean[] = [];
    const s = screen({ onAlternateChange: (alternate) => changes.push(alternate) });
    s.write(b("normal text"));
    for (const mode of ["1049", "1047", "47"]) {
      s.write(b(`\x1b[?${mode}hfull screen`));
      const on = await s.snapshot();
      assert.equal(on.alternate, true, mode);
      assert.equal(s.alternate, true);
      s.write(b(`\x1b[?${mode}l`));
      assert.equal((await s.snapshot()).alternate, false, mode);
    }
    assert.deepEqual(changes, [true, false, true, false, true, false]);
    assert.deepEqual((await s.snapshot()).lines[0]!.startsWith("normal text"), true);
    s.dispose();
  });
});

describe("TerminalScreen: a program that repaints the normal screen", () => {
  const frame = (n: number) => `\x1b[Hframe ${n}\x1b[K\r\nrow two\x1b[K\r\nrow three`;

  it("repaints once it drew over what it drew twice by cursor addressing (top), not after a single clear", async () => {
    const s = screen();
    s.write(b(`\x1b[H\x1b[2J${frame(1)}`));
    assert.equal((await s.snapshot()).repainting, false, "the first paint of a fresh screen");
    s.write(b(frame(2)));
    assert.equal((await s.snapshot()).repainting, false, "one repaint could be a clear");
    s.write(b(frame(3)));
    const snap = await s.snapshot();
    assert.equal(snap.repainting, true);
    assert.equal(s.repainting, true);
    assert.deepEqual(snap.lines, ["frame 3", "row two", "row three"]);
    s.write(b("\x1b[2;1Hx\x1b[5;3H"));
    assert.equal((await s.snapshot()).repainting, true, "moves down or within a paint change nothing");
    s.dispose();
  });

  it("counts a move to a row above the cursor by CUP, HVP and VPA alike", async () => {
    for (const up of ["\x1b[1;1H", "\x1b[2f", "\x1b[1d"]) {
      const s = screen();
      s.write(b(`a\r\nb\r\nc${up}x\x1b[3;1H${up}y`));
      assert.equal((await s.snapshot()).repainting, true, JSON.stringify(up));
      s.dispose();
    }
  });

  it("stops when the screen scrolls (a clear, then a log) and when the program switches screens", async () => {
    const s = screen();
    s.write(b(`${frame(1)}${frame(2)}${frame(3)}`));
    assert.equal((await s.snapshot()).repainting, true);
    s.write(b("\r\n1\r\n2\r\n3\r\n4\r\n"));
    assert.equal((await s.snapshot()).repainting, false, "printed past the bottom");
    s.write(b(`${frame(4)}${frame(5)}\x1b[?1049h${frame(6)}${frame(7)}`));
    const alternate = await s.snapshot();
    assert.equal(alternate.alternate, true);
    assert.equal(alternate.repainting, false, "on the alternate screen it is the alternate view");
    s.write(b("\x1b[?1049l"));
    assert.equal((await s.snapshot()).repainting, false, "back on the normal screen: not until it repaints twice more");
    s.dispose();
  });
});

describe("TerminalScreen: terminal queries", () => {
  it("answers cursor position and device attributes through onReply, in order", async () => {
    const replies: string[] = [];
    const s = screen({ onReply: (bytes) => replies.push(bytes.toString("latin1")) });
    s.write(b("ab\r\ncd\x1b[6n\x1b[?6n\x1b[c\x1b[>c\x1b[5n\x1b[18t\x1b[?1049$p"));
    await s.snapshot();
    assert.deepEqual(replies, ["\x1b[2;3R", "\x1b[?2;3R", "\x1b[?1;2c", "\x1b[>0;276;0c", "\x1b[0n", "\x1b[8;5;20t", "\x1b[?1049;2$y"]);
    s.dispose();
  });

  it("a throwing onReply does not stop the parsing", async () => {
    const s = screen({
      onReply: () => {
        throw new Error("the PTY is gone");
      },
    });
    s.write(b("\x1b[6nstill parsed"));
    assert.deepEqual((await s.snapshot()).lines, ["still parsed"]);
    s.dispose();
  });
});

describe("TerminalScreen: a flood", () => {
  it("never throws and stays bounded: 64 MB written at once (beyond the emulator's own 50 MB limit) shows its end", async () => {
    const s = screen({ cols: 40, rows: 4 });
    const line = b(`${"y".repeat(30)}\r\n`);
    const chunk = Buffer.concat(Array.from({ length: Math.floor(SCREEN_CHUNK_BYTES / line.length) }, () => line));
    let written = 0;
    let maxPending = 0;
    while (written < 64 * 1024 * 1024) {
      s.write(chunk);
      written += chunk.length;
      maxPending = Math.max(maxPending, s.pendingBytes);
    }
    s.write(b("the end\r\n"));
    const snap = await s.snapshot();
    assert.ok(maxPending <= SCREEN_FEED_BYTES + SCREEN_BACKLOG_BYTES + SCREEN_CHUNK_BYTES, `pending ${maxPending}`);
    assert.ok(snap.skippedBytes > 60 * 1024 * 1024, `skipped ${snap.skippedBytes}`);
    assert.deepEqual(snap.lines.slice(-2), ["the end", ""]);
    assert.equal(s.pendingBytes, 0);
    s.dispose();
  });

  it("one giant write keeps only its newest bytes", async () => {
    const s = screen({ cols: 40, rows: 3 });
    const text = Array.from({ length: 400_000 }, (_, i) => `n${i}`).join("\r\n");
    s.write(b(text));
    const snap = await s.snapshot();
    assert.deepEqual(snap.lines, ["n399997", "n399998", "n399999"]);
    assert.equal(snap.skippedBytes, Buffer.byteLength(text) - SCREEN_BACKLOG_BYTES);
    s.dispose();
  });

  it("skipped bytes cannot leave the parser inside an escape sequence: text after the gap is shown", async () => {
    const s = screen({ cols: 40, rows: 3 });
    s.write(b("\x1b]0;a title that never ends"));
    for (let i = 0; i < 64; i++) s.write(Buffer.alloc(64 * 1024, "t"));
    // No ESC here: inside a control string, only a terminator or ESC would end it.
    s.write(b("\r\nvisible after the gap"));
    const snap = await s.snapshot();
    assert.ok(snap.skippedBytes > 0);
    assert.equal(snap.lines.at(-1), "visible after the gap");
    s.dispose();
  });

  it("a snapshot waiting for bytes that are then skipped still resolves, with the newer screen", async () => {
    const s = screen({ cols: 40, rows: 3 });
    s.write(Buffer.alloc(SCREEN_FEED_BYTES + SCREEN_BACKLOG_BYTES, "a"));
    const waiting = s.snapshot();
    for (let i = 0; i < 40; i++) s.write(Buffer.alloc(64 * 1024, "b"));
    s.write(b("\x1b[2J\x1b[Hnewest"));
    const snap = await waiting;
    assert.ok(snap.skippedBytes > 0);
    assert.deepEqual((await s.snapshot()).lines, ["newest"]);
    s.dispose();
  });
});

describe("TerminalScreen: sizes", () => {
  it("cuts fractions, raises sizes below 2×1 and refuses sizes that are not numbers", async () => {
    const s = new TerminalScreen({ cols: 30.7, rows: 0 });
    assert.deepEqual([s.peek().cols, s.peek().rows], [30, 1]);
    s.resize(1, 3.9);
    assert.deepEqual([(await s.snapshot()).cols, s.peek().rows], [2, 3]);
    assert.throws(() => s.resize(Number.NaN, 10), RangeError);
    assert.throws(() => new TerminalScreen({ cols: 80, rows: Number.POSITIVE_INFINITY }), RangeError);
    s.dispose();
  });
});

describe("TerminalScreen: dispose", () => {
  it("resolves pending snapshots with what was parsed, then ignores writes, resizes and replies", async () => {
    const replies: Buffer[] = [];
    const s = screen({ onReply: (bytes) => replies.push(bytes) });
    s.write(b("before"));
    await s.snapshot();
    s.write(Buffer.alloc(2 * 1024 * 1024, "z"));
    s.write(b("\x1b[6n")); // a query still unparsed at dispose is never answered
    const pending = s.snapshot();
    s.dispose();
    const last = await pending;
    assert.equal(last.lines.length >= 1, true);
    s.write(b("\x1b[6nafter"));
    s.resize(80, 24);
    assert.deepEqual(await s.snapshot(), last);
    assert.deepEqual(s.peek(), last);
    assert.equal(s.pendingBytes, 0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(replies, []);
    s.dispose();
  });
});
