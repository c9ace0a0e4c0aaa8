/*
 * Runs before `npm test`, `npm start` and `npm run demo`: on a Node older than the one this project
 * needs, stop with one sentence that says what to do, instead of the riddles an old Node produces
 * further on (a glob the test runner does not expand, a SyntaxError inside Pi).
 *
 * It must itself run on any Node, however old, so it is CommonJS (`.cjs`: no module flags needed)
 * written in plain ES5-era JavaScript, and it stays silent when the Node is new enough.
 *
 * `--node-version X.Y.Z` checks that version instead of the running one (the tests use it to see the
 * refusal without installing an old Node).
 */
"use strict";

var REQUIRED = [22, 19, 0];

function parseVersion(text) {
  var match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(text));
  if (!match) return null;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

function isOlder(have, need) {
  for (var i = 0; i < 3; i++) {
    if (have[i] !== need[i]) return have[i] < need[i];
  }
  return false;
}

var argv = process.argv.slice(2);
var versionText = process.versions.node;
var flag = argv.indexOf("--node-version");
if (flag !== -1) versionText = argv[flag + 1];

var version = parseVersion(versionText);
if (!version) {
  process.stderr.write("preflight: --node-version needs a version such as 20.11.1, got " + JSON.stringify(versionText) + "\n");
  process.exit(2);
}

if (isOlder(version, REQUIRED)) {
  process.stderr.write(
    "Node " +
      version.join(".") +
      " is too old for pi-unified-exec, which needs Node " +
      REQUIRED.slice(0, 2).join(".") +
      " or newer: switch to one, or install Node 22 for this project with" +
      ' `npm install --prefix "$HOME/.cache/pi-unified-exec/node22" node@22`' +
      ' and put it first on PATH with `export PATH="$HOME/.cache/pi-unified-exec/node22/node_modules/node/bin:$PATH"`.\n',
  );
  process.exit(1);
}
