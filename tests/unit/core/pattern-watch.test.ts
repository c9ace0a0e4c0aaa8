import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderTerminalText } from "../../../src/core/output/terminal-text.ts";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { mayHoldMatch, plainChunk, requiredText } from "../../../src/core/patterns/required-text.ts";
import { type PatternHit, PatternWatch } from "../../../src/core/wake-watch/pattern-watch.ts";
import { ReadMatches } from "../../../src/core/wake-watch/read-matches.ts";
import { SteppedClock } from "../../helpers/clock.ts";
import { prng } from "../../helpers/hostile-output.ts";

function watch(pattern: string, options: { midLine?: boolean; prefilter?: boolean; judgedThrough?: () => number } = {}) {
  /** What each hit said (its line and count); where its output ended is in `ends`. */
  const hits: Omit<PatternHit, "end">[] = [];
  const ends: number[] = [];
  const clock = new SteppedClock();
  const w = new PatternWatch(compileUntilPattern(pattern), {
    midLine: options.midLine ?? false,
    onHit: ({ end, ...hit }) => {
      hits.push(hit);
      ends.push(end);
    },
    clock,
    ...(options.prefilter !== undefined ? { prefilter: options.prefilter } : {}),
    ...(options.judgedThrough ? { judgedThrough: options.judgedThrough } : {}),
  });
  const feed = (text: string | Buffer) => w.feed(typeof text === "string" ? Buffer.from(text) : text, clock.now());
  return { w, hits, ends, clock, feed };
}

describe("the text a pattern requires", () => {
  const chars = (source: string) =>
    requiredText(source)?.alternatives.map((alternative) =>
      alternative.map((variants) => variants.map((c) => String.fromCodePoint(c)).join("/")),
    );

  it("reads the runs each alternative needs, rarest characters first, both cases under (?i)", () => {
    assert.deepEqual(chars("ERROR"), [["R", "O", "E"]]);
    assert.deepEqual(chars("(?i)error|fatal"), [
      ["r/R", "o/O", "e/E"],
      ["f/F", "l/L", "a/A"],
    ]);
    assert.deepEqual(chars("(?i)(error|fatal)"), chars("(?i)error|fatal"), "a whole-pattern group is unwrapped");
    assert.deepEqual(chars("\\d+ errors?"), [["r", "o", "e"]], "an optional character is not required");
    assert.deepEqual(chars("\\.tsx?"), [[".", "s", "t"]], "an escaped punctuation character is itself");
    assert.deepEqual(chars("Wörld"), [["ö", "W", "d"]]);
  });

  it("under (?i) a character stands for every ASCII character RE2 folds it with: ſ for s and S, the Kelvin sign for k and K", () => {
    assert.deepEqual(chars("(?i)ſtatus"), [["ſ/S/s", "u/U", "s/S"]]);
    assert.deepEqual(chars("(?i)\u212Aelvin")?.[0]?.[0], "\u212A/K/k");
    assert.deepEqual(chars("(?i)Kelvin")?.[0]?.[0], "K/k", "ASCII k: the Kelvin sign is never in a chunk passed over");
    assert.deepEqual(chars("(?i)é"), [["é"]], "no ASCII folds: a plain chunk cannot hold it");
  });

  it("finds (?i)ſtatus and (?i)\u212Aelvin in plain ASCII lines, as RE2 matches them, with and without the pass-over", () => {
    for (const [pattern, line] of [
      ["(?i)ſtatus", "STATUS ok"],
      ["(?i)ſtatus", "the status is fine"],
      ["(?i)\u212Aelvin", "300 kelvin"],
      ["(?i)\u212Aelvin", "KELVIN scale"],
    ] as const) {
      assert.ok(compileUntilPattern(pattern).test(line), `RE2 matches ${line} with ${pattern}`);
      for (const prefilter of [true, false]) {
        const { hits, feed } = watch(pattern, { prefilter });
        feed(`nothing here\n${line}\n`);
        assert.deepEqual(hits, [{ line, count: 1 }], `${pattern} on ${line}, prefilter ${prefilter}`);
      }
    }
  });

  it("has none where an alternative requires nothing or flags change midway", () => {
    for (const source of ["x*", "foo|", "a(?i)b", "(?i:err)", "[Ee]", ".+", "\\d{3}"])
      assert.equal(requiredText(source), undefined, source);
  });

  it("passes over lines only when every alternative misses a character in them, never the line a chunk continues", () => {
    const required = requiredText("(?i)error|fatal")!;
    assert.equal(mayHoldMatch(required, Buffer.from("xxxx\nyyyy\n")), false);
    assert.equal(mayHoldMatch(required, Buffer.from("xx ERR\nOR\n")), true, "every character of one alternative is there");
    const { hits, feed } = watch("(?i)error|fatal");
    feed("an e");
    feed("rror\nxxxx\n");
    assert.deepEqual(hits, [{ line: "an error", count: 1 }], "the line it continues holds an e");
    assert.equal(plainChunk(Buffer.from("plain\ttext\n")), true);
    assert.equal(plainChunk(Buffer.from("a\x1b[0mb")), false);
    assert.equal(plainChunk(Buffer.from("a\rb")), false);
    assert.equal(plainChunk(Buffer.from("é")), false);
  });
});

