/**
 * Example: a long build the agent starts, leaves running, and polls until it exits.
 *
 * An ordinary Node program (not an extension): it runs Pi's SDK in-process, offline, with pi-ai's
 * faux provider standing in for the model, loads this extension, and prints each tool call and the
 * text the model would see. Run it with `npm run example:poll-a-build`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { createAgentSession, DefaultResourceLoader, SessionManager, SettingsManager } from "@earendil-works/pi-coding-agent";

const extension = fileURLToPath(new URL("../src/index.ts", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "piue-example-"));
const build = "for step in compile link test; do echo \"$step...\"; sleep 0.7; done; echo 'build ok'";

// The scripted "model": start the build with a short window, then poll the session it returns.
const faux = fauxProvider();
let sessionId: number | undefined;
faux.setResponses([
  fauxAssistantMessage(fauxToolCall("exec_command", { cmd: build, yield_time_ms: 500 }), { stopReason: "toolUse" }),
  (context) => {
    const last = context.messages.at(-1) as { details?: { session_id?: number } };
    sessionId = last.details?.session_id;
    if (sessionId === undefined) throw new Error("exec_command returned no session_id");
    return fauxAssistantMessage(fauxToolCall("write_stdin", { session_id: sessionId, yield_time_ms: 10_000 }), { stopReason: "toolUse" });
  },
  fauxAssistantMessage("The build finished."),
]);

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
  additionalExtensionPaths: [extension],
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
await session.bindExtensions({});

const results: { name: string; text: string }[] = [];
session.subscribe((event) => {
  if (event.type === "tool_execution_start") console.log(`\n> ${event.toolName} ${JSON.stringify(event.args)}`);
  if (event.type === "tool_execution_end") {
    const text = event.result.content.map((block: { type: string; text?: string }) => block.text ?? "").join("");
    results.push({ name: event.toolName, text });
    console.log(text);
  }
});

try {
  await session.prompt("Run the build and tell me when it is done.");
} finally {
  session.dispose();
  rmSync(root, { recursive: true, force: true });
}

// The example checks its own outcome, so `npm test` can run it.
assert.equal(results.length, 2);
assert.match(results[0]!.text, /^\[still running\]\nsession_id: 1\n/);
assert.match(results[1]!.text, /^\[exited\]\nexit_code: 0\n[\s\S]*build ok\n$/);
assert.doesNotMatch(results[1]!.text, /compile/, "a poll returns only output that arrived after the previous call");
console.log(`\nexample ok: the build ran as session ${sessionId} and its exit was reported once`);
