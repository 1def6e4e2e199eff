// Runs Pi 1.6.0's `edit` tool on every case of edit-cases-16.json and writes what it did to
// vectors-edit-16.json: for each case, `ok` and the file's text after the call (unchanged when the
// call failed), or the error's message. The file lives in memory (the tool's `operations`).
//   PI_DIR=<dir holding node_modules/@earendil-works/pi-coding-agent@1.6.0> node record-edits.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { formatJson } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.join(process.env.PI_DIR ?? "", "node_modules", "@earendil-works", "pi-coding-agent");
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
if (pkg.version !== "1.6.0") throw new Error(`expected pi-coding-agent 1.6.0, found ${pkg.version}`);
const { createEditToolDefinition } = await import(
  pathToFileURL(path.join(pkgDir, "dist", "core", "tools", "edit.js")).href
);

const { cases } = JSON.parse(fs.readFileSync(path.join(here, "edit-cases-16.json"), "utf8"));
const results = [];
for (const testCase of cases) {
  const files = new Map([["/project/file.txt", Buffer.from(testCase.file, "utf-8")]]);
  const operations = {
    readFile: async (file) => files.get(file),
    writeFile: async (file, content) => void files.set(file, Buffer.from(content, "utf-8")),
    access: async () => {},
  };
  const tool = createEditToolDefinition("/project", { operations });
  const input = tool.prepareArguments({ path: "file.txt", ...structuredClone(testCase.arguments) });
  let outcome;
  try {
    await tool.execute("call", input, undefined, undefined, { cwd: "/project" });
    outcome = { ok: true };
  } catch (error) {
    outcome = { ok: false, error: error.message };
  }
  results.push({ name: testCase.name, ...outcome, file: files.get("/project/file.txt").toString("utf-8") });
}
fs.writeFileSync(path.join(here, "vectors-edit-16.json"), formatJson({ pi: pkg.version, results }));