describe("wake_on_pattern's watch of a job's lines", () => {
  it("tests each complete line as the model reads it: escapes removed, a line split across chunks, controls dropped", () => {
    const { hits, feed } = watch("ERROR");
    feed("hello\nan ERR");
    assert.deepEqual(hits, []);
    feed("OR here\nxx\x1b[31mERROR\x1b[0m red\nERR\x00OR\n");
    assert.deepEqual(hits, [{ line: "an ERROR here", count: 3 }]);
  });

  it("reports a long line as a window of at most 300 characters around the match, … where cut", () => {
    const { hits, feed } = watch("ERROR");
    const line = `${"x".repeat(400)} ERROR disk full ${"y".repeat(20)}`;
    feed(`${line}\n`);
    const shown = hits[0]!.line;
    assert.ok(shown.length <= 300, `${shown.length} characters`);
    assert.match(shown, /^….* ERROR disk full y+$/, "the match is in the window, the cut start marked");
  });

  it("tests the unfinished last line once the job has been quiet for a second, and again only when it grows", () => {
    const { hits, feed, clock } = watch("Password:");
    feed("login ok\nPassword: ");
    clock.advance(500);
    assert.deepEqual(hits, [], "not before a second of quiet");
    clock.advance(600);
    assert.deepEqual(hits, [{ line: "Password: ", count: 1 }]);
    clock.advance(5_000);
    assert.equal(hits.length, 1, "once");
  });

  it("moves its quiet check on with the output instead of testing a line still being written", () => {
    const { hits, feed, clock } = watch("^done$");
    feed("do");
    clock.advance(900);
    feed("ne");
    clock.advance(900);
    assert.deepEqual(hits, [], "output 900 ms ago: not quiet yet");
    clock.advance(200);
    assert.deepEqual(hits, [{ line: "done", count: 1 }]);
  });

  it("skips the line it starts in the middle of, and lines printed while a call is attached", () => {
    const { w, hits, feed } = watch("ERROR", { midLine: true });
    feed("ERROR in the line it joined\nERROR one\n");
    assert.deepEqual(hits, [{ line: "ERROR one", count: 1 }]);
    w.suspend(true);
    feed("ERROR the call returns\nERROR half of a line the call ret");
    w.suspend(false);
    feed("urns\nERROR after\n");
    assert.deepEqual(hits, [
      { line: "ERROR one", count: 1 },
      { line: "ERROR after", count: 1 },
    ]);
  });

  it("passes a plain flood over and still finds the line that matches after it, split across chunks", () => {
    const { hits, feed } = watch("(?i)error|fatal");
    const flood = `${"x".repeat(99)}\n`.repeat(700);
    for (let i = 0; i < 50; i++) feed(flood);
    feed(`${"x".repeat(50)}Fat`);
    feed(`al thing\n${flood}`);
    assert.deepEqual(hits, [{ line: `${"x".repeat(50)}Fatal thing`, count: 1 }]);
  });

  it("finds exactly what a watch without the shortcut finds, for 300 seeded streams of plain, colored and redrawn chunks", () => {
    const random = prng(27);
    const pieces = [
      "xx",
      "ERR",
      "OR",
      "er",
      "ror",
      "fatal",
      "\n",
      "\n",
      "\x1b[31m",
      "\x1b[0m",
      "\r",
      "é",
      "\x00",
      " ",
      "abc",
      "\x1b]0;t\x07",
    ];
    for (let seed = 0; seed < 300; seed++) {
      for (const pattern of ["ERROR", "(?i)error|fatal", "er+or"]) {
        const fast = watch(pattern);
        const slow = watch(pattern, { prefilter: false });
        // The wake's watch and the reads' matcher fed out of one reused buffer, as a pipe's reads are;
        // and a matcher fed copies to compare with.
        const reused = watch(pattern);
        const reusedReads = new ReadMatches(compileUntilPattern(pattern));
        const ownReads = new ReadMatches(compileUntilPattern(pattern));
        const slot = Buffer.alloc(4096);
        let chunk = "";
        const chunks: string[] = [];
        const count = 5 + Math.floor(random() * 60);
        for (let i = 0; i < count; i++) {
          chunk += pieces[Math.floor(random() * pieces.length)];
          if (random() < 0.3) {
            chunks.push(chunk);
            chunk = "";
          }
        }
        chunks.push(chunk);
        for (const piece of chunks) {
          fast.feed(piece);
          slow.feed(piece);
          const bytes = slot.subarray(0, slot.write(piece, "utf8"));
          reusedReads.feed(bytes, 0);
          ownReads.feed(Buffer.from(piece), 0);
          reused.feed(bytes);
        }
        assert.deepEqual(fast.hits, slow.hits, `seed ${seed} pattern ${pattern}: ${JSON.stringify(chunks)}`);
        assert.deepEqual(reused.hits, slow.hits, `reused, seed ${seed} pattern ${pattern}: ${JSON.stringify(chunks)}`);
        assert.deepEqual(reusedReads.take(), ownReads.take(), `reused reads, seed ${seed} pattern ${pattern}`);
      }
    }
  });
  it("judges a line redrawn with CR as it finally shows, wherever the reads split it", () => {
    const text = "error: retrying\rok             \nDownloading 10%\rDownloading 50%\rDownloading 100%\r\nbar\x1b[K\r\x1b[2Kdone\n";
    const bytes = Buffer.from(text);
    for (let i = 0; i <= bytes.length; i++) {
      for (const j of [i, Math.min(bytes.length, i + 1), Math.min(bytes.length, i + 7)]) {
        const split = [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)];
        const count = (pattern: string) => {
          const { hits, feed } = watch(pattern);
          for (const piece of split) feed(piece);
          return hits.reduce((sum, hit) => sum + hit.count, 0);
        };
        const at = `split at ${i}, ${j}`;
        assert.equal(count("error|10%|50%|bar"), 0, `${at}: text drawn over never matches`);
        assert.equal(count("^Downloading 100%$"), 1, at);
        assert.equal(count("^ok +$"), 1, at);
        assert.equal(count("^done$"), 1, at);
      }
    }
  });

  it("matches, for 300 seeded streams cut at random bytes, exactly the lines a read of all of it shows", () => {
    const random = prng(2929);
    const pieces = [
      "xx",
      "ERR",
      "OR",
      "er",
      "ror",
      "\n",
      "\n",
      "\x1b[31m",
      "\x1b[K",
      "\x1b[1K",
      "\r",
      "\r\n",
      "é",
      "\x00",
      " ",
      "\x1b]0;t\x07",
      "\u202e",
    ];
    for (let seed = 0; seed < 300; seed++) {
      let text = "";
      const length = 5 + Math.floor(random() * 80);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(random() * pieces.length)];
      text += "\n";
      const bytes = Buffer.from(text);
      const cuts = [0];
      while (cuts[cuts.length - 1]! < bytes.length) cuts.push(cuts[cuts.length - 1]! + 1 + Math.floor(random() * 12));
      const lines = renderTerminalText(text).split("\n").slice(0, -1);
      for (const pattern of ["ERROR", "er+or", "^x", "<U\\+202E>", "^$"]) {
        const { hits, feed } = watch(pattern);
        for (let k = 1; k < cuts.length; k++) feed(bytes.subarray(cuts[k - 1], Math.min(bytes.length, cuts[k]!)));
        const re = new RegExp(pattern);
        const expected = lines.filter((line) => re.test(line)).length;
        const found = hits.reduce((sum, hit) => sum + hit.count, 0);
        assert.equal(found, expected, `seed ${seed}, ${pattern}: ${JSON.stringify(text)}`);
      }
    }
  });

  it("does not test a prompt again when its line ends as it was judged, and does when it changed meanwhile", () => {
    const { hits, feed, clock } = watch("\\[y/N\\]");
    feed("Continue? [y/N] ");
    clock.advance(1_100);
    assert.deepEqual(hits, [{ line: "Continue? [y/N] ", count: 1 }]);
    feed("\r\n");
    assert.equal(hits.length, 1, "the same line, ended: no second hit");
    feed("Really? [y/N] ");
    clock.advance(1_100);
    feed("(default N)\n");
    assert.deepEqual(hits.slice(1), [
      { line: "Really? [y/N] ", count: 1 },
      { line: "Really? [y/N] (default N)", count: 1 },
    ]);
  });

  it("tests what a call left unread once it lets go, from the first line start on", () => {
    const { w, hits, feed } = watch("ERROR");
    w.suspend(true);
    feed("Compiled\nERROR the call returned part of\nERROR in foo.ts\n");
    w.resume({ chunks: [Buffer.from("part of\nERROR in foo.ts\n")], atLineStart: false });
    assert.deepEqual(hits, [{ line: "ERROR in foo.ts", count: 1 }]);
    w.suspend(true);
    feed("ERROR left whole\n");
    w.resume({ chunks: [Buffer.from("ERROR left whole\n")], atLineStart: true });
    assert.deepEqual(hits.at(-1), { line: "ERROR left whole", count: 1 });
  });

  it("ignores what the job prints just after the user typed, then watches from the next line start", () => {
    const { w, hits, feed, clock } = watch("hunter2");
    w.suspend(true);
    feed("Password: ");
    w.suspend(false);
    w.ignoreFor(1_000, clock.now());
    feed("hunter2\nok hunter2 acc");
    clock.advance(1_200);
    assert.deepEqual(hits, [], "the reply to the typing, and the line it is in");
    feed("epted\nhunter2 later\n");
    assert.deepEqual(hits, [{ line: "hunter2 later", count: 1 }]);
  });

  it("says where the output of each hit ends in the job's stream, counting what a resumed watch is fed again", () => {
    const { w, ends, feed } = watch("ERROR");
    feed("ok\nERROR one\n"); // bytes 0–13
    assert.deepEqual(ends, [13]);
    w.suspend(true);
    feed("READY\nERROR two\n"); // bytes 13–29, read in part by a call
    w.resume({ chunks: [Buffer.from("ERROR two\n")], atLineStart: true, end: 29 });
    assert.deepEqual(ends, [13, 29]);
  });

  it("never tests again a line that ends where a wake announced output up to, but tests the lines after it", () => {
    let announced = 0;
    const { w, hits, feed } = watch("ERROR", { judgedThrough: () => announced });
    feed("READY\nERROR x\n"); // bytes 0–14: a wake names ERROR x
    assert.deepEqual(hits, [{ line: "ERROR x", count: 1 }]);
    announced = 14;
    w.suspend(true);
    feed("ERROR y\n"); // bytes 14–22, printed while a call read only READY
    w.resume({ chunks: [Buffer.from("ERROR x\nERROR y\n")], atLineStart: true, end: 22 });
    assert.deepEqual(
      hits,
      [
        { line: "ERROR x", count: 1 },
        { line: "ERROR y", count: 1 },
      ],
      "ERROR x once; ERROR y is news",
    );
  });

  it("a line a wake announced at a silence, still unfinished, is not tested again when a call left it unread", () => {
    let announced = 0;
    const { w, hits, feed, clock } = watch("Password:", { judgedThrough: () => announced });
    feed("Password: ");
    clock.advance(1_100);
    assert.deepEqual(hits, [{ line: "Password: ", count: 1 }]);
    announced = 10;
    w.suspend(true);
    w.resume({ chunks: [Buffer.from("Password: ")], atLineStart: true, end: 10 });
    feed("\n");
    assert.equal(hits.length, 1);
  });
});
