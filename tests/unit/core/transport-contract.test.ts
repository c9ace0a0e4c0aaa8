/**
 * One contract for both transports: data any number of times, `exit` once, then `closed` once when the
 * output is drained; output a descendant prints after the exit is still delivered; a kill reaches the
 * job; `close` ends our side whatever still holds the streams; a write the child does not read never
 * holds the event loop. The same scenarios run on pipes and on a real PTY.
 */
import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import { describe, it } from "node:test";
import { currentShellHost, jobEnvironment, resolveShell } from "../../../src/core/request/shell.ts";
import { PipeTransport } from "../../../src/core/transport/pipe.ts";
import { loadPtyModule, spawnPty } from "../../../src/core/transport/pty.ts";
import type { LeaderExit, Transport } from "../../../src/core/transport/types.ts";
import { escapedDaemonThenExit, StartedJobs } from "../../helpers/jobs.ts";
import { startBurners } from "../../helpers/load.ts";
import { pidsIn, processAlive, quietFor, waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";

const bash = resolveShell("bash", currentShellHost()).path;
const leftovers = new StartedJobs();

/** A transport and everything it reported, in order. */
interface Recorded {
  transport: Transport;
  events: string[];
  output: () => string;
  exit: () => LeaderExit | undefined;
  closed: Promise<void>;
  exited: Promise<void>;
}

type Kind = "pipe" | "pty";

function start(kind: Kind, command: string, onData?: (chunk: Buffer) => void): Recorded {
  const chunks: Buffer[] = [];
  const events: string[] = [];
  let exit: LeaderExit | undefined;
  let closedResolve!: () => void;
  let exitedResolve!: () => void;
  const closed = new Promise<void>((resolve) => {
    closedResolve = resolve;
  });
  const exited = new Promise<void>((resolve) => {
    exitedResolve = resolve;
  });
  const handlers = {
    data(chunk: Buffer) {
      chunks.push(Buffer.from(chunk)); // a pipe reuses its read buffer: keep a copy
      if (events.at(-1) !== "data") events.push("data");
      onData?.(chunk);
    },
    exit(leader: LeaderExit) {
      exit = leader;
      events.push("exit");
      exitedResolve();
    },
    closed() {
      events.push("closed");
      closedResolve();
    },
  };
  const spec = { file: bash, args: ["-c", command], cwd: process.cwd(), env: jobEnvironment(process.env, { tty: kind === "pty" }) };
  const transport =
    kind === "pipe" ? new PipeTransport(spec, handlers) : spawnPty({ ...spec, cols: 120, rows: 30 }, handlers, loadPtyModule());
  if (transport.pid) leftovers.group(transport.pid);
  return { transport, events, output: () => Buffer.concat(chunks).toString().replaceAll("\r\n", "\n"), exit: () => exit, closed, exited };
}

/** `exit` exactly once and `closed` exactly once, in that order, with data only before `closed`. */
function assertOrder(events: string[]): void {
  assert.equal(events.filter((event) => event === "exit").length, 1, events.join(","));
  assert.equal(events.filter((event) => event === "closed").length, 1, events.join(","));
  assert.ok(events.indexOf("exit") < events.indexOf("closed"), events.join(","));
  assert.equal(events.at(-1), "closed", events.join(","));
}

function openFds(): string[] {
  return readdirSync("/proc/self/fd").map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return "";
    }
  });
}

