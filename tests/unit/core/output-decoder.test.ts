import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { omissionMarker } from "../../../src/core/output/head-tail-buffer.ts";
import { OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import { renderTerminalText } from "../../../src/core/output/terminal-text.ts";

const read = (head: Buffer | string, tail: Buffer | string = "", omittedBytes = 0) => ({
  head: Buffer.from(head),
  tail: Buffer.from(tail),
  omittedBytes,
});

describe("OutputDecoder", () => {
  it("keeps a UTF-8 character split across two reads whole", () => {
    const decoder = new OutputDecoder();
    const euro = Buffer.from("€");
    assert.equal(decoder.take(read(Buffer.concat([Buffer.from("price: "), euro.subarray(0, 2)])), false).text, "price: ");
    assert.equal(decoder.take(read(Buffer.concat([euro.subarray(2), Buffer.from("5\n")])), false).text, "€5\n");
  });

  it("flushes an incomplete character when the job has ended", () => {
    const decoder = new OutputDecoder();
    assert.equal(decoder.take(read(Buffer.from([0x61, 0xe2, 0x82])), true).text, "a\uFFFD");
  });

  it("holds a control sequence split across two reads and strips it whole", () => {
    const decoder = new OutputDecoder();
    assert.equal(decoder.take(read("plain \x1b[3"), false).text, "plain ");
    assert.equal(decoder.take(read("1mred\x1b[0m\n"), false).text, "red\n");
    assert.equal(decoder.take(read("title \x1b]0;my tit"), false).text, "title ");
    assert.equal(decoder.take(read("le\x07done\n"), false).text, "done\n");
  });

  it("does not hold a complete sequence at the end of a read", () => {
    const decoder = new OutputDecoder();
    assert.equal(decoder.take(read("a\x1b[0m"), false).text, "a");
    assert.equal(decoder.take(read("b"), false).text, "b");
  });

  it("splices the marker at a retention gap and drops the character cut there", () => {
    const decoder = new OutputDecoder();
    const euro = Buffer.from("€");
    const text = decoder.take(
      read(Buffer.concat([Buffer.from("start"), euro.subarray(0, 1)]), Buffer.concat([euro.subarray(1), Buffer.from("end\n")]), 1000),
      false,
    ).text;
    assert.equal(text, `start\uFFFD${omissionMarker(1000)}end\n`);
  });
});

describe("renderTerminalText", () => {
  it("reduces a progress bar redrawn with CR to its final state", () => {
    let bar = "";
    for (let i = 0; i <= 100; i += 10) bar += `\rprogress ${i}%`;
    assert.equal(renderTerminalText(`${bar}\ndone\n`), "progress 100%\ndone\n");
  });

  it("overwrites like a terminal: a shorter redraw leaves the rest of the old line", () => {
    assert.equal(renderTerminalText("abcdef\rXY\n"), "XYcdef\n");
  });

  it("honours erase-in-line after a CR", () => {
    assert.equal(renderTerminalText("100%\r\x1b[K50%\n"), "50%\n");
    assert.equal(renderTerminalText("long old line\r\x1b[2Knew\n"), "new\n");
  });

  it("turns CRLF into LF and keeps lines without CR as they are", () => {
    assert.equal(renderTerminalText("a\r\nb\r\n"), "a\nb\n");
    assert.equal(renderTerminalText("\x1b[32mok\x1b[0m\n"), "ok\n");
  });

  it("keeps wide characters whole while overwriting", () => {
    assert.equal(renderTerminalText("⠋ load\r⠙ load\n"), "⠙ load\n");
    assert.equal(renderTerminalText("😀😀\r🙂\n"), "🙂😀\n");
  });
});
