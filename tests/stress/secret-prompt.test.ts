/** A prompt hidden just before its line is drawn, the model's write arriving in between: 20 runs beside two CPU burners (`npm run test:stress`). */
import { after, before, describe, it } from "node:test";
import { startBurners } from "../helpers/load.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { scratchDirectory } from "../helpers/runtime.ts";
import { writeAsPromptIsHidden } from "../helpers/secret-prompt.ts";

const RUNS = 20;

describe(
  "a hidden prompt beside two CPU burners",
  { skip: process.platform !== "linux" ? "the echo flag is read on Linux only" : SKIP_WITHOUT_PTY },
  () => {
    const dir = scratchDirectory("secret-stress-");
    let stop: () => void;
    before(() => {
      stop = startBurners(2);
    });
    after(() => stop());

    it(`the model's text written as echo goes off, before the prompt is drawn, is refused and never read (${RUNS} runs)`, async () => {
      for (let i = 0; i < RUNS; i++) await writeAsPromptIsHidden(dir);
    });
  },
);
