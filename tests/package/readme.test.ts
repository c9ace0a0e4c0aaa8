/**
 * The README is someone's first five minutes: a "Try it" block at the top (the demo, the Node it
 * needs, how to get Pi and which version each way gives, why a global `pi` can fail in another
 * terminal, npm 11's harmless warning, one figure for `npm test`), under 300 lines, no command that
 * would install the unrelated package holding our name on the registry, the same Node 22 lines the
 * preflight names, the words a newcomer trips on (a wake, a session, what `set_on_exit` arms) said
 * before they are needed, every example result with its status line, a "Type into a job" section
 * with the overlay, and no relative link to a file or heading that is not there. Reads files only:
 * no Pi host, no process.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/hosts.ts";

const README = join(REPO_ROOT, "README.md");
const text = readFileSync(README, "utf8");
const lines = text.split("\n");

/** The lines of the `## <title>` section, up to the next `## ` heading. */
function section(title: string): { start: number; body: string } {
  const start = lines.indexOf(`## ${title}`);
  assert.notEqual(start, -1, `no "## ${title}" heading`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith("## "));
  return { start, body: lines.slice(start + 1, end === -1 ? undefined : end).join("\n") };
}

/** The text of every fenced code block, in order. */
function codeBlocks(): string[] {
  const blocks: string[] = [];
  let open: string[] | undefined;
  for (const line of lines) {
    if (!line.startsWith("```")) open?.push(line);
    else if (open) {
      blocks.push(open.join("\n"));
      open = undefined;
    } else open = [];
  }
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown file's headings, outside code blocks. */
function anchorsIn(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...prose.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

describe("the README", () => {
  it('opens with "Try it" in its first 30 lines: the demo, Node 22.19, and how to get Pi', () => {
    const tryIt = section("Try it");
    assert.ok(tryIt.start < 30, `"## Try it" is on line ${tryIt.start + 1}`);
    for (const needed of ["npm install", "npm run demo", "Node 22.19", "npm install -g @earendil-works/pi-coding-agent", "npx pi"])
      assert.ok(tryIt.body.includes(needed), `"Try it" does not name ${needed}`);
  });

  it("says which Pi `npx pi` and `npm start` run, as package.json and the lockfile pin them", () => {
    const { body } = section("Try it");
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version: string }>;
    };
    const baseline = manifest.devDependencies["@earendil-works/pi-coding-agent"]!;
    const newest = lock.packages["node_modules/pi-coding-agent-latest"]!.version;
    assert.match(body, new RegExp(`\`npx pi[^\`]*\` runs Pi ${baseline.replace(/\./g, "\\.")}\\b`));
    assert.match(body, new RegExp(`\`npm start\` runs\\s+Pi ${newest.replace(/\./g, "\\.")}\\b`));
  });

  it("explains a global pi that stops with enableCompileCache, npm 11's allowScripts warning, and gives one figure for npm test", () => {
    const { body } = section("Try it");
    assert.match(body, /runs on\s+the first `node` on PATH[\s\S]*SyntaxError … enableCompileCache/);
    assert.match(body, /allowScripts": harmless/);
    const timed = lines.filter((line) => /npm test/.test(line) && /\bminutes?\b|\bmin\b/.test(line));
    assert.equal(timed.length, 1, `one figure for npm test, not ${timed.length}: ${timed.join(" / ")}`);
  });

  it("defines a wake before its first use, and says that a session_id names a job and that set_on_exit arms line wakes too", () => {
    const prose = text.replace(/^```[\s\S]*?^```/gm, "");
    const first = prose.search(/\bwak(e|es|ing|en)\b/i);
    assert.equal(first, prose.indexOf("*wake*") + 1, "the first use is the definition");
    assert.match(prose, /`session_id`: the job's number \(the tools,\s+the picker and the footer call a job a session\)/);
    assert.match(prose, /`set_on_exit` arms or disarms both kinds of wake/);
    assert.match(prose, /\(`wake_on_pattern`\)/);
  });

  it("shows every example call's result with its status line", () => {
    for (const block of codeBlocks()) {
      const calls = `${block}\n`.split(/^(?=> \w+ \{)/m).filter((part) => part.startsWith("> "));
      for (const call of calls) {
        const [line, result] = [call.slice(0, call.indexOf("\n")), call.slice(call.indexOf("\n") + 1).trim()];
        if (result) assert.match(result, /^\[[a-z ,_]+\]\n/, `${line} shows a result without its status line`);
      }
    }
  });

  it("says the examples keep their jobs' logs", () => {
    assert.match(text, /`examples\/` folder[\s\S]*?keep their jobs' logs/);
  });

  it("ends under 300 lines", () => {
    assert.ok(lines.length < 300, `${lines.length} lines`);
  });

  it("shows no command that installs the unrelated pi-unified-exec on the registry", () => {
    // The tested tarball form, npm:pi-unified-exec@file:<path>, is ours; the bare name is not.
    const wrong = [
      /\bpi\s+(install|add|-e)\s+(-l\s+)?npm:pi-unified-exec(?!@file:)/,
      /\bnpm\s+(install|i|add)\s+(-g\s+)?pi-unified-exec(?![\w@-])/,
    ];
    for (const [i, line] of lines.entries()) for (const pattern of wrong) assert.doesNotMatch(line, pattern, `line ${i + 1}: ${line}`);
  });

  it("gives the Node 22 lines the preflight names for an older Node", () => {
    const refusal = spawnSync(process.execPath, [join(REPO_ROOT, "scripts", "preflight.cjs"), "--node-version", "20.0.0"], {
      encoding: "utf8",
    }).stderr;
    const commands = [...refusal.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    assert.ok(
      commands.some((command) => command.includes("node@22")),
      refusal,
    );
    const tryIt = section("Try it").body;
    for (const command of commands) assert.ok(tryIt.includes(command), `"Try it" lacks ${command}`);
  });

  it('has a "Type into a job" section with the overlay, as docs/reference.md draws it', () => {
    const { body } = section("Type into a job");
    const header = "session 1 · you are typing into the job · Ctrl+] returns to Pi";
    assert.ok(body.includes(header), "the overlay's capture");
    assert.ok(readFileSync(join(REPO_ROOT, "docs", "reference.md"), "utf8").includes(header), "the same capture in the reference");
    assert.match(body, /ask_user/);
    assert.match(body, /Type into it/);
  });

  it("links only to files and headings that exist", () => {
    const prose = text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
    const targets = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
    const relative = targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
    assert.ok(relative.length > 0, "no relative link found");
    for (const target of relative) {
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const file = path === "" ? README : join(dirname(README), decodeURIComponent(path));
      assert.ok(existsSync(file), `${target}: no such file`);
      if (anchor !== undefined) assert.ok(anchorsIn(readFileSync(file, "utf8")).has(anchor), `${target}: no such heading`);
    }
  });
});
