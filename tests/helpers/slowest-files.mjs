// A second reporter for `npm test` and `npm run test:stress` (beside spec): once the run ends, the 15
// test files that took longest, each with its tests' time in its own process, so whoever makes the
// suite slower sees where. Plain JavaScript: the runner loads reporters before tsx applies.
import { relative } from "node:path";

export default async function* slowestFiles(source) {
  const files = [];
  for await (const event of source) {
    if (event.type === "test:summary" && event.data.file) files.push({ file: event.data.file, ms: event.data.duration_ms });
  }
  if (files.length === 0) return;
  files.sort((a, b) => b.ms - a.ms);
  yield `\nslowest test files (of ${files.length}):\n`;
  for (const { file, ms } of files.slice(0, 15)) yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(process.cwd(), file)}\n`;
}
