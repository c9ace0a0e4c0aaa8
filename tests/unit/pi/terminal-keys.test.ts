import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { terminalBytes } from "../../../src/pi/tui/terminal-keys.ts";

const plain = { applicationCursor: false, bracketedPaste: false };

describe("keys typed into a job, as a classic terminal sends them", () => {
  it("passes plain text, control bytes and legacy sequences through unchanged", () => {
    for (const data of ["a", "é", "\r", "\x03", "\x04", "\x1b", "\x7f", "\x1b[A", "\x1bx", "\x1b[1;5C"]) {
      assert.equal(terminalBytes(data, plain), data, JSON.stringify(data));
    }
  });

  it("turns the kitty keyboard protocol back into bytes: Ctrl+letters, Alt, Shift, Enter, Tab, Esc, keypad", () => {
    const cases: [string, string][] = [
      ["\x1b[99;5u", "\x03"],
      ["\x1b[100;5u", "\x04"],
      ["\x1b[122;5u", "\x1a"],
      ["\x1b[27u", "\x1b"],
      ["\x1b[13;2u", "\r"],
      ["\x1b[9;2u", "\x1b[Z"],
      ["\x1b[120;3u", "\x1bx"],
      ["\x1b[97:65;2u", "A"],
      ["\x1b[93;5u", "\x1d"],
      ["\x1b[127;5u", "\x08"],
      ["\x1b[57401u", "2"],
      ["\x1b[99;69u", "\x03"], // Caps Lock on: still Ctrl+C
    ];
    for (const [data, bytes] of cases) assert.equal(terminalBytes(data, plain), bytes, JSON.stringify(data));
  });

  it("sends nothing for a key release or a modifier alone", () => {
    assert.equal(terminalBytes("\x1b[99;5:3u", plain), undefined);
    assert.equal(terminalBytes("\x1b[1;1:3A", plain), undefined);
    assert.equal(terminalBytes("\x1b[57441u", plain), undefined);
  });

  it("reads xterm's modifyOtherKeys and key repeats", () => {
    assert.equal(terminalBytes("\x1b[27;5;99~", plain), "\x03");
    assert.equal(terminalBytes("\x1b[1;1:2A", plain), "\x1b[A");
    assert.equal(terminalBytes("\x1b[3;1:2~", plain), "\x1b[3~");
    assert.equal(terminalBytes("\x1b[3;5~", plain), "\x1b[3;5~");
  });

  it("sends cursor keys in the program's cursor-key mode", () => {
    const app = { ...plain, applicationCursor: true };
    assert.equal(terminalBytes("\x1b[A", app), "\x1bOA");
    assert.equal(terminalBytes("\x1b[1;1:2D", app), "\x1bOD");
    assert.equal(terminalBytes("\x1b[1;5A", app), "\x1b[1;5A", "a modified key keeps its CSI form");
  });

  it("brackets a paste only when the program asked for it; otherwise its line breaks are Enter", () => {
    const paste = "\x1b[200~line one\nline two\x1b[201~";
    assert.equal(terminalBytes(paste, plain), "line one\rline two");
    assert.equal(terminalBytes(paste, { ...plain, bracketedPaste: true }), paste);
  });
});
