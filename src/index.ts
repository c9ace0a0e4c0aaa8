/*
 * pi-unified-exec: Codex's unified exec for Pi. The job runtime lives in `core/` (no Pi imports), the
 * Pi-facing layer in `pi/`; this file only wires them. The flow at a glance:
 * 1. A tool call (`pi/tools/`: schema, raw checks) gets its session's runtime (`pi/session-runtimes.ts`)
 *    and asks the core; the core's snapshot becomes the text, `structuredContent` and `details`
 *    (`pi/results/`), which the rows draw (`pi/tui/`).
 * 2. What a job tells the model while nobody watches it leaves the core's one decision point as a wake
 *    (`pi/wake-message.ts`: a message that starts or joins a turn) or rides with the next turn.
 * 3. Pi's events (`pi/lifecycle.ts`) bind the session, park the runtime across `/reload` and stop it
 *    at a session boundary; `/unified-exec-sessions` is the person's view (`pi/tui/`).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerCompactionNote } from "./pi/compaction-note.ts";
import { hostShellSettings } from "./pi/host-settings.ts";
import { registerLifecycle } from "./pi/lifecycle.ts";
import { ResultFormatSetting, registerFormatNotice } from "./pi/result-format.ts";
import { SessionRuntimes } from "./pi/session-runtimes.ts";
import { execCommandTool } from "./pi/tools/exec-command.ts";
import { killSessionTool } from "./pi/tools/kill-session.ts";
import { listSessionsTool } from "./pi/tools/list-sessions.ts";
import { setOnExitTool } from "./pi/tools/set-on-exit.ts";
import { writeStdinTool } from "./pi/tools/write-stdin.ts";
import { JobsUi } from "./pi/tui/jobs-ui.ts";
import { registerSessionsCommand } from "./pi/tui/sessions-command.ts";
import { registerWakeRenderer } from "./pi/wake-message.ts";

export default function piUnifiedExec(pi: ExtensionAPI): void {
  const runtimes = new SessionRuntimes();
  const ui = new JobsUi();
  // Read once, at activation: every result of this instance reads the same way.
  const format = new ResultFormatSetting(process.env);
  pi.registerTool(execCommandTool(runtimes, () => hostShellSettings(pi), format));
  pi.registerTool(writeStdinTool(runtimes, format));
  pi.registerTool(killSessionTool(runtimes));
  pi.registerTool(listSessionsTool(runtimes));
  pi.registerTool(setOnExitTool(runtimes));
  registerSessionsCommand(pi, runtimes);
  registerWakeRenderer(pi);
  registerFormatNotice(pi, format);
  registerLifecycle(pi, { runtimes, ui });
  registerCompactionNote(pi, runtimes);
}
