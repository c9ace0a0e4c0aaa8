/**
 * `input_wait`: real processes on pipes and PTYs, the prompt rule, the fallbacks, and the cost of one
 * probe. The same answers beside CPU burners: `tests/stress/input-wait.test.ts`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decideInputWait, looksLikePrompt, probeInputWait, type Scan } from "../../../src/core/input-wait/input-wait.ts";
import { type ProcReader, parseSyscall, realProcReader, waitingCalls } from "../../../src/core/input-wait/proc-wait.ts";
import { processTable } from "../../../src/core/processes/process-table.ts";
import { INPUT_WAIT_QUIET_MS } from "../../../src/core/shared/constants.ts";
import { answeredPrompt, becomesLikely, neverLikely, quietColonLine, run } from "../../helpers/input-wait-jobs.ts";
import { quietFor, waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { scratchDirectory } from "../../helpers/runtime.ts";

const LINUX = process.platform === "linux";
const scratch = scratchDirectory("input-wait-");

/** Starts every command at once and probes each for the whole span: none may ever be likely. */
async function allNeverLikely(commands: string[], tty: boolean): Promise<void> {
  await Promise.all(
    commands.map(async (command) => {
      const job = await run(command, tty);
      try {
        await neverLikely(job);
      } finally {
        job.stop();
      }
    }),
  );
}

describe("looksLikePrompt (the rule for an unfinished last line)", () => {
  const prompts = [
    "Name: ",
    "Continue? ",
    "Proceed? [y/N] ",
    "Overwrite (yes/no)",
    "Really [Y/n/q]",
    "> ",
    ">>> ",
    "[sudo] password for me: ",
    "Enter passphrase",
    "Enter PIN",
    "Press Enter to continue...",
    "$ ",
    "# ",
    "root@box:~# ",
    "[me@box src]$ ",
    "bash-5.2# ",
    "❯ ",
  ];
  const others = [
    "",
    "   ",
    "Downloading 45%",
    "Compiling crate foo",
    "done.",
    "[=====>     ] 50/100",
    "#####",
    "50% ####",
    "total 0",
    "https://example.com/page#",
  ];
  for (const line of prompts) it(`${JSON.stringify(line)} looks like a prompt`, () => assert.equal(looksLikePrompt(line), true));
  for (const line of others) it(`${JSON.stringify(line)} does not`, () => assert.equal(looksLikePrompt(line), false));
});

describe("the decision on the scan's verdict and the last line", () => {
  const quiet = INPUT_WAIT_QUIET_MS;
  const waiting = { likely: true, reason: "syscall", pid: 7 } as const;
  const cases: [string, Scan, string, number, boolean][] = [
    // [what, scan, last line, quiet ms, likely]
    ["a scan that saw a read of the job's stdin", { waiting, running: false, told: true }, "", 0, true],
    ["a scan that could tell nothing waits, under a prompt-like line", { running: false, told: true }, "Name: ", quiet * 10, false],
    [
      "a scan that could tell, under `Downloading (step 1 of 2): `",
      { running: false, told: true },
      "Downloading (step 1 of 2): ",
      quiet,
      false,
    ],
    [
      "no scan (macOS, or the scan could not read), a prompt-like line after the quiet",
      { running: false, told: false },
      "Name: ",
      quiet,
      true,
    ],
    ["no scan, a prompt-like line before the quiet", { running: false, told: false }, "Name: ", quiet - 1, false],
    ["no scan, a line that is no prompt", { running: false, told: false }, "working", quiet * 10, false],
    ["no scan of the waits, but a process running on a CPU", { running: true, told: false }, "Continue? ", quiet * 10, false],
  ];
  for (const [what, scan, line, quietMs, likely] of cases) {
    it(`${what}: ${likely ? "likely" : "not likely"}`, () => {
      const answer = decideInputWait(scan, line, quietMs);
      assert.equal(answer.likely, likely);
      if (likely) assert.equal(answer.reason, scan.waiting ? "syscall" : "prompt");
    });
  }
});

describe("system call tables and parsing", () => {
  it("knows x86_64 and the generic numbering (arm64, riscv64), nothing else", () => {
    assert.equal(waitingCalls("x64")![0], "read");
    assert.equal(waitingCalls("x64")![270], "select");
    assert.equal(waitingCalls("arm64")![63], "read");
    assert.equal(waitingCalls("arm64")![73], "poll");
    assert.equal(waitingCalls("riscv64")![22], "epoll");
    assert.equal(waitingCalls("ia32"), undefined);
  });

  it("parses the syscall file's three shapes", () => {
    assert.equal(parseSyscall("running\n"), "running");
    assert.equal(parseSyscall("-1 0x7ffd 0x7f00\n"), undefined);
    assert.deepEqual(parseSyscall("0 0x0 0x55aa 0x1000 0x0 0x0 0x0 0x7ffd 0x7f00\n"), { nr: 0, args: [0n, 0x55aan, 0x1000n, 0n, 0n, 0n] });
  });
});

