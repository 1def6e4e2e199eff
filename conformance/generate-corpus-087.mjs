#!/usr/bin/env node
// Deterministic generator of conformance/corpus-087/*.jsonl: session files using
// what Pi 0.87 added to the format (context_edit and usage entries, system
// messages, compactions with systemMessage or keeping nothing, omitted recovery
// attempts), plus a BOM-prefixed file. Hand-shaped after real sessions; ids are
// fixed per file, timestamps advance from a per-file base by seeded steps.
//
// Usage: node conformance/generate-corpus-087.mjs [outDir]   (default: conformance/corpus-087)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fnv1a, mulberry32 } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(process.argv[2] ?? path.join(HERE, "corpus-087"));
const BASE_MS = Date.UTC(2026, 8, 1, 8, 0, 0, 0);
const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const usage = (input, output, cacheRead = 0) => ({
  input,
  output,
  cacheRead,
  cacheWrite: 0,
  totalTokens: input + output + cacheRead,
  cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 + cacheRead * 3e-7 },
});
const lorem = (words, seed) => {
  const rand = mulberry32(fnv1a(seed));
  const vocab = ["fn", "parse", "the", "session", "file", "returns", "an", "error", "when", "entry", "is", "missing", "context", "edit", "tokens", "compaction", "cut", "point", "branch", "summary"];
  const out = [];
  for (let i = 0; i < words; i++) out.push(vocab[Math.floor(rand() * vocab.length)]);
  return out.join(" ");
};

class File {
  constructor(name) {
    this.name = name;
    this.rand = mulberry32(fnv1a(name));
    this.clock = BASE_MS + (fnv1a(name) % 3_600_000);
    this.lines = [];
    this.leaf = null;
    this.n = 0;
    this.prefix = "";
  }
  iso() {
    this.clock += 500 + Math.floor(this.rand() * 20_000);
    return new Date(this.clock).toISOString();
  }
  header(extra = {}) {
    this.lines.push({ type: "session", version: 3, id: `0199${(fnv1a(this.name) >>> 0).toString(16).padStart(8, "0")}-0870-7000-8000-000000000000`, timestamp: new Date(this.clock).toISOString(), cwd: "/home/dev/projects/ctxkit-087", ...extra });
    return this;
  }
  id(tag) {
    this.n += 1;
    return `${tag}${String(this.n).padStart(8 - tag.length, "0")}`;
  }
  entry(tag, type, fields, parentId = this.leaf) {
    const id = this.id(tag);
    const timestamp = this.iso();
    this.lines.push({ type, id, parentId, timestamp, ...fields });
    this.leaf = id;
    return id;
  }
  msg(tag, message, parentId) {
    return this.entry(tag, "message", { message: { ...message, timestamp: this.clock + 1 } }, parentId);
  }
  user(text, parentId) {
    return this.msg("u", { role: "user", content: text }, parentId);
  }
  assistant(content, extra = {}, parentId) {
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
    return this.msg("a", { role: "assistant", content: blocks, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(1200 + this.n * 37, 80 + this.n), stopReason: "stop", ...extra }, parentId);
  }
  toolCall(name, args, callId, parentId) {
    return this.assistant([{ type: "text", text: `Calling ${name}.` }, { type: "toolCall", id: callId, name, arguments: args }], { stopReason: "toolUse" }, parentId);
  }
  toolResult(callId, name, text, parentId) {
    return this.msg("r", { role: "toolResult", toolCallId: callId, toolName: name, content: [{ type: "text", text }], isError: false }, parentId);
  }
  system(fields, parentId) {
    return this.msg("s", { role: "system", ...fields }, parentId);
  }
  edit(targetId, replacement, parentId) {
    return this.entry("e", "context_edit", { targetId, replacement }, parentId);
  }
  usageEntry(fields, parentId) {
    return this.entry("g", "usage", fields, parentId);
  }
  custom(customType, content, parentId) {
    return this.entry("c", "custom_message", { customType, content, display: true }, parentId);
  }
  compaction(summary, firstKeptEntryId, tokensBefore, extra = {}, parentId) {
    return this.entry("k", "compaction", { summary, firstKeptEntryId, tokensBefore, ...extra }, parentId);
  }
  text() {
    return this.prefix + this.lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
  }
}

const files = [];
const add = (file, description, extra = {}) => files.push({ file, description, ...extra });

// A working turn: user asks, assistant reads a file, gets a long result, answers.
function turn(f, topic, { long = 400 } = {}) {
  const u = f.user(`${topic}: ${lorem(12, topic)}`);
  const call = `call_${f.n}`;
  const a = f.toolCall("read", { path: `src/${topic}.rs` }, call);
  const r = f.toolResult(call, "read", lorem(long, `${topic}-file`));
  const done = f.assistant(`Done with ${topic}. ${lorem(30, `${topic}-answer`)}`);
  return { u, a, r, done };
}

