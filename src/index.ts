/**
 * pi-unified-exec: Codex's unified exec for Pi. This file only wires the pieces together; the job
 * runtime lives in `core/` (no Pi imports) and the Pi-facing layer in `pi/`.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { hostShellSettings } from "./pi/host-settings.ts";
import { JobsUi } from "./pi/jobs-ui.ts";
import { registerLifecycle } from "./pi/lifecycle.ts";
import { SessionRuntimes } from "./pi/session-runtimes.ts";
import { registerSessionsCommand } from "./pi/sessions-command.ts";
import { execCommandTool } from "./pi/tools/exec-command.ts";
import { killSessionTool } from "./pi/tools/kill-session.ts";
import { listSessionsTool } from "./pi/tools/list-sessions.ts";
import { setOnExitTool } from "./pi/tools/set-on-exit.ts";
import { writeStdinTool } from "./pi/tools/write-stdin.ts";
import { registerWakeRenderer } from "./pi/wake-message.ts";

export default function piUnifiedExec(pi: ExtensionAPI): void {
  const runtimes = new SessionRuntimes();
  const ui = new JobsUi();
  pi.registerTool(execCommandTool(runtimes, () => hostShellSettings(pi)));
  pi.registerTool(writeStdinTool(runtimes));
  pi.registerTool(killSessionTool(runtimes));
  pi.registerTool(listSessionsTool(runtimes));
  pi.registerTool(setOnExitTool(runtimes));
  registerSessionsCommand(pi, runtimes);
  registerWakeRenderer(pi);
  registerLifecycle(pi, { runtimes, ui });
}
