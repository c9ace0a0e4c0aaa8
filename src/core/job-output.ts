import { PREVIEW_BYTES } from "./constants.ts";
import { HeadTailBuffer } from "./head-tail-buffer.ts";
import { continuationPrefix, OutputDecoder } from "./output-decoder.ts";

/** Output of one read: model text since the previous read, and the bytes retention dropped. */
export interface OutputDelta {
  text: string;
  omittedBytes: number;
}

/**
 * What a job printed, as the model and the UI read it: the bytes retained since the previous read
 * (bounded head and tail), the streaming decoder that turns them into text across reads, a separate
 * tail for the UI's live preview (watching never drains what the model reads), and the counters
 * every report carries. The log is the job's; this holds only what reads need.
 */
export class JobOutput {
  private readonly retained = new HeadTailBuffer();
  private readonly decoder = new OutputDecoder();
  private readonly preview = new HeadTailBuffer(PREVIEW_BYTES, 0);
  private total = 0;
  private lastChunkMono: number | undefined;

  constructor(private readonly startedMono: number) {}

  /** Every byte since spawn, including bytes retention dropped. */
  get bytesTotal(): number {
    return this.total;
  }

  push(chunk: Buffer, nowMono: number = performance.now()): void {
    this.total += chunk.length;
    this.lastChunkMono = nowMono;
    this.retained.push(chunk);
    this.preview.push(chunk);
  }

  /** Milliseconds since the last byte (since spawn when there was none). */
  quietMs(nowMono: number = performance.now()): number {
    return Math.max(0, Math.round(nowMono - (this.lastChunkMono ?? this.startedMono)));
  }

  /** Model text of what was retained since the previous read; `final` once nothing more will follow. */
  take(final: boolean): OutputDelta {
    const retained = this.retained.drain();
    return { text: this.decoder.take(retained, final), omittedBytes: retained.omittedBytes };
  }

  /**
   * The latest output for a live preview: at most the last {@link PREVIEW_BYTES}, and only what
   * arrived after byte `sinceTotal` of the stream (so a call previews its own output). Terminal
   * controls are stripped; it drains nothing.
   */
  previewText(sinceTotal = 0): string {
    const want = Math.min(PREVIEW_BYTES, this.total - sinceTotal);
    if (want <= 0) return "";
    const { tail } = this.preview.snapshot();
    const bytes = tail.subarray(Math.max(0, tail.length - want));
    return new OutputDecoder().take({ head: Buffer.alloc(0), tail: bytes.subarray(continuationPrefix(bytes)), omittedBytes: 0 }, true);
  }
}
