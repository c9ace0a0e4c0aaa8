/**
 * Two SDK sessions in one process, on every host: each has its own jobs, ids and listing; neither can
 * reach the other's jobs (runtimes are keyed by each session's SessionManager object).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { pidsIn, processAlive, waitFor } from "../helpers/processes.ts";

type Sdk = typeof import("@earendil-works/pi-coding-agent");

async function loadSdk(cliPath: string): Promise<Sdk> {
  // The host package's own entry point (dist/index.js beside dist/bundle/cli.js).
  return (await import(pathToFileURL(join(dirname(dirname(cliPath)), "index.js")).href)) as Sdk;
}

type Calls = [string, Parameters<typeof fauxToolCall>[1]][];

const script = (calls: Calls) => [
  ...calls.map(([name, args]) => fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" })),
  fauxAssistantMessage("done"),
];

async function startSession(sdk: Sdk, root: string, calls: Calls) {
  const faux = fauxProvider();
  faux.setResponses(script(calls));
  const settingsManager = sdk.SettingsManager.inMemory({ retry: { enabled: false } });
  const resourceLoader = new sdk.DefaultResourceLoader({
    cwd: root,
    agentDir: root,
    settingsManager,
    noExtensions: true,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    additionalExtensionPaths: [EXTENSION_ENTRY],
    extensionFactories: [(pi) => pi.registerProvider(faux.provider)],
  });
  await resourceLoader.reload();
  const { session } = await sdk.createAgentSession({
    cwd: root,
    agentDir: root,
    settingsManager,
    resourceLoader,
    sessionManager: sdk.SessionManager.inMemory(root),
    model: faux.getModel(),
    noTools: "builtin",
  });
  await session.bindExtensions({});
  const results: { name: string; text: string; structured: unknown }[] = [];
  session.subscribe((event) => {
    if (event.type === "tool_execution_end") {
      const text = event.result.content.map((block: { text?: string }) => block.text ?? "").join("");
      results.push({ name: event.toolName, text, structured: event.result.structuredContent });
    }
  });
  await session.prompt("go");
  return { session, results, faux };
}

for (const host of PI_HOSTS) {
  describe(`SDK sessions in one process on ${host.name}`, () => {
    it("never see each other's jobs", async () => {
      const sdk = await loadSdk(host.cliPath);
      const root = mkdtempSync(join(tmpdir(), "piue-sdk-"));
      const a = await startSession(sdk, root, [["exec_command", { cmd: "echo $$; sleep 300", yield_time_ms: 300 }]]);
      const b = await startSession(sdk, root, [
        ["list_sessions", {}],
        ["write_stdin", { session_id: 1, yield_time_ms: 5_000 }],
      ]);
      try {
        assert.match(a.results[0]!.text, /^\[still running\]\nsession_id: 1\n/);
        const [pid] = pidsIn(a.results[0]!.text.slice(a.results[0]!.text.indexOf("---")));
        assert.ok(pid && processAlive(pid));
        assert.deepEqual((b.results[0]!.structured as { sessions: unknown[] }).sessions, [], "B lists nothing of A's");
        assert.match(b.results[1]!.text, /Unknown session_id 1/, "B cannot reach A's job 1");
        a.faux.setResponses(script([["kill_session", { session_id: 1 }]]));
        await a.session.prompt("stop it");
        assert.match(a.results.at(-1)!.text, /^\[killed\]\nsession_id: 1\n/, "A still reaches its own job");
        await waitFor(() => !processAlive(pid), "A's job to end");
        a.session.dispose();
        b.session.dispose();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });
}
