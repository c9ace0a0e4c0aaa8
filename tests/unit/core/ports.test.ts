/**
 * Ports a job cannot get or gives back, readiness by HTTP, a server gone deaf and a job's memory, on
 * plain data: the bind-failure lines we recognise and the port each names (or the command's, for
 * Python's), the wait for a killed job's ports (its interleavings forced by a scripted reader), the
 * `until_listening` URLs accepted and refused, the HTTP wait on a stepped clock with a scripted GET,
 * the deaf rule, the monitor's decisions (one stop per tick over the cap, one notice per loss), what
 * counts as a noticeable change of memory, the cap's setting, and the fallbacks off Linux.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { WAKE_DEBOUNCE_MS } from "../../../src/core/completion/completion-ledger.ts";
import type { Job } from "../../../src/core/job/job.ts";
import { noticeable } from "../../../src/core/job/job-reports.ts";
import { pipeCommand, raiseOomScore } from "../../../src/core/processes/fd-hygiene.ts";
import { deafness, hear, ListeningPorts, type Usage } from "../../../src/core/processes/listening.ts";
import { bindFailures, failedPorts, portsStillHeld } from "../../../src/core/processes/port-conflicts.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { JobMonitor, memoryCap } from "../../../src/core/supervision/job-monitor.ts";
import { checkUntilListening, type HttpProbe, ListenWatch } from "../../../src/core/wait/listen-watch.ts";
import { SteppedClock } from "../../helpers/clock.ts";
import { waitFor } from "../../helpers/processes.ts";
import { steppedWakes } from "../../helpers/stepped-ledger.ts";

const MB = 1024 * 1024;

describe("the bind failures a job's output may say", () => {
  it("Node, Python, Go, uvicorn, vite, next and Django name their port (or Python none); other lines are no failure", () => {
    const lines: [string, number | undefined][] = [
      ["Error: listen EADDRINUSE: address already in use :::3000", 3000],
      ["Error: listen EADDRINUSE: address already in use 127.0.0.1:8080", 8080],
      ["OSError: [Errno 98] Address already in use", undefined],
      ["listen tcp :9090: bind: address already in use", 9090],
      ["ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): address already in use", 8000],
      ["Port 5173 is in use, trying another one...", 5173],
      [" ⚠ Port 3000 is in use, trying 3001 instead.", 3000],
      ["Error: That port is already in use.", undefined],
    ];
    for (const [line, port] of lines) assert.deepEqual(bindFailures(`starting\n${line}\n`), [{ ...(port ? { port } : {}), line }], line);
    for (const line of ["the port is used by nginx", "in use: 3 of 8 slots", "GET /users 200", "address 127.0.0.1:3000 ready"])
      assert.deepEqual(bindFailures(line), [], line);
  });

  it("a crash loop printing the same failure names its port once; at most four failures", () => {
    const loop = Array.from({ length: 10 }, () => "Error: listen EADDRINUSE: address already in use :::3000").join("\n");
    assert.equal(bindFailures(loop).length, 1);
    const many = Array.from({ length: 10 }, (_, i) => `Port ${3000 + i} is in use`).join("\n");
    assert.equal(bindFailures(many).length, 4);
  });

  it("a failure that names no port takes the port-like numbers of the command; one that names it, only that", () => {
    const python = bindFailures("OSError: [Errno 98] Address already in use");
    assert.deepEqual(failedPorts(python, "python3 -m http.server 8000"), [8000]);
    assert.deepEqual(failedPorts(python, "uvicorn app:main --port=8001 --workers 4"), [8001]);
    assert.deepEqual(failedPorts(python, "python3 server.py"), []);
    assert.deepEqual(failedPorts(bindFailures("EADDRINUSE :::3000"), "PORT=4000 node server.js"), [3000]);
    assert.deepEqual(failedPorts([], "python3 -m http.server 8000"), []);
  });
});

describe("a killed job's ports", () => {
  const script = (...answers: (number[] | undefined)[]) => {
    let at = 0;
    return () => {
      const answer = answers[Math.min(at++, answers.length - 1)];
      return answer && new Set(answer);
    };
  };

  it("a port still listened on at the first look and freed at the third is released, after the third look", async () => {
    const listened = script([3000, 5173, 9999], [3000, 9999], [9999]);
    assert.deepEqual(await portsStillHeld([3000, 5173], 2_000, listened, 1), []);
  });

  it("a port freed right after the processes ended (no look in between) is released at the first look", async () => {
    assert.deepEqual(await portsStillHeld([3000], 2_000, script([]), 1), []);
  });

  it("a port held past the bound is still held; tables that cannot be read say nothing", async () => {
    const started = performance.now();
    assert.deepEqual(await portsStillHeld([3000, 5173], 60, script([3000]), 5), [3000]);
    assert.ok(performance.now() - started >= 55);
    assert.equal(await portsStillHeld([3000], 60, script(undefined), 5), undefined);
  });
});

describe("until_listening with a URL", () => {
  const untouched = "Nothing was started.";

  it("an http URL on this machine or a path is a target; the port defaults to 80 and the query is kept", () => {
    assert.deepEqual(checkUntilListening("http://127.0.0.1:3000/health", untouched), {
      kind: "http",
      path: "/health",
      host: "127.0.0.1",
      port: 3000,
    });
    assert.deepEqual(checkUntilListening("http://localhost/ready?deep=1", untouched), {
      kind: "http",
      path: "/ready?deep=1",
      host: "localhost",
      port: 80,
    });
    assert.deepEqual(checkUntilListening("http://[::1]:5173/", untouched), { kind: "http", path: "/", host: "::1", port: 5173 });
    assert.deepEqual(checkUntilListening("/health", untouched), { kind: "http", path: "/health" });
  });

  it("another host, another scheme, credentials, a port as a string or junk are refused with what is allowed and what did not happen", () => {
    const refused: [string, RegExp][] = [
      ["http://example.com/health", /on this machine/],
      ["http://10.255.255.1:3000/", /on this machine/],
      ["https://127.0.0.1:3000/", /an http:\/\/ URL \(not https:\)/],
      ["ftp://localhost/", /not ftp:/],
      ["http://user:pw@127.0.0.1:3000/", /without credentials/],
      ["3000", /a number for a port/],
      ["health", /an http:\/\/ URL or a path/],
      ["/he alth", /without spaces/],
    ];
    for (const [value, why] of refused) {
      assert.throws(
        () => checkUntilListening(value, untouched),
        (error: unknown) =>
          error instanceof ExecRequestError &&
          why.test(error.message) &&
          /^until_listening must be true .* or a TCP port from 1 to 65535, got .*\. Nothing was started\.$/.test(error.message),
        value,
      );
    }
  });

  /** A watch on a stepped clock whose GETs answer from `answers` (undefined: no answer in time), each after `latency` ms. */
  const watch = (target: string, addresses: string[], answers: (number | undefined)[]) => {
    const clock = new SteppedClock();
    const asked: string[] = [];
    const probe: HttpProbe = async (host, port, path) => {
      asked.push(`${host}:${port}${path}`);
      return answers.shift();
    };
    let met: string | undefined;
    const onMet = (address: string) => {
      met = address;
    };
    const listen = new ListenWatch(checkUntilListening(target, "")!, () => addresses, onMet, clock, 100, probe);
    return { clock, asked, listen, met: () => met };
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("the wait ends at the first answer below 500, with its status; 503 and no answer wait on", async () => {
    const w = watch("http://127.0.0.1:3000/health", ["127.0.0.1:3000"], [undefined, 503, 200]);
    w.listen.start();
    await settle();
    for (let i = 0; i < 2; i++) {
      w.clock.advance(100);
      await settle();
    }
    assert.deepEqual(w.asked, ["127.0.0.1:3000/health", "127.0.0.1:3000/health", "127.0.0.1:3000/health"]);
    assert.equal(w.met(), "127.0.0.1:3000");
    assert.equal(w.listen.status, 200);
    assert.deepEqual(w.listen.listening, ["127.0.0.1:3000"]);
  });

  it("a URL on a port the job does not listen on is never asked: another process answering there is not the job", async () => {
    const w = watch("http://127.0.0.1:3000/", ["127.0.0.1:4000"], [200]);
    w.listen.start();
    w.clock.advance(500);
    await settle();
    assert.deepEqual(w.asked, []);
    assert.equal(w.met(), undefined);
  });

  it("a path asks the job's own lowest port, on loopback for an address bound to every interface", async () => {
    const w = watch("/health", ["0.0.0.0:5173", "[::]:24678"], [404]);
    w.listen.start();
    await settle();
    assert.deepEqual(w.asked, ["127.0.0.1:5173/health"]);
    assert.equal(w.listen.status, 404, "any status below 500 is an answer");
  });

  it("a path asks the job's ports in turn: a database on the lowest that answers no HTTP does not hold the wait", async () => {
    const w = watch("/health", ["127.0.0.1:5432", "127.0.0.1:8000"], [undefined, 200]);
    w.listen.start();
    await settle();
    w.clock.advance(100);
    await settle();
    assert.deepEqual(w.asked, ["127.0.0.1:5432/health", "127.0.0.1:8000/health"]);
    assert.equal(w.met(), "127.0.0.1:8000");
  });

  it("a GET in flight ends with the wait", async () => {
    const signals: AbortSignal[] = [];
    const probe: HttpProbe = (_host, _port, _path, _timeoutMs, signal) => {
      signals.push(signal);
      return new Promise(() => {}); // never answers
    };
    const listen = new ListenWatch(
      checkUntilListening("/", "")!,
      () => ["127.0.0.1:3000"],
      () => {},
      new SteppedClock(),
      100,
      probe,
    );
    listen.start();
    assert.equal(signals.length, 1);
    assert.equal(signals[0]!.aborted, false);
    listen.stop();
    assert.equal(signals[0]!.aborted, true);
  });

  it("a server that trickles its answer is let go after a try's second (real sockets)", async () => {
    const closed: number[] = [];
    const server = createServer((socket) => {
      const opened = performance.now();
      const drip = setInterval(() => socket.write("H"), 100); // never a whole status line
      socket.on("close", () => {
        clearInterval(drip);
        closed.push(performance.now() - opened);
      });
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(server.address() as { port: number }).port}`;
    const listen = new ListenWatch(
      checkUntilListening(`http://${address}/`, "")!,
      () => [address],
      () => {},
    );
    try {
      listen.start();
      await waitFor(() => closed.length >= 1, "the first try let go", 10_000);
      assert.ok(closed[0]! < 5_000, `let go after ${Math.round(closed[0]!)} ms, not held by the trickle`);
      assert.equal(listen.address, undefined, "no answer, no end");
    } finally {
      listen.stop();
      server.close();
    }
  });
});

