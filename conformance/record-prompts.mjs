// Runs Pi 1.6.0's `buildSystemPrompt` on every case of prompt-cases-16.json and writes what it
// built to vectors-prompt-16.json: the whole prompt and its sections by name, in order.
//   PI_DIR=<dir holding node_modules/@earendil-works/pi-coding-agent@1.6.0> node record-prompts.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { formatJson } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.join(process.env.PI_DIR ?? "", "node_modules", "@earendil-works", "pi-coding-agent");
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
if (pkg.version !== "1.6.0") throw new Error(`expected pi-coding-agent 1.6.0, found ${pkg.version}`);
const { buildSystemPrompt, buildSystemPromptSections } = await import(
  pathToFileURL(path.join(pkgDir, "dist", "core", "system-prompt.js")).href
);

const { cases } = JSON.parse(fs.readFileSync(path.join(here, "prompt-cases-16.json"), "utf8"));
const results = cases.map((testCase) => {
  const input = {
    customPrompt: testCase.customPrompt,
    appendSystemPrompt: testCase.append.join("\n\n"),
    contextFiles: testCase.contextFiles,
    skills: testCase.skills.map((skill) => ({ disableModelInvocation: false, ...skill })),
    cwd: testCase.cwd,
    ...(testCase.selectedTools ? { selectedTools: testCase.selectedTools } : {}),
  };
  const sections = buildSystemPromptSections(input);
  return {
    name: testCase.name,
    prompt: buildSystemPrompt(input),
    sections: Object.entries(sections).map(([name, text]) => ({ name, text })),
  };
});
fs.writeFileSync(path.join(here, "vectors-prompt-16.json"), formatJson({ pi: pkg.version, results }));
