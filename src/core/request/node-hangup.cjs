// Loaded into every Node program a PTY job starts (through NODE_OPTIONS, see shell.ts). A PTY job's
// processes start with SIGHUP ignored, so the hangup the kernel sends the terminal's foreground group
// when the job's shell exits ends nothing it started with `&`; Node alone resets every signal to its
// default as it starts, and `node server.js &` (or `npm run dev &`) died there. A listener that does
// nothing keeps the job's rule and leaves the program's own SIGHUP listeners working.
process.on("SIGHUP", () => {});
