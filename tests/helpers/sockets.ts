import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "./hosts.ts";

/**
 * Sockets of the machine that belong to no job, and a subreaper to run a process under.
 *
 * `socketCrowd(pairs)` opens `pairs` connected TCP pairs on 127.0.0.1 (twice as many sockets in the
 * kernel's tables), in helper processes of 5 000 pairs each (a process may hold 20 000 descriptors
 * here). Each helper stops by itself after `seconds`, or when this process goes (its stdin closes);
 * `stop()` ends them at once. Loopback only: nothing leaves the machine. The helpers are Python,
 * whose blocking connect and accept open 5 000 pairs in under a second (Node took 5 s).
 */
const PAIRS_PER_HELPER = 5_000;

const CROWD = `
import resource, select, socket, sys
pairs, seconds = int(sys.argv[1]), float(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(512)
kept, opened = [], 0
for _ in range(pairs):
    try:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
    except OSError:
        break
    kept += [client, accepted]
    opened += 1
server.close()  # the listening socket goes; the connections stay
print("open", opened, flush=True)
select.select([sys.stdin], [], [], seconds)
`;

export interface SocketCrowd {
  /** Connected pairs open (each is two sockets). */
  pairs: number;
  stop(): void;
}

export async function socketCrowd(pairs: number, seconds = 120): Promise<SocketCrowd> {
  const helpers: ChildProcess[] = [];
  const opened: Promise<number>[] = [];
  for (let left = pairs; left > 0; left -= PAIRS_PER_HELPER) {
    const helper = spawn("python3", ["-c", CROWD, String(Math.min(left, PAIRS_PER_HELPER)), String(seconds)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    helpers.push(helper);
    opened.push(
      new Promise((resolve) => {
        let out = "";
        helper.stdout!.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const open = /open (\d+)/.exec(out);
          if (open) resolve(Number(open[1]));
        });
        helper.on("exit", () => resolve(0));
      }),
    );
  }
  const stop = () => {
    for (const helper of helpers) helper.kill("SIGKILL");
  };
  try {
    const open = (await Promise.all(opened)).reduce((sum, n) => sum + n, 0);
    return { pairs: open, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/**
 * `python3 subreaper.py CMD…`: runs CMD as the child of a process marked a child subreaper
 * (`prctl(PR_SET_CHILD_SUBREAPER)`, as `systemd --user` is on a desktop): an orphan below it is
 * re-parented to it rather than to pid 1. It passes on SIGTERM, SIGINT and SIGHUP, reaps orphans,
 * and exits with CMD's status when CMD ends.
 */
export const SUBREAPER = join(REPO_ROOT, "tests", "helpers", "subreaper.py");