describe("a server that goes deaf", () => {
  it("a job that listened and listens on nothing is deaf 2 s after the first read that saw it closed; listening again ends it", () => {
    let hearing = hear(undefined, [], 0);
    assert.equal(hearing, undefined, "a job that never listened never goes deaf");
    hearing = hear(hearing, ["127.0.0.1:3000"], 1_000);
    hearing = hear(hearing, [], 5_000);
    assert.equal(deafness(hearing, 6_999), undefined);
    assert.deepEqual(deafness(hearing, 7_000), { was: ["127.0.0.1:3000"], closedAt: 5_000, closedMs: 2_000 });
    hearing = hear(hearing, [], 9_000);
    assert.deepEqual(deafness(hearing, 19_000), { was: ["127.0.0.1:3000"], closedAt: 5_000, closedMs: 14_000 }, "the same loss");
    hearing = hear(hearing, ["127.0.0.1:3001"], 20_000);
    assert.equal(deafness(hearing, 30_000), undefined);
  });
});

describe("the monitor's decisions", () => {
  const job = (id: number) => ({ id }) as Job;

  /** A host answering from scripted state; records what it was told. */
  const host = (jobs: Job[]) => {
    const state = { usage: new Map<number, Usage>() as Map<number, Usage> | undefined, deaf: new Map() };
    const told = { overCap: [] as number[], deaf: [] as number[] };
    return {
      state,
      told,
      host: {
        running: () => jobs,
        measure: () => state.usage,
        deafness: () => state.deaf,
        overCap: (over: Job) => told.overCap.push(over.id),
        deaf: (lost: Job) => told.deaf.push(lost.id),
      },
    };
  };

  it("a job whose processes hold more than the cap is stopped; one at the cap is not", () => {
    const { state, told, host: h } = host([job(1), job(2)]);
    state.usage!.set(1, { rssBytes: 301 * MB, cpuMs: 0 });
    state.usage!.set(2, { rssBytes: 300 * MB, cpuMs: 0 });
    new JobMonitor(h, 300 * MB).tick();
    assert.deepEqual(told.overCap, [1]);
  });

  it("where memory cannot be read (macOS, Windows: platform mocked) nothing is stopped", () => {
    const { state, told, host: h } = host([job(1)]);
    state.usage = new ListeningPorts("x:", "darwin").measure([{ jobId: 1, leader: 1, groups: [1] }]);
    assert.equal(state.usage, undefined);
    new JobMonitor(h, 1).tick();
    assert.deepEqual(told.overCap, []);
    assert.equal(raiseOomScore(process.pid, "darwin"), false, "no oom_score_adj off Linux");
  });

  it("a deaf server is told once per loss, and again only after it listened again", () => {
    const { state, told, host: h } = host([job(1)]);
    const monitor = new JobMonitor(h, undefined);
    state.deaf.set(1, { was: ["127.0.0.1:3000"], closedAt: 5_000, closedMs: 2_000 });
    monitor.tick();
    state.deaf.set(1, { was: ["127.0.0.1:3000"], closedAt: 5_000, closedMs: 3_000 });
    monitor.tick();
    assert.deepEqual(told.deaf, [1]);
    state.deaf.delete(1);
    monitor.tick();
    state.deaf.set(1, { was: ["127.0.0.1:3000"], closedAt: 9_000, closedMs: 2_000 });
    monitor.tick();
    assert.deepEqual(told.deaf, [1, 1]);
  });

  it("with the cap off, a tick reads no memory", () => {
    const { told, host: h } = host([job(1)]);
    let measured = 0;
    const measure = () => {
      measured++;
      return undefined;
    };
    new JobMonitor({ ...h, measure }, undefined).tick();
    assert.equal(measured, 0);
    assert.deepEqual(told, { overCap: [], deaf: [] });
  });
});

