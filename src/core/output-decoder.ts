import { omissionMarker, type RetainedOutput } from "./head-tail-buffer.ts";
import { TerminalText } from "./terminal-text.ts";

/** Bytes 0x80–0xBF continue a UTF-8 character; a tail cut by retention may start with some. */
export function continuationPrefix(bytes: Buffer): number {
  let n = 0;
  while (n < bytes.length && n < 3 && (bytes[n]! & 0xc0) === 0x80) n++;
  return n;
}

/**
 * Turns a job's output bytes into model text, one read at a time, as if the reads were one stream:
 * a UTF-8 character or a control sequence split between two reads comes out whole in the later one.
 * Where retention dropped the middle, the omission marker stands in the gap (the character cut there
 * is lost, not mangled). The text is then reduced to what a terminal would show.
 */
export class OutputDecoder {
  private utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  /** Terminal rendering, with the start of a control sequence the previous read ended in. */
  private readonly terminal = new TerminalText();

  /** Text of `output`; `final` when the job has ended and nothing more will follow. */
  take(output: RetainedOutput, final: boolean): string {
    let text: string;
    if (output.omittedBytes === 0) {
      text = this.decode(output.tail.length ? Buffer.concat([output.head, output.tail]) : output.head, final);
    } else {
      const head = this.utf8.decode(output.head); // no stream: the gap ends whatever the head left open
      const tail = output.tail.subarray(continuationPrefix(output.tail));
      text = `${head}${omissionMarker(output.omittedBytes)}${this.decode(tail, final)}`;
    }
    return this.terminal.write(text, final);
  }

  private decode(bytes: Buffer, final: boolean): string {
    return this.utf8.decode(bytes, { stream: !final });
  }
}
