/**
 * What a test process launched that outlives a failed test: Pi hosts, their scripted models, tmux
 * servers. Each helper registers how to stop what it started and unregisters once it closed it, so a
 * file that hits its ceiling (`test-logs.ts`) stops everything still running before it fails.
 */
import { readdirSync, readFileSync } from "node:fs";

type Stop = () => void;

const KEY = Symbol.for("pi-unified-exec/tests/launched");

function stops(): Set<Stop> {
  const holder = globalThis as { [KEY]?: Set<Stop> };
  holder[KEY] ??= new Set();
  return holder[KEY];
}

/** Registers a synchronous stop (signals, `rmSync`); returns the call that unregisters it. */
export function registerLaunched(stop: Stop): () => void {
  stops().add(stop);
  return () => {
    stops().delete(stop);
  };
}

/**
 * Stops everything registered, then SIGKILLs every process descended from this one and the groups
 * they lead (a Pi's jobs lead groups of their own). Linux reads the tree from /proc; elsewhere only
 * the registered stops run.
 */
export function stopEverythingLaunched(): void {
  const tree = descendants(process.pid);
  for (const stop of stops()) {
    try {
      stop();
    } catch {
      // Best effort: the rest still has to stop.
    }
  }
  stops().clear();
  killAll(tree);
}

/** SIGKILLs `pid` and every process descended from it, with the groups they lead (Linux: from /proc). */
export function killTree(pid: number): void {
  killAll([{ pid, leadsGroup: false }, ...descendants(pid)]);
}

function killAll(tree: { pid: number; leadsGroup: boolean }[]): void {
  for (const { pid, leadsGroup } of tree) {
    for (const target of leadsGroup ? [-pid, pid] : [pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

function descendants(root: number): { pid: number; leadsGroup: boolean }[] {
  const children = new Map<number, { pid: number; leadsGroup: boolean }[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const [ppid, pgid] = stat
        .slice(stat.lastIndexOf(")") + 2)
        .split(" ")
        .slice(1, 3)
        .map(Number);
      const pid = Number(name);
      children.set(ppid!, [...(children.get(ppid!) ?? []), { pid, leadsGroup: pgid === pid }]);
    } catch {
      // exited while we read
    }
  }
  const found: { pid: number; leadsGroup: boolean }[] = [];
  const visit = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      visit(child.pid);
    }
  };
  visit(root);
  return found;
}