// 1. Several edits of one target; each editable role; raw strings; omission.
{
  const f = new File("087-edits-one-target").header();
  const t1 = turn(f, "parser", { long: 900 });
  f.edit(t1.r, { content: "[file elided]" });
  f.edit(t1.r, { content: [{ type: "text", text: "[file elided again]" }] });
  const t2 = turn(f, "lexer", { long: 300 });
  f.edit(t2.u, { content: [{ type: "text", text: "lexer: (question shortened)" }, { type: "image", data: PNG_1PX, mimeType: "image/png" }] });
  f.edit(t2.done, { content: "raw string replacement of an assistant reply" });
  const c = f.custom("note", "extension note");
  f.edit(c, { content: "edited extension note" });
  f.user("and the tests?");
  f.edit(t1.done, null);
  f.assistant("The tests pass.");
  f.edit(t1.r, { content: "[file elided, final]" });
  add(f, "several edits of one toolResult (the latest wins), a string replacement of assistant/toolResult, user content with an image, a custom_message edit, an omitted assistant");
}

// 2. Edits on another branch; an edit of an entry before it in file order; a label on an edit.
{
  const f = new File("087-edits-branches").header();
  const t1 = turn(f, "config", { long: 500 });
  const fork = f.leaf;
  f.user("branch A: shorten the config file");
  f.edit(t1.r, { content: "[config elided on branch A]" });
  const tipA = f.assistant("Shortened on A.");
  f.leaf = fork;
  f.user("branch B: keep everything");
  f.assistant("Kept on B.");
  f.edit(t1.u, null);
  f.entry("l", "label", { targetId: tipA, label: "branch-a" });
  f.edit("missing0", { content: "edit of an entry that does not exist" });
  f.edit(tipA, { content: "edit of an entry on the other branch" });
  f.user("B continues");
  add(f, "edits on two branches: each applies only on its own path; an omitted user; edits of missing and off-branch targets");
}

// 3. Edits before and after a compaction.
{
  const f = new File("087-edits-compaction").header();
  const t1 = turn(f, "alpha", { long: 700 });
  f.edit(t1.r, { content: "[alpha summarized away]" });
  const t2 = turn(f, "beta", { long: 700 });
  f.edit(t2.r, { content: "[beta elided before compaction]" });
  const t3 = turn(f, "gamma", { long: 400 });
  f.compaction("Summary: alpha and beta were read.", t2.u, 5400, { details: { readFiles: ["src/alpha.rs"], modifiedFiles: [] } });
  f.edit(t1.done, { content: "edit of a summarized entry after the compaction" });
  f.edit(t3.r, { content: "[gamma elided after compaction]" });
  turn(f, "delta", { long: 600 });
  f.edit(t2.done, null);
  f.user("what next?");
  add(f, "edits before a compaction (inside and outside its kept range) and after it (of kept and of summarized entries)");
}

// 4. Usage entries.
{
  const f = new File("087-usage-entries").header();
  turn(f, "warm", { long: 200 });
  f.usageEntry({ kind: "cache_warm", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(5000, 1, 0) });
  f.user("summarize the branch");
  f.usageEntry({ kind: "branch_summary", provider: "openai", model: "gpt-5-mini", usage: usage(900, 120), contributionId: "contrib-1", note: "side request" });
  f.assistant("Branch summarized.");
  f.usageEntry({ kind: "future_kind_we_do_not_know" });
  f.usageEntry({ kind: "cache_warm", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(5100, 1, 4000) });
  add(f, "usage entries (cache_warm, side requests with contributionId, an unknown kind without fields) between messages and as the leaf");
}

// 5. System messages.
{
  const f = new File("087-system-messages").header();
  f.system({ content: "You are a coding assistant.", sections: { environment: "cwd: /home/dev", skills: "- read files" }, toolsAdded: [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } }, { name: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } }] });
  turn(f, "first", { long: 200 });
  f.system({ content: "", sections: { skills: null, mode: "plan only" }, toolsRemoved: [{ name: "bash" }], toolsAdded: [{ name: "grep", description: "Search", parameters: { type: "object", properties: {} } }] });
  f.user("plan the refactor");
  f.assistant("Plan: 1. split the module.");
  f.system({ content: null });
  f.system({ content: [{ type: "text", text: "Be brief." }, { type: "image", data: PNG_1PX, mimeType: "image/png" }] });
  f.user("go");
  add(f, "system messages: sections set and cleared, tools added and removed, null and block content");
}

// 6. Compaction with systemMessage; system messages in its kept range are dropped.
{
  const f = new File("087-compaction-system").header();
  f.system({ content: "Base prompt.", toolsAdded: [{ name: "read", description: "Read", parameters: {} }] });
  const t1 = turn(f, "one", { long: 500 });
  const t2 = turn(f, "two", { long: 500 });
  f.system({ content: "Added later.", sections: { mode: "careful" } });
  turn(f, "three", { long: 300 });
  const kept = t2.u;
  f.compaction("Summary of one.", kept, 4100, { systemMessage: { role: "system", content: "Base prompt.\n\nAdded later.", sections: { mode: "careful" }, toolsAdded: [{ name: "read", description: "Read", parameters: {} }], timestamp: 1 } });
  f.system({ content: "After the compaction." });
  turn(f, "four", { long: 300 });
  const fork = f.leaf;
  f.compaction("Second summary without systemMessage.", t1.u, 6000);
  f.user("after a compaction that lost the prompt state");
  f.leaf = fork;
  f.user("other branch");
  add(f, "a compaction with systemMessage (system messages in the kept range dropped, later ones kept), and one without (kept-range system messages lost)");
}