describe("a deaf server's notice at the decision point", () => {
  const deaf = (jobId: number) => ({ jobId, command: `server ${jobId}`, was: ["127.0.0.1:3000"], closedMs: 2_000 });
  /** The notice as it goes out `heldMs` after it was queued: deaf that much longer. */
  const deafFor = (jobId: number, heldMs: number) => ({ ...deaf(jobId), closedMs: 2_000 + heldMs });

  it("goes out once after the debounce with a wake armed (the exit's, or only a pattern), never without one", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.arm(1);
    ledger.armPattern(2, "ERROR", "server 2");
    for (const jobId of [1, 2, 3]) ledger.deafServer(deaf(jobId));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, [{ jobs: [], more: 0, deaf: [deafFor(1, WAKE_DEBOUNCE_MS), deafFor(2, WAKE_DEBOUNCE_MS)] }]);
    clock.advance(10_000);
    assert.equal(sent.length, 1);
    assert.equal(ledger.exitLevel(1), "wake", "the exit's wake is untouched");
  });

  it("is held while Pi runs and dropped by a call on the job before the run settles; an exit goes with it as one prompt", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.arm(1);
    ledger.arm(2);
    ledger.arm(3);
    ledger.runStarted();
    ledger.deafServer(deaf(1));
    ledger.deafServer(deaf(2));
    ledger.lease(undefined, 1); // a call on the job
    const exit = { jobId: 3, command: "c", cwd: "/", exitCode: 0, signal: null, elapsedMs: 5, logPath: "/l" };
    ledger.jobExited(exit);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 0, "held while the run goes on");
    ledger.runSettled();
    assert.deepEqual(sent, [{ jobs: [exit], more: 0, deaf: [deafFor(2, WAKE_DEBOUNCE_MS)] }]);
  });

  it("is dropped at the decision when the server listens again meanwhile; one still deaf says how long as it goes out", () => {
    const { clock, sent, hearing, ledger } = steppedWakes();
    ledger.arm(1);
    ledger.arm(2);
    ledger.runStarted();
    ledger.deafServer(deaf(1));
    ledger.deafServer(deaf(2));
    clock.advance(60_000); // the run goes on a minute
    hearing.add(1); // job 1's server restarted and listens again
    ledger.runSettled();
    assert.deepEqual(sent, [{ jobs: [], more: 0, deaf: [deafFor(2, 60_000)] }]);
  });

  it("never goes out while a stop on purpose is under way, nor does an input wait; a stop that failed lets later ones go", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.arm(1);
    const restore = ledger.hold(1); // the picker's kill: SIGTERM sent, the grace running
    ledger.deafServer(deaf(1));
    ledger.inputWaits({ jobId: 1, command: "server 1", waitedMs: 30_000, line: "Password:" });
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, [], "nothing during the stop");
    restore(); // the stop failed: the job runs on with its wake
    ledger.deafServer(deaf(1));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, [{ jobs: [], more: 0, deaf: [deafFor(1, WAKE_DEBOUNCE_MS)] }]);
  });
});

