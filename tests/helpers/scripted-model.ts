/**
 * The test side of the faux model: a loopback HTTP server that answers each model request of a Pi
 * host by running the current {@link Script} on the transcript so far. Scripts are written in the
 * step language the examples and the demo use too (examples/lib/model-script.ts, re-exported here):
 * a script decides every step from what earlier steps returned (a poll can use the session_id an
 * exec_command returned), and one step may issue several tool calls at once.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ModelStep, type Script, say, viewOf } from "../../examples/lib/model-script.ts";

export {
  call,
  callAll,
  firstSession,
  type ModelStep,
  type ModelView,
  type Script,
  type SeenResult,
  say,
  sessionOf,
  steps,
  type ToolCallRequest,
  viewOf,
} from "../../examples/lib/model-script.ts";

export class ScriptedModel {
  /** The script that answers the next model requests. */
  script: Script = () => say("no script set");
  /** What the model answers to a completion wake (it may arrive in the middle of a test's run). */
  wakeScript: Script = () => say("noted the finished job");
  /** How long the model "thinks" before each answer (the benchmark's agent pace); 0 answers at once. */
  delayMs = 0;
  /** Errors thrown by scripts, so a test can fail with the cause rather than a confused transcript. */
  readonly errors: Error[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ScriptedModel> {
    let model: ScriptedModel | undefined;
    const server = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => {
        body += chunk;
      });
      request.on("end", () => {
        let reply: ModelStep;
        try {
          const { messages } = JSON.parse(body) as { messages: unknown[] };
          const view = viewOf(messages);
          reply = (view.wake ? model!.wakeScript : model!.script)(view);
        } catch (error) {
          model!.errors.push(error as Error);
          reply = { error: `script failed: ${(error as Error).stack ?? error}` };
        }
        response.setHeader("content-type", "application/json");
        const answer = () => response.end(JSON.stringify(reply));
        if (model!.delayMs > 0) setTimeout(answer, model!.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    model = new ScriptedModel(server, `http://127.0.0.1:${port}/`);
    return model;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
