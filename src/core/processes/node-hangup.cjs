// Loaded into the Node programs of a PTY job whose shell leads its session itself (macOS; through
// NODE_OPTIONS, see fd-hygiene.ts). Those jobs' processes start with SIGHUP ignored, so the hangup the
// kernel sends the terminal's foreground group when the shell exits ends nothing started with `&`;
// Node alone resets every signal to its default as it starts. A listener that does nothing keeps the
// job's rule and leaves the program's own SIGHUP listeners working; a hangup that lands before it is
// loaded still ends the program, which only Linux's wrapper prevents.
process.on("SIGHUP", () => {});
