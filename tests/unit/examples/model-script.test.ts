import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { call, say, steps, viewOf } from "../../../examples/lib/model-script.ts";

// The step language is code too: its transcript view decides what every e2e script, example and demo scene sees.
describe("scripted model view", () => {
  const messages = [
    { role: "user", content: [{ type: "text", text: "old prompt" }] },
    { role: "assistant", content: [] },
    { role: "toolResult", toolName: "exec_command", content: [{ type: "text", text: "old" }], details: {}, isError: false },
    { role: "user", content: [{ type: "text", text: "new prompt" }] },
    { role: "assistant", content: [] },
    { role: "toolResult", toolName: "exec_command", content: [{ type: "text", text: "a" }], details: { session_id: 1 }, isError: false },
    { role: "toolResult", toolName: "write_stdin", content: [{ type: "text", text: "b" }], details: {}, isError: true },
    { role: "assistant", content: [] },
    { role: "toolResult", toolName: "write_stdin", content: [{ type: "text", text: "c" }], details: {}, isError: false },
  ];

  it("sees only what follows the latest prompt", () => {
    const view = viewOf(messages);
    assert.equal(view.prompt, "new prompt");
    assert.equal(view.turn, 2);
    assert.deepEqual(
      view.results.map((r) => r.text),
      ["a", "b", "c"],
    );
    assert.deepEqual(
      view.last.map((r) => r.text),
      ["c"],
    );
    assert.equal(view.results[0]?.details.session_id, 1);
    assert.equal(view.results[1]?.isError, true);
  });

  it("steps are taken by turn and end with text", () => {
    const script = steps(call("exec_command", { cmd: "ls" }), (view) => say(`saw ${view.results.length}`));
    assert.deepEqual(script(viewOf(messages.slice(0, 4))), call("exec_command", { cmd: "ls" }));
    assert.deepEqual(script(viewOf(messages.slice(0, 7))), say("saw 2"));
    assert.deepEqual(script(viewOf(messages)), say("done"));
  });
});
