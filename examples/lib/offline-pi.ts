/**
 * Shared by the examples: Pi's SDK in this process, offline, with pi-ai's faux provider standing in
 * for the model and this extension loaded from the checkout. Each example scripts the "model" in the
 * step language of model-script.ts (the one the tests and the demo use), runs a prompt, and prints
 * every tool call with the text the model would see. `close()` ends the session as Pi does when it
 * quits: every job still running (a server the model left up) is stopped, so the program exits.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as piSdk from "@earendil-works/pi-coding-agent";
import { type Script, say, scriptedFaux, viewOf } from "./model-script.ts";

/** Pi's SDK module; the tests pass each Pi version's own. */
export type PiSdk = typeof piSdk;

const EXTENSION = fileURLToPath(new URL("../../src/index.ts", import.meta.url));

export interface ToolCallSeen {
  name: string;
  args: Record<string, unknown>;
  text: string;
  details: Record<string, unknown>;
}

export interface OfflinePi {
  /** Every finished tool call, in order. */
  calls: ToolCallSeen[];
  /** Completion wakes the extension sent (custom messages). */
  wakes: string[];
  /** Runs one prompt; the model answers every step of its turn with `script`. */
  prompt(text: string, script: Script): Promise<void>;
  /** What the model says when a wake starts a turn (default: "Noted."). */
  answerWakes(script: Script): void;
  /** Resolves when `count` wakes arrived and their turns ended. */
  settledAfterWakes(count: number, timeoutMs?: number): Promise<void>;
  /**
   * Ends the session as Pi's quit does (`session_shutdown`): every job still running is stopped, its
   * whole process group, before this resolves. Throws if one could not be stopped.
   */
  close(): Promise<void>;
}

export interface OfflinePiOptions {
  /** The SDK to use (default: the installed `@earendil-works/pi-coding-agent`). */
  sdk?: PiSdk;
  /** Print nothing (tests). */
  quiet?: boolean;
}

export async function offlinePi(options: OfflinePiOptions = {}): Promise<OfflinePi> {
  const { createAgentSession, DefaultResourceLoader, SessionManager, SettingsManager } = options.sdk ?? piSdk;
  const log = options.quiet ? () => {} : (text: string) => console.log(text);
  const root = mkdtempSync(join(tmpdir(), "piue-example-"));
  let script: Script = () => say("no prompt is running");
  let wakeScript: Script = () => say("Noted.");
  const faux = scriptedFaux((messages) => {
    const view = viewOf(messages);
    return (view.wake ? wakeScript : script)(view);
  });
  const calls: ToolCallSeen[] = [];
  const wakes: string[] = [];
  let settled = 0;

  const settingsManager = SettingsManager.inMemory({ retry: { enabled: false } });
  const resourceLoader = new DefaultResourceLoader({
    cwd: root,
    agentDir: root,
    settingsManager,
    noExtensions: true,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    additionalExtensionPaths: [EXTENSION],
    extensionFactories: [(pi) => pi.registerProvider(faux.provider)],
  });
  await resourceLoader.reload();
  const { session } = await createAgentSession({
    cwd: root,
    agentDir: root,
    settingsManager,
    resourceLoader,
    sessionManager: SessionManager.inMemory(root),
    model: faux.getModel(),
    noTools: "builtin",
  });
  // A long-lived host: wakes can arrive after a prompt's run (the SDK's default mode is "print").
  await session.bindExtensions({ mode: "rpc" });

  const argsOf = new Map<string, Record<string, unknown>>();
  session.subscribe((event) => {
    if (event.type === "tool_execution_start") {
      argsOf.set(event.toolCallId, event.args as Record<string, unknown>);
      log(`\n> ${event.toolName} ${JSON.stringify(event.args)}`);
    }
    if (event.type === "tool_execution_end") {
      const text = event.result.content.map((block: { type: string; text?: string }) => block.text ?? "").join("");
      calls.push({
        name: event.toolName,
        args: argsOf.get(event.toolCallId) ?? {},
        text,
        details: (event.result.details ?? {}) as Record<string, unknown>,
      });
      log(text);
    }
    if (event.type === "message_end" && (event.message as { customType?: string }).customType === "unified-exec-wake") {
      const content = String((event.message as { content: unknown }).content);
      wakes.push(content);
      log(`\n[wake] ${content}`);
    }
    if (event.type === "agent_end") settled++;
  });

  return {
    calls,
    wakes,
    async prompt(text, next) {
      script = next;
      log(`\nuser: ${text}`);
      await session.prompt(text);
    },
    answerWakes(next) {
      wakeScript = next;
    },
    async settledAfterWakes(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      const start = settled;
      while (wakes.length < count || settled <= start) {
        if (Date.now() > deadline) throw new Error(`no ${count} wake(s) within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      const problems: string[] = [];
      const runner = session.extensionRunner;
      const stopListening = runner.onError((error) => problems.push(`${error.event}: ${error.error}`));
      try {
        await runner.emit({ type: "session_shutdown", reason: "quit" });
      } finally {
        stopListening();
        session.dispose();
        rmSync(root, { recursive: true, force: true });
      }
      if (problems.length > 0) throw new Error(`the session did not end cleanly: ${problems.join("; ")}`);
    },
  };
}