// 7. Retain-none compactions.
{
  const f = new File("087-retain-none").header();
  turn(f, "old", { long: 600 });
  const fork = f.leaf;
  const id = f.id("k");
  f.lines.push({ type: "compaction", id, parentId: f.leaf, timestamp: f.iso(), summary: "Everything before was summarized.", firstKeptEntryId: id, tokensBefore: 3000 });
  f.leaf = id;
  turn(f, "new", { long: 300 });
  f.leaf = fork;
  f.compaction("Hand-written null firstKeptEntryId.", null, 3100, { systemMessage: { role: "system", content: "Prompt.", timestamp: 2 } });
  f.user("after the null one");
  f.assistant("ok");
  add(f, "retain-none compactions: firstKeptEntryId naming the compaction itself, and null (with a systemMessage)");
}

// 8. Recovery omission: an overflow error reply and its retry omitted by edits.
{
  const f = new File("087-recovery-omission").header();
  turn(f, "big", { long: 1500 });
  turn(f, "bigger", { long: 1500 });
  f.user("now the last step");
  const failed = f.assistant([], { stopReason: "error", errorMessage: "prompt is too long: 210000 tokens > 200000 maximum", usage: usage(0, 0) });
  f.edit(failed, null);
  const retry = f.assistant([], { stopReason: "error", errorMessage: "400 status code (no body)", usage: usage(0, 0) });
  f.edit(retry, null);
  f.usageEntry({ kind: "retry", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(10, 0) });
  add(f, "an overflow reply and its retry omitted by context_edit null at the end of the path (the cut advances past them)");
}

// 9. Null content, user images, all-zero usage.
{
  const f = new File("087-null-content-images").header();
  f.msg("u", { role: "user", content: null });
  f.msg("a", { role: "assistant", api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(100, 5), stopReason: "stop" });
  f.msg("u", { role: "user", content: [{ type: "text", text: "what is in this picture?" }, { type: "image", data: PNG_1PX, mimeType: "image/png" }] });
  f.assistant("A single pixel.");
  f.entry("c", "custom_message", { customType: "empty", display: false });
  f.user("and this one?");
  f.assistant("Nothing.", { usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } });
  f.user([{ type: "image", data: PNG_1PX, mimeType: "image/png" }, { type: "image", data: PNG_1PX, mimeType: "image/png" }]);
  add(f, "null and missing content (user, assistant, custom_message), images in user content, a last reply with all-zero usage");
}

// 10. A long session for compaction plans: custom messages, bash, branch summary before the cut.
{
  const f = new File("087-plan-turn-starts").header();
  for (const topic of ["a", "b", "c"]) turn(f, `topic-${topic}`, { long: 800 });
  f.custom("reminder", lorem(600, "reminder"));
  f.msg("b", { role: "bashExecution", command: "cargo test", output: lorem(500, "cargo"), exitCode: 0, cancelled: false, truncated: false });
  f.entry("m", "model_change", { provider: "openai", modelId: "gpt-5" });
  f.entry("b", "branch_summary", { fromId: "u0000002", summary: lorem(300, "branch-summary") });
  for (const topic of ["d", "e"]) turn(f, `topic-${topic}`, { long: 700 });
  f.custom("reminder", [{ type: "text", text: "look at the image" }, { type: "image", data: PNG_1PX, mimeType: "image/png" }]);
  turn(f, "topic-f", { long: 900 });
  add(f, "custom messages, a bash execution, a branch summary and images between turns: turn starts and keepRecentTokens under 0.87");
}

// 11. BOM: ctxkit reads it (0.73.1 did), 0.87.1 refuses it.
{
  const f = new File("087-bom").header();
  turn(f, "bom", { long: 100 });
  f.prefix = "\uFEFF";
  add(f, "a UTF-8 byte-order mark before the header: 0.87.1 refuses the file, ctxkit reads it (deliberate divergence)", { bom: true });
}

fs.mkdirSync(OUT, { recursive: true });
for (const name of fs.readdirSync(OUT)) if (name.endsWith(".jsonl")) fs.rmSync(path.join(OUT, name));
const manifest = [];
for (const { file, description, bom } of files) {
  const name = `${file.name}.jsonl`;
  fs.writeFileSync(path.join(OUT, name), file.text());
  manifest.push({ file: name, description, kind: bom ? "bom" : "good", referenceHangs: false });
}
fs.writeFileSync(path.join(OUT, "manifest.json"), `${JSON.stringify(manifest, null, 1)}\n`);
process.stderr.write(`wrote ${manifest.length} files to ${OUT}\n`);
