/** Every program in examples/ runs offline and checks its own outcome; a broken example fails the suite. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/hosts.ts";

describe("examples", { concurrency: 2 }, () => {
  const dir = join(REPO_ROOT, "examples");
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts"))) {
    it(`${file} runs and passes its own checks`, () => {
      const result = spawnSync(process.execPath, ["--import", "tsx", join(dir, file)], {
        cwd: REPO_ROOT,
        encoding: "utf8",
        timeout: 120_000,
      });
      assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /example ok/);
    });
  }
});
