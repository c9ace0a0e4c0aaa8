import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatTokenTable, headerOf, median, tokens, tokenTable } from "../../bench/tokens.ts";

describe("benchmark token counts", () => {
  it("splits each format's header from its output at the format's own separator", () => {
    assert.equal(headerOf("[exited]\nexit_code: 0\n---\nok\n---\nmore", "dashes"), "[exited]\nexit_code: 0");
    assert.equal(headerOf("[exited]\nexit_code: 0\n---", "dashes"), "[exited]\nexit_code: 0");
    assert.equal(
      headerOf("Chunk ID: a\nWall time: 0.1000 seconds\nOutput:\nOutput:\nx", "codex"),
      "Chunk ID: a\nWall time: 0.1000 seconds",
    );
    assert.equal(headerOf("Wall time: 0.0000 seconds\nOutput:", "codex"), "Wall time: 0.0000 seconds");
    assert.equal(headerOf("write_stdin failed: Unknown process id 4", "codex"), "write_stdin failed: Unknown process id 4");
    assert.equal(headerOf("ok", "pi-bash"), "");
    assert.equal(headerOf("boom\n\nCommand exited with code 2", "pi-bash"), "Command exited with code 2");
    assert.equal(headerOf("Command exited with code 1", "pi-bash"), "Command exited with code 1");
    assert.equal(headerOf("Command not found", "pi-bash"), "");
  });

  it("counts o200k tokens as the reference counts, special-token text included", () => {
    const header = "Chunk ID: 3fa91c\nWall time: 0.5123 seconds\nProcess exited with code 0\nOriginal token count: 37\nOutput:\n";
    assert.equal(tokens(header), 35);
    assert.equal(tokens("Process running with session ID 48213"), 8);
    assert.ok(tokens("<|endoftext|>") > 1);
  });

  it("reports the median and mean header and total per format", () => {
    const rows = tokenTable([
      { format: "codex", text: "Wall time: 0.0000 seconds\nOutput:\nhello" },
      { format: "default", text: "[exited]\n---\nhello" },
      { format: "codex", text: "Wall time: 1.0000 seconds\nProcess exited with code 0\nOutput:\nhello world" },
    ]);
    assert.deepEqual(
      rows.map((row) => [row.format, row.calls]),
      [
        ["codex", 2],
        ["default", 1],
      ],
    );
    const codex = rows[0]!;
    assert.equal(
      codex.header.median,
      (tokens("Wall time: 0.0000 seconds") + tokens("Wall time: 1.0000 seconds\nProcess exited with code 0")) / 2,
    );
    assert.equal(codex.total.sum, codex.total.perCall[0]! + codex.total.perCall[1]!);
    assert.match(
      formatTokenTable(rows),
      /^format\s+calls\s+header median\s+header mean\s+total median\s+total mean\s+total sum\ncodex\s+2\s/,
    );
    assert.throws(() => tokenTable([{ format: "other", text: "x" }]), /no header rule for format other/);
    assert.deepEqual([median([]), median([3, 1, 2]), median([4, 1, 2, 3])], [0, 2, 2.5]);
  });
});
