/**
 * Terminal control stripping for text shown to the model or drawn in the UI. It works on decoded code
 * points, never on raw bytes: a byte-level filter would cut a UTF-8 character whose continuation byte
 * falls in the C1 range (0x80–0x9F). The raw bytes are left untouched elsewhere.
 */

const ESC = 0x1b;
const BEL = 0x07;
const TAB = 0x09;
const LF = 0x0a;
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
const C1_PM = 0x9e;
const C1_APC = 0x9f;

function isControl(code: number): boolean {
  return (code < 0x20 && code !== TAB && code !== LF) || (code >= 0x7f && code <= 0x9f);
}

/** End (exclusive) of a CSI whose parameters start at `i`, or -1 when malformed or cut short. */
function csiEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c >= 0x40 && c <= 0x7e) return j + 1; // final byte
    if (c < 0x20 || c > 0x3f) return -1; // not a parameter or intermediate byte
    j++;
  }
  return -1;
}

/**
 * End (exclusive) of a control string (OSC, DCS, SOS, PM, APC) whose body starts at `i`: up to the
 * String Terminator (ESC \ or 0x9C), or BEL for OSC as xterm accepts. -1 when unterminated.
 */
function stringEnd(text: string, i: number, allowBel: boolean): number {
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === C1_ST || (allowBel && c === BEL)) return j + 1;
    if (c === ESC && text.charCodeAt(j + 1) === 0x5c) return j + 2;
  }
  return -1;
}

/**
 * Length of the control sequence at `i` (which holds ESC or a C1 introducer), or 0 when it is just a
 * lone control character. Malformed or unterminated sequences count only their introducer, so a stray
 * ESC in output never swallows the text after it.
 */
function sequenceLength(text: string, i: number): number {
  const c = text.charCodeAt(i);
  let kind: "csi" | "osc" | "string" | undefined;
  let bodyStart = i + 1;
  if (c === ESC) {
    const next = text.charCodeAt(i + 1);
    bodyStart = i + 2;
    if (next === 0x5b) kind = "csi"; // [
    else if (next === 0x5d) kind = "osc"; // ]
    else if (next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f) kind = "string"; // P X ^ _
    else if (next >= 0x20 && next <= 0x2f) {
      // nF escape: intermediates, then one final byte (e.g. ESC ( B selects a charset).
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
      const final = text.charCodeAt(j);
      return final >= 0x30 && final <= 0x7e ? j + 1 - i : j - i;
    } else if (next >= 0x30 && next <= 0x7e) return 2; // two-character escape (ESC 7, ESC =, ESC c)
    else return 1;
  } else if (c === C1_CSI) kind = "csi";
  else if (c === C1_OSC) kind = "osc";
  else if (c === C1_DCS || c === C1_SOS || c === C1_PM || c === C1_APC) kind = "string";
  else return 0;

  const end = kind === "csi" ? csiEnd(text, bodyStart) : stringEnd(text, bodyStart, kind === "osc");
  return end === -1 ? bodyStart - i : end - i;
}

/**
 * Removes terminal control sequences (CSI, OSC, DCS and the other control strings, plain escapes) and
 * every C0/C1 control character except TAB and LF. CR goes too, which turns CRLF line ends into LF.
 */
export function stripControlSequences(text: string): string {
  let out = "";
  let copyFrom = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (!isControl(c)) {
      i++;
      continue;
    }
    out += text.slice(copyFrom, i);
    i += Math.max(1, sequenceLength(text, i));
    copyFrom = i;
  }
  return copyFrom === 0 ? text : out + text.slice(copyFrom);
}
