/**
 * PI_UNIFIED_EXEC_FORMAT (result-format.ts): read once at activation; `codex` and `default` pick the
 * text; any other value falls back to the default with one warning, told once — at session start
 * where Pi shows notices, or in the first result of a print/JSON run.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ResultFormatSetting } from "../../../src/pi/result-format.ts";

describe("the result format setting", () => {
  it("reads codex and default in any case and around spaces; unset or empty is the default, silently", () => {
    assert.equal(new ResultFormatSetting({ PI_UNIFIED_EXEC_FORMAT: "codex" }).format, "codex");
    assert.equal(new ResultFormatSetting({ PI_UNIFIED_EXEC_FORMAT: " Codex " }).format, "codex");
    assert.equal(new ResultFormatSetting({ PI_UNIFIED_EXEC_FORMAT: "default" }).format, "default");
    for (const env of [{}, { PI_UNIFIED_EXEC_FORMAT: "" }]) {
      const setting = new ResultFormatSetting(env);
      assert.equal(setting.format, "default");
      assert.equal(setting.takeStartWarning(), undefined);
    }
  });

  it("an unknown value: the default format and one warning, told once, escaped and bounded", () => {
    const setting = new ResultFormatSetting({ PI_UNIFIED_EXEC_FORMAT: `claude\n${"x".repeat(100)}` });
    assert.equal(setting.format, "default");
    assert.equal(setting.takeResultWarning("rpc"), undefined, "RPC and TUI hear it as a session-start notice");
    const warning = setting.takeResultWarning("json");
    assert.match(
      warning ?? "",
      /^PI_UNIFIED_EXEC_FORMAT="claude\\nx+" is not a known result format \(use codex or default\); the default format is used\.$/,
    );
    assert.ok(warning!.length < 150, warning);
    assert.equal(setting.takeResultWarning("json"), undefined, "told once");
    assert.equal(setting.takeStartWarning(), undefined);
  });
});
