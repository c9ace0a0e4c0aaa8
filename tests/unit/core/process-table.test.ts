/**
 * One read of the process table for a whole sweep: inside `oneTableFor` every `processTable()` is the
 * same table (also in a nested sweep), outside each call reads afresh, and a sweep that throws
 * leaves no table behind. Linux and other POSIX only (Windows has no table here).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { oneTableFor, processTable } from "../../../src/core/processes/process-table.ts";

describe("process table", { skip: process.platform === "win32" }, () => {
  it("answers every read inside a sweep with one table, and reads afresh outside it", () => {
    const [first, second, nested] = oneTableFor(() => [processTable(), processTable(), oneTableFor(() => processTable())]);
    assert.ok(
      first?.some((entry) => entry.pid === process.pid),
      "this process is in the table",
    );
    assert.equal(second, first);
    assert.equal(nested, first);
    assert.notEqual(processTable(), processTable(), "outside a sweep every read is new");
  });

  it("leaves no table behind when the sweep throws", () => {
    let inside: unknown;
    assert.throws(() =>
      oneTableFor(() => {
        inside = processTable();
        throw new Error("boom");
      }),
    );
    assert.notEqual(processTable(), inside);
    assert.notEqual(processTable(), processTable());
  });
});
