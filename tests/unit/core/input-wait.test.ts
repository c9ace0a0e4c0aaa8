/**
 * `input_wait`: real processes on pipes and PTYs, the prompt rule, the fallbacks, and the cost of one
 * probe. The same answers beside CPU burners: `tests/stress/input-wait-load.test.ts`.
 */
import assert from "node:assert/strict";
import { readlinkSync } from "node:fs";
import { describe, it } from "node:test";
import {
  InputWaitProbe,
  type InputWaitQuery,
  looksLikePrompt,
  probeInputWait,
  readStdinIdentity,
} from "../../../src/core/conditions/input-wait.ts";
import { type ProcReader, parseSyscall, realProcReader, waitingCalls } from "../../../src/core/conditions/proc-wait.ts";
import { TerminalText } from "../../../src/core/output/terminal-text.ts";
import { processTable } from "../../../src/core/processes/process-table.ts";
import { INPUT_WAIT_QUIET_MS } from "../../../src/core/shared/constants.ts";
import { PipeTransport } from "../../../src/core/transport/pipe.ts";
import { loadPtyModule, spawnPty } from "../../../src/core/transport/pty.ts";
import type { Transport } from "../../../src/core/transport/types.ts";
import { StartedJobs } from "../../helpers/jobs.ts";
import { quietFor, waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";

const LINUX = process.platform === "linux";
const started = new StartedJobs();

interface Running {
  transport: Transport;
  pid: number;
  /** The query a result would make now. */
  query(): InputWaitQuery;
  stop(): void;
}

/** Starts `command` under bash on pipes or a PTY, rendering its output as the model would see it. */
async function run(command: string, tty: boolean): Promise<Running> {
  let text = "";
  let lastOutput = performance.now();
  const render = new TerminalText();
  const events = {
    data: (chunk: Buffer) => {
      text += render.write(chunk.toString("utf8"), false);
      lastOutput = performance.now();
    },
    exit: () => {},
    closed: () => {},
  };
  const spec = {
    file: "/bin/bash",
    args: ["--norc", "--noprofile", "-c", command],
    cwd: "/tmp",
    env: { ...process.env, TERM: "xterm-256color" },
  };
  const transport = tty ? spawnPty({ ...spec, cols: 100, rows: 30 }, events, loadPtyModule()) : new PipeTransport(spec, events);
  started.transport(transport);
  const pid = transport.pid!;
  // Pipes: the leader's fd 0 is set before spawn returns. A PTY's child sets it up after the fork, so
  // the runtime takes the slave path from the spawn; here we wait until the leader's stderr shows it
  // (its stdin may be redirected by the command itself, as `read </dev/tty` does).
  let stdin = tty ? undefined : readStdinIdentity(pid);
  if (tty) {
    await waitFor(() => {
      try {
        stdin = readlinkSync(`/proc/${pid}/fd/2`);
      } catch {
        return false;
      }
      return stdin.startsWith("/dev/pts/");
    }, "the PTY on fd 0");
  }
  return {
    transport,
    pid,
    query: () => ({ pid, stdin, tty, lastLine: text.slice(text.lastIndexOf("\n") + 1), quietMs: performance.now() - lastOutput }),
    stop: () => transport.signal("SIGKILL"),
  };
}

/** Waits (with a deadline) until the probe says likely, and returns that answer. */
async function becomesLikely(job: Running, reader: ProcReader = realProcReader) {
  let answer = probeInputWait(job.query(), reader);
  const probe = () => {
    answer = probeInputWait(job.query(), reader);
    return answer.likely;
  };
  await waitFor(probe, `input_wait: likely for ${JSON.stringify(job.query())}`, 15_000);
  return answer;
}

/** Probes for `ms` (past the prompt rule's quiet time) and fails on any likely answer. */
async function neverLikely(job: Running, ms = INPUT_WAIT_QUIET_MS + 500) {
  await quietFor(ms, () => {
    const answer = probeInputWait(job.query());
    assert.equal(answer.likely, false, `likely (${answer.reason}) for ${JSON.stringify(job.query())}`);
  });
}

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
      assert.deepEqual(await becomesLikely(job), { likely: true, reason: "syscall", pid: job.pid });
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
  it("one probe of a job with 10 processes costs under 5 ms, and a probe object answers each job once", async () => {
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

    let reads = 0;
    const counting: ProcReader = {
      ...realProcReader,
      readFile: (path) => {
        reads++;
        return realProcReader.readFile(path);
      },
    };
    const probe = new InputWaitProbe(counting);
    const first = probe.check(job.query());
    const afterFirst = reads;
    assert.deepEqual(probe.check(job.query()), first);
    assert.equal(reads, afterFirst, "the second check of the same job read nothing");
    job.stop();
  });
});
