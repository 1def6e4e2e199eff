#!/usr/bin/env node
// Deterministic generator of conformance/corpus-16/*.jsonl: session files for what
// Pi 1.6.0 changed in compaction and branch summaries (see shared/spec/pi-16.md):
// nested tool calls on tool results, reasoning in summarized messages, split
// turns (for the focus on the turn prefix), context edits inside a branch being
// summarized, tool results cut at 2000 units across surrogate pairs, the shapes
// recovery from a cut-off reply leaves, and the new optional message fields.
// Hand-shaped; ids are fixed per file, timestamps advance from a per-file base by
// seeded steps.
//
// Usage: node conformance/generate-corpus-16.mjs [outDir]   (default: conformance/corpus-16)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fnv1a, mulberry32 } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(process.argv[2] ?? path.join(HERE, "corpus-16"));
const BASE_MS = Date.UTC(2026, 10, 21, 9, 0, 0, 0);

const usage = (input, output, extraCost = {}) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 15e-6, ...extraCost },
});
const lorem = (words, seed) => {
  const rand = mulberry32(fnv1a(seed));
  const vocab = ["fn", "parse", "the", "session", "file", "returns", "an", "error", "when", "nested", "call", "codemode", "script", "tokens", "compaction", "turn", "prefix", "branch", "summary", "reasoning"];
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
  }
  iso() {
    this.clock += 500 + Math.floor(this.rand() * 20_000);
    return new Date(this.clock).toISOString();
  }
  header() {
    this.lines.push({ type: "session", version: 3, id: `019a${(fnv1a(this.name) >>> 0).toString(16).padStart(8, "0")}-0160-7000-8000-000000000000`, timestamp: new Date(this.clock).toISOString(), cwd: "/home/dev/projects/ctxkit-16" });
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
  user(text, parentId, extra = {}) {
    return this.msg("u", { role: "user", content: text, ...extra }, parentId);
  }
  assistant(content, extra = {}, parentId) {
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
    return this.msg("a", { role: "assistant", content: blocks, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(1500 + this.n * 41, 90 + this.n), stopReason: "stop", ...extra }, parentId);
  }
  toolCall(name, args, callId, extra = {}, parentId) {
    return this.assistant([{ type: "text", text: `Calling ${name}.` }, { type: "toolCall", id: callId, name, arguments: args }], { stopReason: "toolUse", ...extra }, parentId);
  }
  toolResult(callId, name, content, extra = {}, parentId) {
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
    return this.msg("r", { role: "toolResult", toolCallId: callId, toolName: name, content: blocks, isError: false, ...extra }, parentId);
  }
  edit(targetId, replacement, parentId) {
    return this.entry("e", "context_edit", { targetId, replacement }, parentId);
  }
  custom(customType, content, parentId) {
    return this.entry("c", "custom_message", { customType, content, display: true }, parentId);
  }
  compaction(summary, firstKeptEntryId, tokensBefore, extra = {}, parentId) {
    return this.entry("k", "compaction", { summary, firstKeptEntryId, tokensBefore, ...extra }, parentId);
  }
  branchSummary(fromId, summary, extra = {}, parentId) {
    return this.entry("b", "branch_summary", { fromId, summary, ...extra }, parentId);
  }
  text() {
    return this.lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
  }
}

const files = [];
const add = (file, description) => files.push({ file, description });

// A working turn: user asks, assistant reads a file, gets a long result, answers.
function turn(f, topic, { long = 400, thinking = false } = {}) {
  const u = f.user(`${topic}: ${lorem(12, topic)}`);
  const call = `call_${f.n}`;
  const think = thinking ? [{ type: "thinking", thinking: `Plan for ${topic}: ${lorem(40, `${topic}-think`)}`, thinkingSignature: "sig" }] : [];
  const a = f.assistant([...think, { type: "text", text: `Reading ${topic}.` }, { type: "toolCall", id: call, name: "read", arguments: { path: `src/${topic}.rs` } }], { stopReason: "toolUse" });
  const r = f.toolResult(call, "read", lorem(long, `${topic}-file`));
  const done = f.assistant([...think, { type: "text", text: `Done with ${topic}. ${lorem(30, `${topic}-answer`)}` }]);
  return { u, a, r, done };
}

