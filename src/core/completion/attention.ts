/**
 * How loud a job's notices may be (SPEC §3f): the level the model set (`wake` starts a turn,
 * `next_turn` rides with the next one), and the budget of turns notices may start per Pi session,
 * past which pattern, input and deaf-server notices wait for the next turn. Pure of jobs and Pi.
 */
import { WAKE_TURNS_ENV } from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";

/** How a notice reaches the model: a turn of its own, or with the next turn whoever starts it. */
export type NoticeLevel = "wake" | "next_turn";

/** A notice's level at a decision: `held` is a `wake` the turn budget turned into `next_turn`. */
export type DecidedLevel = NoticeLevel | "held";

/** Turns notices may start per {@link WAKE_TURNS_WINDOW_MS} unless `PI_UNIFIED_EXEC_WAKE_TURNS` says otherwise (`0`: no limit). */
const WAKE_TURNS = 6;
const WAKE_TURNS_WINDOW_MS = 10 * 60_000;

/** The person's `PI_UNIFIED_EXEC_WAKE_TURNS`: a whole number (`0` no limit), anything else the default. */
export function wakeTurnsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WAKE_TURNS_ENV]?.trim();
  if (raw === "0") return 0;
  return wholeNumber(raw) ?? WAKE_TURNS;
}

/**
 * The turns notices started in the last ten minutes, and whether another may start one. A sliding
 * window: each turn counts for ten minutes from when it was started.
 */
export class TurnBudget {
  private readonly started: number[] = [];

  constructor(
    private readonly now: () => number,
    /** Turns per window; 0 is no limit. */
    readonly turns: number = wakeTurnsFromEnv(),
  ) {}

  /** A notice may start a turn now. */
  get open(): boolean {
    if (this.turns === 0) return true;
    const since = this.now() - WAKE_TURNS_WINDOW_MS;
    while (this.started.length > 0 && this.started[0]! <= since) this.started.shift();
    return this.started.length < this.turns;
  }

  /** A notice started a turn now. */
  spend(): void {
    if (this.turns > 0) this.started.push(this.now());
  }

  /**
   * The level a pattern, input or deaf-server notice of `level` goes out at now: a `wake` the budget
   * cannot pay is `held`. No level given (a job with only a pattern armed, for a notice that follows
   * the exit's level): `wake`.
   */
  decide(level: NoticeLevel = "wake"): DecidedLevel {
    return level === "wake" && !this.open ? "held" : level;
  }
}
