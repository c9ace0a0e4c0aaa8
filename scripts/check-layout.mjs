// The layout's rules, checked on every `npm test`: no source file over 600 lines, no function over 80,
// no import cycle between files, and between the folders of src/core no import against the order each
// folder's main file declares ("May import: …"). Type-only imports count: a cycle of types is still a
// cycle a reader has to untangle.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "src");
const CORE = join(SRC, "core");
const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 80;

/** Each folder of src/core and the file that opens with what the folder owns and may import. */
const FOLDERS = {
  shared: "constants.ts",
  output: "output-decoder.ts",
  screen: "job-screen.ts",
  processes: "process-table.ts",
  patterns: "line-pattern.ts",
  wait: "call-wait.ts",
  "wake-watch": "pattern-watch.ts",
  "input-wait": "input-wait.ts",
  log: "job-log.ts",
  transport: "spawn.ts",
  request: "request.ts",
  job: "job.ts",
  completion: "completion-ledger.ts",
  supervision: "orphan-guard.ts",
};

function sourceFiles(dir, found = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, found);
    else if (name.endsWith(".ts")) found.push(path);
  }
  return found;
}

const problems = [];
const files = sourceFiles(SRC);
const imports = new Map();

for (const file of files) {
  const text = readFileSync(file, "utf8");
  const name = relative(ROOT, file);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  if (source.getLineStarts().length > MAX_FILE_LINES)
    problems.push(`${name}: ${source.getLineStarts().length} lines (at most ${MAX_FILE_LINES})`);
  const targets = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
      if (lines > MAX_FUNCTION_LINES) {
        const label = node.name ? node.name.getText(source) : `function at line ${lineOf(node.getStart(source))}`;
        problems.push(`${name}: ${label} is ${lines} lines (at most ${MAX_FUNCTION_LINES})`);
      }
    }
    const specifier =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)
        ? node.moduleSpecifier.text
        : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0] ?? {})
          ? node.arguments[0].text
          : undefined;
    if (specifier?.startsWith(".")) targets.push(resolve(dirname(file), specifier));
    ts.forEachChild(node, visit);
  };
  visit(source);
  imports.set(file, targets);
}

// File cycles: a depth-first search that reports each cycle it closes once.
const state = new Map();
const stack = [];
const visitFile = (file) => {
  state.set(file, "open");
  stack.push(file);
  for (const target of imports.get(file) ?? []) {
    if (state.get(target) === "open") {
      const cycle = stack.slice(stack.indexOf(target)).concat(target);
      problems.push(`import cycle: ${cycle.map((path) => relative(ROOT, path)).join(" → ")}`);
    } else if (!state.has(target) && imports.has(target)) visitFile(target);
  }
  stack.pop();
  state.set(file, "done");
};
for (const file of files) if (!state.has(file)) visitFile(file);

// Folders of src/core: what each main file declares, and what its files import.
const folderOf = (file) => {
  const inCore = relative(CORE, file);
  if (inCore.startsWith("..")) return undefined;
  const parts = inCore.split(/[\\/]/);
  return parts.length > 1 ? parts[0] : "(root)";
};
const declared = new Map();
for (const [folder, main] of Object.entries(FOLDERS)) {
  const path = join(CORE, folder, main);
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    problems.push(`src/core/${folder}/${main}: missing (the folder's main file)`);
    continue;
  }
  const line = /May import: ([^\n.]*)/.exec(text.slice(0, 2_000));
  if (!line) {
    problems.push(`src/core/${folder}/${main}: no "May import:" line in its opening comment`);
    continue;
  }
  declared.set(
    folder,
    new Set(
      line[1]
        .split(/,\s*|\s+and\s+/)
        .map((word) => word.trim().replace(/[`/]/g, ""))
        .filter((word) => word && word !== "nothing"),
    ),
  );
}
for (const folder of new Set(files.map(folderOf).filter(Boolean))) {
  if (folder !== "(root)" && !(folder in FOLDERS))
    problems.push(`src/core/${folder}/: a folder without a main file in scripts/check-layout.mjs`);
}
for (const [file, targets] of imports) {
  const from = folderOf(file);
  if (!from || from === "(root)") continue;
  for (const target of targets) {
    const to = folderOf(target);
    if (to === undefined) problems.push(`${relative(ROOT, file)}: imports ${relative(ROOT, target)} from outside src/core`);
    else if (to === "(root)") problems.push(`${relative(ROOT, file)}: imports ${relative(ROOT, target)}, the core's entry`);
    else if (to !== from && !declared.get(from)?.has(to))
      problems.push(`${relative(ROOT, file)}: imports ${relative(ROOT, target)}, but ${from}/ may not import ${to}/`);
  }
}
// The declared order itself has no cycle.
const order = [];
const placed = new Set();
const place = (folder, path = []) => {
  if (placed.has(folder)) return;
  if (path.includes(folder)) {
    problems.push(`folders import each other: ${[...path.slice(path.indexOf(folder)), folder].join(" → ")}`);
    return;
  }
  for (const dependency of declared.get(folder) ?? []) place(dependency, [...path, folder]);
  placed.add(folder);
  order.push(folder);
};
for (const folder of declared.keys()) place(folder);

if (problems.length > 0) {
  console.error(`The layout's rules are broken:\n${problems.map((problem) => `- ${problem}`).join("\n")}`);
  process.exit(1);
}
console.log(
  `layout: ${files.length} files, no file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}, no import cycle; folders in order ${order.join(", ")}`,
);
