/**
 * Whether PTY tests can run. Without the PTY module they are skipped with the reason shown, except
 * under EXPECT_PTY=1 (CI on platforms that ship the prebuild): then they run and fail, so PTY coverage
 * can never disappear silently.
 */
import { loadPtyModule } from "../../src/core/transport/pty.ts";

function loadError(): string | undefined {
  try {
    loadPtyModule();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export const PTY_LOAD_ERROR = loadError();

/** The `skip` option for a PTY test: false (run it) or the reason it cannot run here. */
export const SKIP_WITHOUT_PTY: string | false =
  PTY_LOAD_ERROR && process.env.EXPECT_PTY !== "1" ? `no PTY module: ${PTY_LOAD_ERROR}` : false;