describe("a job's memory", () => {
  it(
    "a pipe job on Linux starts through a wrapper that raises its score before the program runs; where bash would change what it passes on, after the spawn",
    {
      skip: process.platform !== "linux" && "Linux only",
    },
    () => {
      const wrapped = pipeCommand("/bin/sh", ["-c", "make"], {}, "linux");
      assert.equal(wrapped.raised, true);
      assert.deepEqual(wrapped.args.slice(-3), ["/bin/sh", "-c", "make"]);
      assert.match(wrapped.args.at(-4)!, /^\{ echo \d+ >\/proc\/self\/oom_score_adj; \} 2>\/dev\/null; exec "\$0" "\$@"$/);
      for (const env of [{ SHELLOPTS: "braceexpand" }, { BASHOPTS: "extglob" }])
        assert.deepEqual(pipeCommand("/bin/sh", ["-c", "make"], env, "linux"), { file: "/bin/sh", args: ["-c", "make"], raised: false });
      assert.deepEqual(
        pipeCommand("/bin/sh", ["-c", "make"], {}, "darwin"),
        { file: "/bin/sh", args: ["-c", "make"], raised: false },
        "macOS: platform mocked",
      );
    },
  );

  it("a result says it again when it moved by 100 MB, or doubled or halved from 50 MB up", () => {
    assert.equal(noticeable(undefined, 20 * MB), false, "small jobs say nothing");
    assert.equal(noticeable(undefined, 60 * MB), true);
    assert.equal(noticeable(60 * MB, 110 * MB), false);
    assert.equal(noticeable(60 * MB, 120 * MB), true, "doubled");
    assert.equal(noticeable(200 * MB, 290 * MB), false);
    assert.equal(noticeable(200 * MB, 300 * MB), true, "+100 MB");
    assert.equal(noticeable(300 * MB, 150 * MB), true, "halved");
    assert.equal(noticeable(4_000 * MB, 4_090 * MB), false);
  });

  it("the cap: the person's setting in MB, 0 off, half the machine's memory otherwise (a typo too)", () => {
    const machine = 16_000 * MB;
    assert.equal(memoryCap({ PI_UNIFIED_EXEC_MAX_JOB_RSS_MB: "300" }, machine), 300 * MB);
    assert.equal(memoryCap({ PI_UNIFIED_EXEC_MAX_JOB_RSS_MB: "0" }, machine), undefined);
    assert.equal(memoryCap({}, machine), 8_000 * MB);
    assert.equal(memoryCap({ PI_UNIFIED_EXEC_MAX_JOB_RSS_MB: "3OO" }, machine), 8_000 * MB);
  });
});
