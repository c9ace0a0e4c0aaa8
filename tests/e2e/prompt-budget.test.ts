/**
 * The fixed prompt (SPEC §9, issue 38): our five tools' definitions and our lines in Pi's system
 * prompt, as each real host sends them to the model, ≤ 1 250 o200k tokens. Counted from a recorded
 * request (tests/bench/prompt-tokens.ts), never from our source; a failure prints the breakdown.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatPromptTokens, PROMPT_BUDGET_TOKENS, promptTokens, recordRequest } from "../bench/prompt-tokens.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";

for (const host of PI_HOSTS) {
  describe(`the fixed prompt on ${host.name}`, () => {
    it(`our definitions and system-prompt lines fit ${PROMPT_BUDGET_TOKENS} o200k tokens`, async () => {
      const row = await promptTokens(host);
      const breakdown = `${formatPromptTokens(row)}\n${row.lines.map((line) => `    ${line}`).join("\n")}`;
      assert.ok(row.total <= PROMPT_BUDGET_TOKENS, `over budget:\n${breakdown}`);
      assert.ok(row.lines.length > 0 && row.definitions > 0, `nothing counted:\n${breakdown}`);
      assert.equal(new Set(row.lines).size, row.lines.length, `a line said twice:\n${breakdown}`);
    });

    it("the tools list names each tool once: `- exec_command: run a shell command as a job …`", async () => {
      const request = await recordRequest(host, true);
      assert.match(request.systemPrompt, /\n- exec_command: run a shell command as a job/);
      assert.doesNotMatch(request.systemPrompt, /(exec_command|write_stdin|kill_session|list_sessions|set_on_exit): \1:/);
    });
  });
}
