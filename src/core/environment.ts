/**
 * The environment a job runs with: the host's, plus what keeps a command from waiting on a human
 * nobody is there to be. A command can still set its own (`PAGER=less git log`).
 */
export function jobEnvironment(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...base,
    // A pager would wait for a keypress that never comes: `git log` would hang a build forever.
    PAGER: "cat",
    GIT_PAGER: "cat",
    GH_PAGER: "cat",
    // Without a terminal no editor can work; `git commit` / `git rebase -i` would otherwise block.
    GIT_EDITOR: ":",
  };
}
