/**
 * pi-unified-exec: Codex's unified exec for Pi. This file only wires the pieces together; the job
 * runtime lives in `core/` (no Pi imports) and the Pi-facing layer in `pi/`.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { hostShellSettings } from "./pi/host-settings.ts";
import { registerLifecycle } from "./pi/lifecycle.ts";
import { RuntimeSlot } from "./pi/runtime-slot.ts";
import { execCommandTool } from "./pi/tools/exec-command.ts";
import { killSessionTool } from "./pi/tools/kill-session.ts";
import { listSessionsTool } from "./pi/tools/list-sessions.ts";
import { writeStdinTool } from "./pi/tools/write-stdin.ts";

export default function piUnifiedExec(pi: ExtensionAPI): void {
  const runtime = new RuntimeSlot();
  pi.registerTool(execCommandTool(runtime, () => hostShellSettings(pi)));
  pi.registerTool(writeStdinTool(runtime));
  pi.registerTool(killSessionTool(runtime));
  pi.registerTool(listSessionsTool(runtime));
  registerLifecycle(pi, runtime);
}
