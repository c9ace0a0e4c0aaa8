/**
 * Holds SIGTERM and SIGHUP while the runtime stops its jobs, so a signal cannot cut their grace
 * short. Pi 1.4.0 in RPC mode removes its own handlers when stdin closes; a SIGTERM then (process
 * managers send one with the stdin close) would kill Node at once, midway through the grace. The
 * signal is remembered, and once the stop is done, if nothing else handles it any more, the process
 * ends as that signal would have ended it.
 */

const HELD: readonly NodeJS.Signals[] = ["SIGTERM", "SIGHUP"];

export async function holdSignalsWhile<T>(work: () => Promise<T>): Promise<T> {
  if (process.platform === "win32") return work();
  let received: NodeJS.Signals | undefined;
  const handlers = HELD.map((signal) => {
    const handler = () => {
      received ??= signal;
    };
    process.on(signal, handler);
    return { signal, handler };
  });
  try {
    return await work();
  } finally {
    for (const { signal, handler } of handlers) process.off(signal, handler);
    // With no handler left the default action applies: the process ends by that signal, as it would have.
    if (received && process.listenerCount(received) === 0) process.kill(process.pid, received);
  }
}