/** A codemode run: the script's tool result records the calls it made. */
function codemode(f, topic, calls, { complete = true, long = 300 } = {}) {
  f.user(`${topic}: ${lorem(10, topic)}`);
  const call = `code_${f.n}`;
  f.toolCall("code", { script: `// ${topic}\n${lorem(20, `${topic}-script`)}` }, call, { thinkingLevel: "medium", durationMs: 4210 });
  f.toolResult(call, "code", lorem(long, `${topic}-out`), {
    durationMs: 1830,
    usage: usage(900, 120, { totalFromProvider: true }),
    nestedCalls: { complete, calls },
  });
  return f.assistant(`Script for ${topic} finished. ${lorem(25, `${topic}-done`)}`, { thinkingLevel: "medium", durationMs: 2950, usage: usage(2100 + f.n, 150, { totalFromProvider: true }) });
}

// 1. Nested tool calls (codemode) and the new optional fields.
{
  const f = new File("16-nested-calls").header();
  turn(f, "intro", { long: 600 });
  codemode(f, "refactor", [
    { id: "n1", name: "read", arguments: { path: "src/nested/read.rs" }, status: "ok", durationMs: 12 },
    { id: "n2", name: "edit", arguments: { path: "src/nested/edit.rs", oldText: "a", newText: "b" }, status: "ok" },
    { id: "n3", name: "write", arguments: { path: "src/nested/failed-write.rs", content: "x" }, status: "error", error: "EACCES" },
    { id: "n4", name: "write", argumentsBytes: 204800, status: "ok" },
    { id: "n5", name: "read", arguments: { path: 42 }, status: "ok" },
    { id: "n6", name: "read", arguments: { path: "" }, status: "ok" },
    { id: "n7", name: "bash", arguments: { command: "ls", path: "src/not-a-file-op.rs" }, status: "ok" },
    { id: "n8", name: "Read", arguments: { path: "src/wrong-case.rs" }, status: "ok" },
    { id: "n9", name: "edit", arguments: { path: "src/nested/unfinished.rs" }, status: "unfinished" },
  ], { complete: false, long: 700 });
  turn(f, "middle", { long: 500 });
  codemode(f, "second", [{ id: "m1", name: "read", arguments: { path: "src/nested/edit.rs" }, status: "ok" }, { id: "m2", name: "read", arguments: { path: "docs/only-read.md" }, status: "ok" }]);
  // nestedCalls anywhere but on a tool result does not count.
  f.user("ignored nested calls on a user message", undefined, { nestedCalls: { complete: true, calls: [{ id: "x1", name: "write", arguments: { path: "src/from-user.rs" }, status: "ok" }] } });
  f.assistant("Noted.", { nestedCalls: { complete: true, calls: [{ id: "x2", name: "edit", arguments: { path: "src/from-assistant.rs" }, status: "ok" }] } });
  const side = f.leaf;
  turn(f, "late", { long: 800 });
  const mainTip = turn(f, "last", { long: 900 }).done;
  // A side branch with its own nested calls (a branch summary over it).
  f.leaf = side;
  codemode(f, "side", [{ id: "s1", name: "write", arguments: { path: "src/side/new.rs" }, status: "ok" }]);
  f.user("back to the main line later");
  // The loaded leaf: a label on the main line's tip.
  f.entry("l", "label", { targetId: mainTip, label: "main" }, mainTip);
  add(f, "codemode tool results with nestedCalls (read/edit/write, ok/error/unfinished, arguments left out, non-string and empty paths, other tool names), nestedCalls on a user and an assistant (ignored), durationMs/thinkingLevel/usage/totalFromProvider fields, a side branch with its own nested calls");
}

