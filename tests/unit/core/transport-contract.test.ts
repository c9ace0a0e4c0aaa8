/**
 * One contract for both transports: data any number of times, `exit` once, then `closed` once when the
 * output is drained; output a descendant prints after the exit is still delivered; a kill reaches the
 * job; `close` ends our side whatever still holds the streams; a write the child does not read never
 * holds the event loop. The same scenarios run on pipes and on a real PTY. On a PTY: every byte to a
 * slow reader, a Ctrl-D exit never reported as SIGHUP, no descriptor left (30 and 100 runs beside
 * CPU burners in `tests/stress/transport.test.ts`).
 */
import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import { describe, it } from "node:test";
import { escapedDaemonThenExit, StartedJobs } from "../../helpers/jobs.ts";
import { pidsIn, processAlive, quietFor, waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { assertOrder, ctrlDExit, slowReaderGetsEveryLine, startTransport } from "../../helpers/transports.ts";

const leftovers = new StartedJobs();

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
      const job = startTransport(kind, "echo hello; exit 3");
      await job.closed;
      assert.deepEqual(job.exit(), { code: 3, signal: null });
      assert.equal(job.output(), "hello\n");
      assertOrder(job.events);
    });

    it("output a descendant prints after the exit still arrives, and closed waits for it", async () => {
      // On a terminal the leader's exit hangs up its foreground group, as closing a terminal would.
      const job = startTransport(kind, "(trap '' HUP; sleep 0.4; echo late) & sleep 0.1; echo early");
      await job.exited;
      assert.doesNotMatch(job.output(), /late/);
      await job.closed;
      assert.equal(job.output(), "early\nlate\n");
      assertOrder(job.events);
    });

    it("a kill reaches the job and is reported as its signal", async () => {
      const job = startTransport(kind, "echo started; sleep 30");
      await waitFor(() => job.output().includes("started"), "the job to start");
      assert.equal(job.transport.signal("SIGTERM"), true);
      await job.closed;
      assert.deepEqual(job.exit(), { code: null, signal: "SIGTERM" });
      assertOrder(job.events);
    });

    it("close ends our side even while an escaped daemon holds the streams", async () => {
      // The leader waits until the daemon has left, so its exit cannot hang the daemon's terminal up.
      const job = startTransport(kind, escapedDaemonThenExit(30));
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
      const job = startTransport(kind, "read -r; stty size 2>/dev/null || echo none");
      if (kind === "pipe") assert.equal(job.transport.resize, undefined);
      else job.transport.resize!(90, 20);
      await job.transport.write(Buffer.from("go\n"));
      await job.closed;
      assert.match(job.output(), kind === "pipe" ? /none/ : /20 90/);
    });

    it("a write the child never reads stays pending without holding the event loop", async () => {
      const job = startTransport(kind, `${kind === "pty" ? "stty raw -echo; " : ""}echo ready; sleep 30`);
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

describe("PTY transport", { skip: SKIP_WITHOUT_PTY }, () => {
  it("delivers every byte of a job's last output to a slow reader", async () => {
    await slowReaderGetsEveryLine();
  });

  it("reports a leader that ends on Ctrl-D with its real status, never SIGHUP: 10 runs", async () => {
    for (let run = 0; run < 10; run++) assert.deepEqual(await ctrlDExit(), { code: 0, signal: null }, `run ${run}`);
  });

  it("leaves no descriptor open after 50 jobs, and no job inherits another's terminal", async () => {
    const before = openFds().length;
    for (let run = 0; run < 50; run++) {
      const job = startTransport("pty", "echo hi");
      await job.closed;
    }
    assert.ok(openFds().length <= before, `descriptors: ${before} before, ${openFds().length} after`);
    // A PTY job and, while it runs, a pipe job and another PTY job: neither holds the first one's master.
    const holder = startTransport("pty", "echo up; sleep 30");
    await waitFor(() => holder.output().includes("up"), "the first PTY job");
    for (const kind of ["pipe", "pty"] as const) {
      const job = startTransport(kind, "ls -l /proc/self/fd/");
      await job.closed;
      assert.doesNotMatch(job.output(), /ptmx|pi-unified-exec-[^/]+\/\d+\.log/, `${kind} job: ${job.output()}`);
    }
    holder.transport.signal("SIGKILL");
    await holder.closed;
  });
});
