/**
 * Guidance just in time: a short line in the result of the call that needs it, given once per job or
 * once per session, instead of a rule every request carries in the system prompt. The model reads a
 * result more closely than the twentieth rule of a prompt, and pays for the line only when it matters.
 *
 * A concern adds a {@link HintRule} (its own file says when and what) to the list the tools use
 * (`job-hints.ts`); this file only keeps the record of what was given. Hints are model guidance, never
 * data: they go into a result's text (`hint:`) and `details`, not `structuredContent`.
 */
import type { JobReport } from "../../core/index.ts";

/** What a rule sees of one `exec_command` or `write_stdin` call. */
export interface HintFacts {
  report: JobReport;
  /** Plain polls in a row on this job, this call included: 0 unless this call is one (see {@link CallShape.plainPoll}). */
  plainPollsInARow: number;
}

export interface HintRule {
  /** Names the hint in the record of what was given. */
  id: string;
  /** `job`: at most once per job; `session`: at most once per session. */
  once: "job" | "session";
  applies: (facts: HintFacts) => boolean;
  /** One short line, written for the model. */
  text: string;
}

/** What the tool knows of its call beside the report. */
export interface CallShape {
  /** A `write_stdin` with no input, no condition, no absolute wait and no `ask_user`. */
  plainPoll: boolean;
}

/** One session's record: which hints were given (per job or for the session) and each job's run of plain polls. */
export class HintLedger {
  private readonly given = new Set<string>();
  private readonly polls = new Map<number, number>();

  /** The hints of `rules` this call earns and was not given before in their scope, as one line; they count as given. */
  take(rules: readonly HintRule[], report: JobReport, call: CallShape): string | undefined {
    const jobId = report.job.jobId;
    const run = call.plainPoll ? (this.polls.get(jobId) ?? 0) + 1 : 0;
    if (report.job.exit) this.polls.delete(jobId);
    else this.polls.set(jobId, run);
    const facts: HintFacts = { report, plainPollsInARow: run };
    const texts: string[] = [];
    for (const rule of rules) {
      const key = rule.once === "job" ? `${rule.id}:${jobId}` : rule.id;
      if (this.given.has(key) || !rule.applies(facts)) continue;
      this.given.add(key);
      texts.push(rule.text);
    }
    return texts.length > 0 ? texts.join("; ") : undefined;
  }
}

/** Ledgers by session runtime: the runtime outlives `/reload`, so a session is told once per extension instance. */
const ledgers = new WeakMap<object, HintLedger>();

/** The ledger of the session whose runtime is `owner`. */
export function hintLedger(owner: object): HintLedger {
  let ledger = ledgers.get(owner);
  if (!ledger) {
    ledger = new HintLedger();
    ledgers.set(owner, ledger);
  }
  return ledger;
}