// 2. Reasoning everywhere: thinking before text and tool calls, reasoning-only replies.
{
  const f = new File("16-reasoning").header();
  f.entry("t", "thinking_level_change", { thinkingLevel: "high" });
  for (const topic of ["alpha", "beta", "gamma"]) turn(f, topic, { long: 700, thinking: true });
  f.user("think about it");
  f.assistant([{ type: "thinking", thinking: lorem(200, "only-thinking"), thinkingSignature: "s" }], { thinkingLevel: "high" });
  f.assistant([{ type: "thinking", thinking: "", thinkingSignature: "s" }, { type: "text", text: "" }]);
  f.assistant([{ type: "thinking", thinking: lorem(80, "redacted"), redacted: true }, { type: "text", text: "short answer" }]);
  const side = f.leaf;
  turn(f, "delta", { long: 900, thinking: true });
  const tip = turn(f, "epsilon", { long: 900, thinking: true }).done;
  f.leaf = side;
  turn(f, "zeta-side", { long: 300, thinking: true });
  f.entry("l", "label", { targetId: tip, label: "tip" }, tip);
  add(f, "thinking blocks before text and tool calls, a reasoning-only reply, empty thinking and empty text, redacted thinking, a side branch with reasoning");
}

// 3. One long turn (many tool steps) after a compaction: cuts split it.
{
  const f = new File("16-split-turn-focus").header();
  turn(f, "before", { long: 1200 });
  f.user(`first ${lorem(10, "first")}`);
  f.assistant("ok");
  // Keeping nothing (a null firstKeptEntryId): the long turn is the only new material after it.
  f.compaction("## Goal\nEarlier work, summarized.", null, 23000, { details: { readFiles: ["src/old.rs"], modifiedFiles: [] } });
  f.user(`the long task: ${lorem(20, "long-task")}`);
  for (let step = 0; step < 24; step++) {
    const call = `step_${step}`;
    const tool = step % 5 === 4 ? "edit" : "read";
    f.toolCall(tool, { path: `src/step/${step}.rs` }, call, { usage: usage(3000 + step * 900, 60) });
    f.toolResult(call, tool, lorem(90 + step * 6, `step-${step}`));
  }
  f.assistant(`All steps done. ${lorem(30, "all-done")}`);
  add(f, "a compaction keeping nothing, then one turn of 24 tool steps: keep budgets cut inside the turn, which is the only new material since the compaction (the previous summary stands for the history)");
}

// 4. Context edits inside branches that get summarized.
{
  const f = new File("16-branch-edits").header();
  const shared = turn(f, "shared", { long: 300 });
  const fork = f.leaf;
  // Branch A (abandoned): edits of its own entries, of the shared part, and of branch B.
  const a1 = f.user("branch A: look at the config");
  const aCall = f.toolCall("read", { path: "src/a/config.rs" }, "a_call_1");
  f.toolResult("a_call_1", "read", lorem(200, "a-config"));
  const aHidden = f.toolCall("edit", { path: "src/a/hidden-edit.rs" }, "a_call_2");
  f.toolResult("a_call_2", "edit", "ok");
  const aReplaced = f.assistant("A plan that will be replaced.");
  const aCustom = f.custom("note", "a custom note to be replaced");
  f.branchSummary("zzzz", "an earlier branch summary inside branch A", { details: { readFiles: ["src/a/from-summary.rs"], modifiedFiles: [] } });
  const aSummary = f.leaf;
  f.edit(aHidden, null);
  f.edit(aReplaced, { content: "first replacement" });
  f.edit(aReplaced, { content: [{ type: "text", text: "Replaced plan." }, { type: "toolCall", id: "a_call_9", name: "edit", arguments: { path: "src/a/added-by-replacement.rs" } }] });
  f.edit(aCustom, { content: [{ type: "text", text: "replaced custom note" }] });
  f.edit(a1, { content: "branch A: (user text replaced)" });
  f.edit(shared.done, null); // target in the shared part: no effect on the summary
  f.edit(aSummary, null); // a branch summary is never edited
  f.edit(aCall, null);
  f.edit(aCall, { content: "A read call, now text only." }); // the latest edit wins
  const aTip = f.assistant("Branch A finished.");
  // Branch B (loaded): its own edits, including one of branch A's entry.
  f.leaf = fork;
  f.user("branch B: different approach");
  const bCall = f.toolCall("write", { path: "src/b/new.rs", content: "fn b() {}" }, "b_call_1");
  f.toolResult("b_call_1", "write", "written");
  f.edit(a1, null); // off-branch target: no effect
  const bAnswer = f.assistant("Branch B done.");
  f.edit(bCall, { content: "write call elided" });
  f.user("one more in B");
  f.assistant("Still B.");
  void bAnswer;
  void aTip;
  add(f, "context edits inside an abandoned branch (hide, replace user/assistant/custom, a replacement adding an edit call, several edits of one target, edits of shared, off-branch and summary entries) and inside the loaded branch");
}