describe("input_wait on pipes (real processes)", { skip: LINUX ? false : "the syscall signal is Linux only" }, () => {
  it("`read -p 'Name: '` is likely, from its read system call", async () => {
    const job = await run("read -p 'Name: ' x; echo got $x", false);
    assert.match(job.query().stdin!, /^socket:\[\d+\]$/, "Node's stdio pipes are socket pairs");
    assert.deepEqual(await becomesLikely(job), { likely: true, reason: "syscall", pid: job.pid });
    job.stop();
  });

  it("`python3 -c 'input(\"x? \")'` is likely", async () => {
    const job = await run(`python3 -c 'input("x? ")'`, false);
    const answer = await becomesLikely(job);
    assert.equal(answer.reason, "syscall");
    job.stop();
  });

  it("a read on a thread other than the main one is seen (every thread's system call is read)", async () => {
    const job = await run(
      `exec python3 -c 'import threading, sys; t = threading.Thread(target=sys.stdin.readline); t.start(); t.join()'`,
      false,
    );
    assert.equal((await becomesLikely(job)).reason, "syscall");
    job.stop();
  });

  it("a Node program reading stdin in its event loop is likely once it drew a prompt, not before", async () => {
    const silent = await run(`exec node -e 'process.stdin.on("data", () => {})'`, false);
    await neverLikely(silent);
    silent.stop();
    const prompting = await run(`exec node -e 'process.stdout.write("q? "); process.stdin.on("data", () => {})'`, false);
    assert.equal((await becomesLikely(prompting)).reason, "syscall");
    prompting.stop();
  });

  it("`sleep 5`, a CPU loop and `sleep 5 | cat` are never likely (cat reads a pipe from sleep, not our stdin)", async () => {
    await allNeverLikely(
      ["sleep 5", "while :; do :; done", "sleep 5 | cat", "sleep 5 | tee /dev/null", `exec node -e 'setInterval(() => {}, 1000)'`],
      false,
    );
  });

  it("a quiet `Downloading weights (step 1 of 2): ` is not likely: the scan saw nothing read the job's stdin", async () => {
    const job = await quietColonLine(false);
    await neverLikely(job);
    job.stop();
  });

  it("after Python's input() is answered and the program works on silently, it is no longer likely", async () => {
    const job = await answeredPrompt(false, scratch);
    await neverLikely(job);
    job.stop();
  });

  it("probing never acts: the waiting job still gets and answers its input afterwards", async () => {
    const job = await run("read -p 'Name: ' x; echo got $x; sleep 30", false);
    for (let i = 0; i < 20; i++) probeInputWait(job.query());
    await becomesLikely(job);
    await job.transport.write(Buffer.from("bob\n"));
    await waitFor(() => !probeInputWait(job.query()).likely, "the job to take its input");
    job.stop();
  });
});

describe("input_wait on a PTY (real processes)", { skip: !LINUX ? "the syscall signal is Linux only" : SKIP_WITHOUT_PTY }, () => {
  it("`read -p 'Name: '` and `python3 -c 'input(\"x? \")'` are likely, from the read on the terminal", async () => {
    for (const command of ["read -p 'Name: ' x", `python3 -c 'input("x? ")'`]) {
      const job = await run(command, true);
      assert.deepEqual(await becomesLikely(job), { likely: true, reason: "syscall", pid: job.shell });
      job.stop();
    }
  });

  it("REPLs that wait in select or epoll after drawing their prompt are likely (python3, node, interactive bash)", async () => {
    for (const command of ["exec python3 -q -i", "exec node", "exec bash --norc --noprofile -i"]) {
      const job = await run(command, true);
      const answer = await becomesLikely(job);
      assert.equal(answer.reason, "syscall", command);
      job.stop();
    }
  });

  it("a password prompt read from /dev/tty is likely", async () => {
    const job = await run("read -s -p 'Password: ' x </dev/tty", true);
    assert.equal((await becomesLikely(job)).reason, "syscall");
    job.stop();
  });

  it("a quiet `Downloading weights (step 1 of 2): ` is not likely on a terminal either", async () => {
    const job = await quietColonLine(true);
    await neverLikely(job);
    job.stop();
  });

  it("after `read -s` is answered and the program works on silently, it is no longer likely", async () => {
    const job = await answeredPrompt(true, scratch);
    await neverLikely(job);
    job.stop();
  });

  it("`sleep 5`, a CPU loop, `sleep 5 | cat` and a Node server are never likely", async () => {
    await allNeverLikely(["sleep 5", "while :; do :; done", "sleep 5 | cat", `exec node -e 'setInterval(() => {}, 1000)'`], true);
  });
});

