/**
 * The demo's scripted model on plain transcripts: every call of every scene asks a window the tools
 * keep as asked (a clamped one would teach a newcomer a wrong limit), and scene 4 tells the person how
 * to make its server log an error without typing into it (so the wake quotes the line).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TOUR_PROMPTS, tourStep } from "../../../examples/demo/tour-model.ts";
import type { ModelStep, ModelView, SeenResult } from "../../../examples/lib/model-script.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";

/** A result every scene reads as "it worked": a running job with the lines each scene looks for. */
const RUNNING: SeenResult = {
  toolName: "exec_command",
  text: "[still running]\nsession_id: 7\nlistening: 127.0.0.1:4000\n---\nServing HTTP on 127.0.0.1 port 4000\nready on http://127.0.0.1:4000\nPassphrase: ",
  details: { session_id: 7 },
  isError: false,
};

/** The scene's steps, each given the results of all before it, until it says something. */
function walk(prompt: string): ModelStep[] {
  const taken: ModelStep[] = [];
  const results: SeenResult[] = [];
  for (let turn = 0; turn < 8; turn++) {
    const view: ModelView = { prompt, wake: false, turn, results: [...results], last: results.slice(-1), riders: [], messages: [] };
    const step = tourStep(view);
    taken.push(step);
    if (!("toolCalls" in step)) break;
    results.push(...step.toolCalls.map(() => RUNNING));
  }
  return taken;
}

describe("the demo's scenes", () => {
  for (const [index, prompt] of TOUR_PROMPTS.entries()) {
    it(`scene ${index + 1} asks no window the tool clamps`, () => {
      for (const step of walk(String(index + 1))) {
        for (const { name, arguments: args } of "toolCalls" in step ? step.toolCalls : []) {
          const window =
            name === "exec_command"
              ? prepareExec({ cmd: "", ...args }, process.cwd(), process.env).window
              : name === "write_stdin"
                ? prepareWrite({ session_id: 7, ...args }, process.env).window
                : undefined;
          assert.equal(window?.requestedMs, undefined, `${prompt}: ${name} ${JSON.stringify(args)} is clamped to ${window?.ms}`);
        }
      }
    });
  }

  it("scene 4 asks the person to open the server's /fail, not to type into the job", () => {
    const said = walk("4").at(-1)!;
    assert.ok("text" in said);
    assert.match(said.text, /Open http:\/\/127\.0\.0\.1:4000\/fail in a browser/);
    assert.doesNotMatch(said.text, /Type into it/);
  });
});