for (const kind of ["pipe", "pty"] as const) {
  describe(`${kind} transport contract`, { skip: kind === "pty" ? SKIP_WITHOUT_PTY : false }, () => {
    it("a short command: data, then exit once, then closed once", async () => {
      const job = start(kind, "echo hello; exit 3");
      await job.closed;
      assert.deepEqual(job.exit(), { code: 3, signal: null });
      assert.equal(job.output(), "hello\n");
      assertOrder(job.events);
    });

    it("output a descendant prints after the exit still arrives, and closed waits for it", async () => {
      // On a terminal the leader's exit hangs up its foreground group, as closing a terminal would.
      const job = start(kind, "(trap '' HUP; sleep 0.4; echo late) & sleep 0.1; echo early");
      await job.exited;
      assert.doesNotMatch(job.output(), /late/);
      await job.closed;
      assert.equal(job.output(), "early\nlate\n");
      assertOrder(job.events);
    });

    it("a kill reaches the job and is reported as its signal", async () => {
      const job = start(kind, "echo started; sleep 30");
      await waitFor(() => job.output().includes("started"), "the job to start");
      assert.equal(job.transport.signal("SIGTERM"), true);
      await job.closed;
      assert.deepEqual(job.exit(), { code: null, signal: "SIGTERM" });
      assertOrder(job.events);
    });

    it("close ends our side even while an escaped daemon holds the streams", async () => {
      // The leader waits until the daemon has left, so its exit cannot hang the daemon's terminal up.
      const job = start(kind, escapedDaemonThenExit(30));
      await job.exited;
      await waitFor(() => pidsIn(job.output()).length === 1, "the daemon's pid");
      const [daemon] = pidsIn(job.output());
      leftovers.group(daemon!);
      const early = await Promise.race([job.closed.then(() => "closed"), quietFor(300).then(() => "open")]);
      assert.equal(early, "open", "the daemon keeps the streams open");
      job.transport.close();
      await job.closed;
      assertOrder(job.events);
      assert.ok(processAlive(daemon!), "close stops nobody; it only lets go");
      process.kill(daemon!, "SIGKILL");
    });

    it(kind === "pipe" ? "has no terminal to resize" : "resizes its terminal", async () => {
      const job = start(kind, "read -r; stty size 2>/dev/null || echo none");
      if (kind === "pipe") assert.equal(job.transport.resize, undefined);
      else job.transport.resize!(90, 20);
      await job.transport.write(Buffer.from("go\n"));
      await job.closed;
      assert.match(job.output(), kind === "pipe" ? /none/ : /20 90/);
    });

    it("a write the child never reads stays pending without holding the event loop", async () => {
      const job = start(kind, `${kind === "pty" ? "stty raw -echo; " : ""}echo ready; sleep 30`);
      await waitFor(() => job.output().includes("ready"), "the job to start");
      let settled = false;
      const settle = () => {
        settled = true;
      };
      void job.transport.write(Buffer.alloc(4 * 1024 * 1024, 0x61)).then(settle, settle);
      // Timers keep firing while the write waits: the loop is free.
      const before = performance.now();
      await quietFor(200);
      assert.ok(performance.now() - before < 2_000, "the event loop was blocked");
      assert.equal(settled, false, "4 MiB cannot fit in any OS buffer of a child that does not read");
      job.transport.signal("SIGKILL");
      await job.closed;
      assertOrder(job.events);
    });
  });
}

describe("PTY transport under load", { skip: SKIP_WITHOUT_PTY }, () => {
  it("delivers every byte of a job's last output to a slow reader, 30 runs with CPU burners beside it", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < 30; run++) {
        const slow = () => {
          const until = performance.now() + 2;
          while (performance.now() < until);
        };
        const job = start("pty", 'for i in $(seq 1 3000); do echo "line $i of the output that matters"; done', slow);
        await job.closed;
        const lines = job.output().trimEnd().split("\n");
        assert.equal(lines.length, 3000, `run ${run}: ${lines.length} lines, last ${JSON.stringify(lines.at(-1))}`);
        assert.equal(lines.at(-1), "line 3000 of the output that matters", `run ${run}`);
        assertOrder(job.events);
      }
    } finally {
      stop();
    }
  });

  it("reports a leader that ends on Ctrl-D with its real status, never SIGHUP: 100 runs with CPU burners", async () => {
    const stop = startBurners(2);
    try {
      const hangups: number[] = [];
      for (let run = 0; run < 100; run++) {
        const job = start("pty", "exec cat");
        await job.transport.write(Buffer.from("x\n\x04"));
        await job.closed;
        if (job.exit()?.signal === "SIGHUP") hangups.push(run);
        else assert.deepEqual(job.exit(), { code: 0, signal: null }, `run ${run}`);
      }
      assert.deepEqual(hangups, [], "runs reported as killed by SIGHUP");
    } finally {
      stop();
    }
  });

  it("leaves no descriptor open after 50 jobs, and no job inherits another's terminal", async () => {
    const before = openFds().length;
    for (let run = 0; run < 50; run++) {
      const job = start("pty", "echo hi");
      await job.closed;
    }
    assert.ok(openFds().length <= before, `descriptors: ${before} before, ${openFds().length} after`);
    // A PTY job and, while it runs, a pipe job and another PTY job: neither holds the first one's master.
    const holder = start("pty", "echo up; sleep 30");
    await waitFor(() => holder.output().includes("up"), "the first PTY job");
    for (const kind of ["pipe", "pty"] as const) {
      const job = start(kind, "ls -l /proc/self/fd/");
      await job.closed;
      assert.doesNotMatch(job.output(), /ptmx|pi-unified-exec-[^/]+\/\d+\.log/, `${kind} job: ${job.output()}`);
    }
    holder.transport.signal("SIGKILL");
    await holder.closed;
  });
});