describe("fallbacks", { skip: LINUX ? false : "Linux only" }, () => {
  /** A reader that refuses what Yama ptrace_scope ≥ 2 refuses (simulated: this machine allows it). */
  const noSyscall: ProcReader = {
    ...realProcReader,
    readFile: (path) => {
      if (path.endsWith("/syscall")) throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      return realProcReader.readFile(path);
    },
    readMemory: () => {
      throw new Error("EACCES");
    },
  };
  const refuse = (): never => {
    throw Object.assign(new Error("EACCES"), { code: "EACCES" });
  };
  /** A reader that refuses everything about the process but its stat, as for a setuid `sudo` (simulated). */
  const nothing: ProcReader = {
    readFile: () => {
      throw new Error("EACCES");
    },
    readLink: () => {
      throw new Error("EACCES");
    },
    readDir: () => {
      throw new Error("EACCES");
    },
    readMemory: () => {
      throw new Error("EACCES");
    },
  };

  it("without the syscall file (simulated refusal), the wchan of a real blocked read says likely", async () => {
    const job = await run("read x", false);
    assert.equal((await becomesLikely(job, noSyscall)).reason, "wchan");
    job.stop();
  });

  it("without any /proc view (simulated refusal), a prompt-like last line after 1 s of quiet says likely, not sooner", async () => {
    const job = await run("printf '[sudo] password for me: '; read -s x", false);
    await waitFor(() => job.query().lastLine.length > 0, "the prompt");
    const early = probeInputWait({ ...job.query(), quietMs: INPUT_WAIT_QUIET_MS - 1 }, nothing);
    assert.equal(early.likely, false);
    assert.deepEqual(probeInputWait({ ...job.query(), quietMs: INPUT_WAIT_QUIET_MS }, nothing), { likely: true, reason: "prompt" });
    job.stop();
  });

  it("a child the scan may not read (as a setuid sudo's, simulated) leaves the prompt rule to decide, though its shell was read", async () => {
    const job = await run(`printf '[sudo] password for me: '; python3 -c 'import sys; sys.stdin.readline()'; echo done`, false);
    const onlyTheLeader: ProcReader = {
      readFile: (path) => (mine(path) ? realProcReader.readFile(path) : refuse()),
      readLink: (path) => (mine(path) ? realProcReader.readLink(path) : refuse()),
      readDir: (path) => (mine(path) ? realProcReader.readDir(path) : refuse()),
      readMemory: () => refuse(),
    };
    function mine(path: string): boolean {
      const pid = /^\/proc\/(\d+)\//.exec(path)?.[1];
      return pid === undefined || Number(pid) === job.pid;
    }
    await becomesLikely(job); // the real scan sees python's read
    await waitFor(() => job.query().quietMs >= INPUT_WAIT_QUIET_MS, "a second of quiet");
    assert.deepEqual(probeInputWait(job.query(), onlyTheLeader), { likely: true, reason: "prompt" });
    job.stop();
  });

  it("an unknown stdin identity leaves only the prompt rule", () => {
    assert.deepEqual(probeInputWait({ pid: process.pid, stdin: undefined, tty: false, lastLine: "Continue? ", quietMs: 5_000 }), {
      likely: true,
      reason: "prompt",
    });
    assert.deepEqual(probeInputWait({ pid: process.pid, stdin: undefined, tty: false, lastLine: "working", quietMs: 5_000 }), {
      likely: false,
    });
  });

  it("a prompt-like line does not count while a process of the job is running on a CPU", async () => {
    const job = await run("printf 'Continue? '; while :; do :; done", false);
    await waitFor(() => job.query().lastLine === "Continue? ", "the line");
    await quietFor(INPUT_WAIT_QUIET_MS + 100);
    assert.equal(probeInputWait(job.query()).likely, false);
    job.stop();
  });
});

describe("cost", { skip: LINUX ? false : "Linux only" }, () => {
  it("one probe of a job with 10 processes costs under 5 ms", async () => {
    const job = await run(
      "for i in 1 2 3 4 5 6 7; do sleep 60 & done; python3 -c 'import time; time.sleep(60)' & node -e 'setTimeout(() => {}, 60000)' & wait",
      false,
    );
    await waitFor(() => (processTable() ?? []).filter((entry) => entry.sid === job.pid && !entry.zombie).length >= 10, "10 processes");
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const start = performance.now();
      probeInputWait(job.query());
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1]!;
    const p90 = times[Math.floor(times.length * 0.9)]!;
    console.log(`input_wait probe, job of 10 processes: median ${median.toFixed(2)} ms, p90 ${p90.toFixed(2)} ms`);
    assert.ok(median < 5, `median ${median.toFixed(2)} ms`);
    job.stop();
  });
});
