/**
 * Errors the runtime raises for the caller to act on. Each message says what was wrong and what to do;
 * the Pi layer passes it to the model unchanged.
 */

/** A request was refused before anything was spawned or any job was touched. */
export class ExecRequestError extends Error {
  override readonly name = "ExecRequestError";
}

/** A wait was refused; carries the host clock so the model can compute a new deadline. */
export class WaitRequestError extends ExecRequestError {
  constructor(
    message: string,
    readonly toolTimeUtc: string = new Date().toISOString(),
  ) {
    super(`${message}\ntool_time_utc: ${toolTimeUtc}`);
  }
}

/** The id names no job: it never existed, or its exit was already reported. (The model calls it a session id.) */
export class UnknownJobError extends ExecRequestError {
  constructor(readonly jobId: number) {
    super(
      `Unknown session_id ${jobId}: no running job has this id (it never existed, or its exit was already reported). ` +
        "Start a new command with exec_command.",
    );
  }
}
