import { type ListenReader, ListenWatch } from "../conditions/listen-watch.ts";
import type { UntilSpec } from "../conditions/until-conditions.ts";
import type { ConditionEnd, Job } from "./job.ts";

/** One call's conditional wait: the output conditions the job watches, and the socket check beside them. */
export interface UntilWatch {
  /** Resolves with the first condition met. */
  met: Promise<ConditionEnd>;
  /** After the call wrote to a PTY: its echo never matches. */
  wrote(text: string): void;
  /** The line `until_pattern` matched, when that ended the wait. */
  matchedLine(): string | undefined;
  /** What the check `until_listening` ended on read: the result shows it (and, for a URL, the answer's status). */
  listening(): string[] | undefined;
  httpStatus(): number | undefined;
  /** The wait ended: no more socket checks (the output side ends with the read, see `stepJob`). */
  stop(): void;
}

/**
 * Starts a call's conditional wait on `job`: `until_pattern` and `until_quiet_ms` on what it prints
 * (through the job's output), `until_listening` on its sockets (read by `readListening`, one scan of
 * this job, at most every check interval), whichever comes first.
 */
export function watchUntil(job: Job, spec: UntilSpec, readListening: ListenReader | undefined): UntilWatch {
  const output = spec.pattern || spec.quietMs !== undefined ? job.watchUntil(spec) : undefined;
  let listen: ListenWatch | undefined;
  const met = new Promise<ConditionEnd>((resolve) => {
    void output?.met.then(resolve);
    if (spec.listening && readListening) listen = new ListenWatch(spec.listening, readListening, () => resolve("listening"));
  });
  listen?.start();
  return {
    met,
    wrote: (text) => output?.wrote(text),
    matchedLine: () => output?.matchedLine(),
    listening: () => (listen?.listening ? [...listen.listening] : undefined),
    httpStatus: () => listen?.status,
    stop: () => listen?.stop(),
  };
}
