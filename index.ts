/**
 * The package's entry, the one file package.json's "pi" manifest names. It lives at the package root
 * rather than in src/ for the name Pi shows: Pi's list of loaded extensions names an extension loaded
 * from a path after the folder that holds its index file, so ./src/index.ts read "src", while this
 * one reads as the checkout's folder (pi-unified-exec in a fresh clone) and, installed from npm, as
 * the package's name. docs/decisions.md#packaging-install-and-the-demo says what Pi does in each case.
 */
export { default } from "./src/index.ts";