// 5. Tool results cut at 2000 units across surrogate pairs.
{
  const f = new File("16-surrogate-cut").header();
  const results = [
    "a".repeat(1999) + "😀" + "tail".repeat(50), // emoji across the boundary: left out whole
    "b".repeat(1998) + "😀" + "c".repeat(40), // pair ends exactly at 2000
    "𠀀".repeat(1200), // astral CJK: the boundary falls between pairs (even offsets)
    "d".repeat(1999) + "𠀀".repeat(3), // astral CJK across the boundary
    "e".repeat(2001), // plain
  ];
  results.forEach((text, i) => {
    f.user(`result ${i}`);
    const call = `cut_${i}`;
    f.toolCall("bash", { command: `gen ${i}` }, call);
    f.toolResult(call, "bash", text);
    f.assistant(`seen ${i}`);
  });
  add(f, "tool results longer than 2000 UTF-16 units with a surrogate pair across, at and around the cut");
}

// 6. Recovery from a reply cut off mid-tool-call: 0.87.1's shape (only the reply hidden)
// and 1.6.0's (the reply and its tool results hidden).
{
  const f = new File("16-recovery-shapes").header();
  turn(f, "setup", { long: 500 });
  f.user("write the big file");
  const cut087 = f.assistant([{ type: "text", text: "Writing" }, { type: "toolCall", id: "len_1", name: "write", arguments: { path: "src/big.rs", content: "fn" } }], { stopReason: "length" });
  const orphan = f.toolResult("len_1", "write", "Error: the call was cut off", { isError: true });
  f.edit(cut087, null);
  void orphan;
  f.user("try again, smaller");
  const cut16 = f.assistant([{ type: "text", text: "Writing again" }, { type: "toolCall", id: "len_2", name: "write", arguments: { path: "src/big.rs", content: "f" } }, { type: "toolCall", id: "len_3", name: "read", arguments: { path: "src/other.rs" } }], { stopReason: "length" });
  const r2 = f.toolResult("len_2", "write", "Error: cut off", { isError: true });
  const r3 = f.toolResult("len_3", "read", "other");
  f.edit(cut16, null);
  f.edit(r2, null);
  f.edit(r3, null);
  f.user("and now?");
  f.assistant("Done in small pieces.");
  add(f, "a reply cut off mid-tool-call hidden alone (0.87.1: its tool result stays, orphaned) and hidden with its tool results (1.6.0)");
}

fs.mkdirSync(OUT, { recursive: true });
for (const name of fs.readdirSync(OUT)) if (name.endsWith(".jsonl")) fs.rmSync(path.join(OUT, name));
const manifest = [];
for (const { file, description } of files) {
  const name = `${file.name}.jsonl`;
  fs.writeFileSync(path.join(OUT, name), file.text());
  // Contexts and branches of a sample of leaves keep the session vectors small (what 1.6.0 changed
  // is in the compaction vectors; its session layer is 0.87.1's).
  manifest.push({ file: name, description, kind: "good", referenceHangs: false, sampleContexts: 4 });
}
fs.writeFileSync(path.join(OUT, "manifest.json"), `${JSON.stringify(manifest, null, 1)}\n`);
process.stderr.write(`wrote ${manifest.length} files to ${OUT}\n`);
