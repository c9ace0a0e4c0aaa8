/**
 * Seeded fuzzing of the output path: random byte streams, rich in escape introducers, terminators,
 * C1 controls, CRs, invisible characters and broken UTF-8, fed to an OutputDecoder whole and split
 * across reads at random points. Checks: no control character ever comes out, every stream is done
 * in bounded time, and (for streams without a lone CR, whose redraw may straddle reads, and without
 * retention gaps) the text does not depend on where the reads were split. A failure names its seed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import { renderTerminalText } from "../../../src/core/output/terminal-text.ts";
import { CONTROL_CHARACTER, fuzzStream, prng } from "../../helpers/hostile-output.ts";

const CASES = 3_000;

/** The stream through one decoder in reads ending at `cuts`; the last read is final. */
function decode(bytes: Buffer, cuts: number[]): string {
  const decoder = new OutputDecoder();
  let text = "";
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    text += decoder.take({ head: bytes.subarray(from, cut), tail: Buffer.alloc(0), omittedBytes: 0 }, cut === bytes.length).text;
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
      const bytewise =
        bytes.length <= 400
          ? decode(
              bytes,
              Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
            )
          : whole;
      assert.ok(bytewise === whole, `seed ${1_000_000 + seed}, one byte per read:\n whole ${show(whole)}\n split ${show(bytewise)}`);
      assert.ok(!CONTROL_CHARACTER.test(whole), `seed ${1_000_000 + seed}: ${show(whole)}`);
    }
  });

  it(`${CASES} random redraws agree with a plain cell-by-cell model of a terminal line`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const random = prng(2_000_000 + seed);
      const tokens = Array.from(
        { length: 1 + Math.floor(random() * 60) },
        () => REDRAW_TOKENS[Math.floor(random() * REDRAW_TOKENS.length)]!,
      );
      const text = tokens.join("");
      const expected = referenceRender(tokens);
      const actual = renderTerminalText(text);
      assert.ok(
        actual === expected,
        `seed ${2_000_000 + seed}: ${JSON.stringify(text)}\n expected ${JSON.stringify(expected)}\n actual   ${JSON.stringify(actual)}`,
      );
    }
  });
});

/** Tokens whose meaning is unambiguous: characters (one astral), line ends, erases, a colour, a bidi override. */
const REDRAW_TOKENS = [
  "a",
  "b",
  "c",
  "é",
  "😀",
  " ",
  "\r",
  "\r",
  "\n",
  "\r\n",
  "\x1b[K",
  "\x1b[0K",
  "\x1b[1K",
  "\x1b[2K",
  "\x1b[31m",
  "\u202e",
];

/**
 * The redraw rules done the obvious way, one cell at a time (quadratic, fine for a few tokens): a
 * line is appended to until a lone CR; from then on the cursor overwrites cells, erases blank them at
 * once, and the line ends at LF with erased cells as spaces and the erased end left out.
 */
function referenceRender(tokens: string[]): string {
  let out = "";
  let line: (string | null)[] = [];
  let redraw = false;
  let col = 0;
  const put = (char: string) => {
    if (!redraw) {
      line.push(char);
      return;
    }
    line[col++] = char;
  };
  const endLine = () => {
    let end = line.length;
    while (end > 0 && line[end - 1] === null) end--;
    out += line
      .slice(0, end)
      .map((cell) => cell ?? " ")
      .join("");
    line = [];
    redraw = false;
    col = 0;
  };
  tokens.forEach((token, i) => {
    if (token === "\n" || token === "\r\n") {
      endLine();
      out += "\n";
    } else if (token === "\r") {
      const next = tokens[i + 1];
      if (next === undefined || next.startsWith("\n")) return; // CR before LF (or at the end) changes nothing
      redraw = true;
      col = 0;
    } else if (token.startsWith("\x1b[") && token.endsWith("K")) {
      if (!redraw) return;
      const mode = token.length === 3 ? 0 : Number(token[2]);
      for (let j = 0; j < line.length; j++) if (mode === 2 || (mode === 0 && j >= col) || (mode === 1 && j <= col)) line[j] = null;
    } else if (token === "\x1b[31m") {
      // a colour: nothing to show
    } else if (token === "\u202e") {
      for (const char of "<U+202E>") put(char);
    } else put(token);
  });
  endLine();
  return out;
}
