import { tmpdir } from "node:os";
import {
  JOB_LOG_QUOTA_BYTES,
  JOB_LOG_QUOTA_ENV,
  LOG_DIR_ENV,
  ON_LOG_QUOTA_ENV,
  RUNTIME_LOG_QUOTA_BYTES,
  RUNTIME_LOG_QUOTA_ENV,
} from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";

/** The runtime's settings that the environment may change. */
export interface LogConfig {
  /** Where the private log directory is created. */
  parent: string;
  jobQuotaBytes: number;
  runtimeQuotaBytes: number;
  /** At a quota: keep the job running with a partial log, or stop it. */
  onQuota: "partial" | "stop";
  /** Bytes exit tails may add beyond the runtime quota; {@link LOG_TAIL_BUDGET_BYTES} unless a test sets it. */
  tailBudgetBytes?: number;
}

/** A positive integer from the environment, or the default (a typo must not lift a limit). */
function positiveInteger(raw: string | undefined, fallback: number): number {
  return wholeNumber(raw) ?? fallback;
}

export function logConfig(env: NodeJS.ProcessEnv = process.env): LogConfig {
  return {
    parent: env[LOG_DIR_ENV] || tmpdir(),
    jobQuotaBytes: positiveInteger(env[JOB_LOG_QUOTA_ENV], JOB_LOG_QUOTA_BYTES),
    runtimeQuotaBytes: positiveInteger(env[RUNTIME_LOG_QUOTA_ENV], RUNTIME_LOG_QUOTA_BYTES),
    onQuota: env[ON_LOG_QUOTA_ENV]?.trim().toLowerCase() === "stop" ? "stop" : "partial",
  };
}
