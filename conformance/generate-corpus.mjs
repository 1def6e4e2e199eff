#!/usr/bin/env node
// Seeded, deterministic generator for conformance/corpus/*.jsonl.
//
// Every file gets its own PRNG (mulberry32 seeded from the file name), ids are
// 8 hex chars drawn from it, and timestamps start from a fixed base date and
// advance by seeded increments. Running this twice produces identical bytes.
//
// Usage: node conformance/generate-corpus.mjs [outDir]   (default: conformance/corpus)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fnv1a, mulberry32 } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(process.argv[2] ?? path.join(HERE, "corpus"));

const BASE_MS = Date.UTC(2025, 2, 14, 9, 0, 0, 0); // 2025-03-14T09:00:00.000Z
const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const GIF_1PX = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==";

// ---------------------------------------------------------------------------
// Session builder
// ---------------------------------------------------------------------------

class Session {
  constructor(name, { dayOffset = 0 } = {}) {
    this.name = name;
    this.rand = mulberry32(fnv1a(name));
    this.clock = BASE_MS + dayOffset * 86_400_000 + this.int(0, 3_600_000);
    this.lines = [];
    this.ids = new Set();
    this.leaf = null;
    this.eol = "\n";
    this.trailingNewline = true;
  }

  int(lo, hi) {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }
  pick(arr) {
    return arr[Math.floor(this.rand() * arr.length)];
  }
  chance(p) {
    return this.rand() < p;
  }

  /** Advance the clock by a seeded amount and return the new ISO timestamp. */
  tick(minMs = 200, maxMs = 45_000) {
    this.clock += this.int(minMs, maxMs);
    return new Date(this.clock).toISOString();
  }
  nowIso() {
    return new Date(this.clock).toISOString();
  }

  newId() {
    for (;;) {
      let id = "";
      for (let i = 0; i < 8; i++) id += "0123456789abcdef"[Math.floor(this.rand() * 16)];
      if (!this.ids.has(id)) {
        this.ids.add(id);
        return id;
      }
    }
  }
  uuid() {
    const h = Array.from({ length: 32 }, () => "0123456789abcdef"[Math.floor(this.rand() * 16)]).join("");
    // shape of a uuid v7-ish id (version nibble 7, variant 8..b)
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-7${h.slice(13, 16)}-${"89ab"[this.int(0, 3)]}${h.slice(17, 20)}-${h.slice(20)}`;
  }

  header(fields = {}) {
    const h = {
      type: "session",
      version: 3,
      id: this.uuid(),
      timestamp: this.nowIso(),
      cwd: "/home/dev/projects/ctxkit-demo",
      ...fields,
    };
    for (const k of Object.keys(h)) if (h[k] === undefined) delete h[k];
    this.lines.push(JSON.stringify(h));
    return h;
  }

  /**
   * Append an entry. Base fields come first (type, id, parentId, timestamp),
   * then `fields`, unless `order` says otherwise. opts.parentId overrides the
   * current leaf, opts.ts the timestamp, opts.id the id.
   */
  entry(type, fields = {}, opts = {}) {
    const id = opts.id ?? this.newId();
    if (opts.id) this.ids.add(opts.id);
    const parentId = "parentId" in opts ? opts.parentId : this.leaf;
    const timestamp = opts.ts ?? this.tick(opts.minMs, opts.maxMs);
    let e;
    if (opts.fieldsFirst) e = { type, ...fields, id, parentId, timestamp };
    else e = { type, id, parentId, timestamp, ...fields };
    if (opts.extra) Object.assign(e, opts.extra);
    this.lines.push(JSON.stringify(e));
    if (opts.advance !== false) this.leaf = id;
    return id;
  }

  msTs() {
    // message timestamp (epoch ms): a little before the entry that stores it
    return this.clock - this.int(0, 40);
  }

  /** `message` entry; message.timestamp is filled in when absent. */
  message(message, opts = {}) {
    const ts = opts.ts ?? this.tick(opts.minMs, opts.maxMs);
    const m = { ...message };
    if (!("timestamp" in m) && !opts.noMsgTimestamp) m.timestamp = new Date(ts).getTime() - this.int(0, 40);
    if (m.timestamp === undefined) delete m.timestamp;
    return this.entry("message", { message: m }, { ...opts, ts });
  }

  user(content, opts) {
    return this.message({ role: "user", content }, opts);
  }

  assistant(content, o = {}) {
    const input = o.input ?? this.int(200, 30_000);
    const output = o.output ?? this.int(5, 2_000);
    const cacheRead = o.cacheRead ?? (this.chance(0.6) ? this.int(0, 20_000) : 0);
    const cacheWrite = o.cacheWrite ?? (this.chance(0.3) ? this.int(0, 4_000) : 0);
    const totalTokens = o.totalTokens ?? input + output + cacheRead + cacheWrite;
    const r6 = (x) => Math.round(x * 1e6) / 1e6;
    const cost = {
      input: r6(input * 3e-6),
      output: r6(output * 15e-6),
      cacheRead: r6(cacheRead * 0.3e-6),
      cacheWrite: r6(cacheWrite * 3.75e-6),
    };
    cost.total = r6(cost.input + cost.output + cost.cacheRead + cost.cacheWrite);
    if (o.costOverride) Object.assign(cost, o.costOverride);
    const msg = {
      role: "assistant",
      content,
      api: o.api ?? "anthropic-messages",
      provider: o.provider ?? "anthropic",
      model: o.model ?? "claude-sonnet-4-5",
      usage: { input, output, cacheRead, cacheWrite, totalTokens, cost },
      stopReason: o.stopReason ?? (content.some((b) => b.type === "toolCall") ? "toolUse" : "stop"),
    };
    if (o.errorMessage !== undefined) msg.errorMessage = o.errorMessage;
    if (o.msgExtra) Object.assign(msg, o.msgExtra);
    return this.message(msg, o);
  }

  toolResult(toolCallId, toolName, content, o = {}) {
    const msg = { role: "toolResult", toolCallId, toolName, content };
    if (o.details !== undefined) msg.details = o.details;
    msg.isError = o.isError ?? false;
    return this.message(msg, o);
  }

  bash(command, output, o = {}) {
    const msg = {
      role: "bashExecution",
      command,
      output,
      exitCode: "exitCode" in o ? o.exitCode : 0,
      cancelled: o.cancelled ?? false,
      truncated: o.truncated ?? false,
    };
    if (msg.exitCode === undefined) delete msg.exitCode;
    if (o.fullOutputPath !== undefined) msg.fullOutputPath = o.fullOutputPath;
    if (o.excludeFromContext !== undefined) msg.excludeFromContext = o.excludeFromContext;
    return this.message(msg, o);
  }

  thinkingLevel(level, opts) {
    return this.entry("thinking_level_change", { thinkingLevel: level }, opts);
  }
  modelChange(provider, modelId, opts) {
    return this.entry("model_change", { provider, modelId }, opts);
  }
  compaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, opts = {}) {
    const f = { summary, firstKeptEntryId, tokensBefore };
    if (details !== undefined) f.details = details;
    if (fromHook !== undefined) f.fromHook = fromHook;
    if (firstKeptEntryId === undefined) delete f.firstKeptEntryId;
    return this.entry("compaction", f, opts);
  }
  branchSummary(fromId, summary, details, fromHook, opts = {}) {
    const f = { fromId, summary };
    if (details !== undefined) f.details = details;
    if (fromHook !== undefined) f.fromHook = fromHook;
    return this.entry("branch_summary", f, opts);
  }
  custom(customType, data, opts = {}) {
    const f = { customType };
    if (data !== undefined) f.data = data;
    return this.entry("custom", f, { fieldsFirst: true, ...opts });
  }
  customMessage(customType, content, display, details, opts = {}) {
    const f = { customType, content, display };
    if (details !== undefined) f.details = details;
    return this.entry("custom_message", f, { fieldsFirst: true, ...opts });
  }
  label(targetId, label, opts = {}) {
    const f = { targetId };
    if (label !== undefined) f.label = label;
    return this.entry("label", f, opts);
  }
  sessionInfo(name, opts = {}) {
    const f = {};
    if (name !== undefined) f.name = name;
    return this.entry("session_info", f, opts);
  }

  raw(line) {
    this.lines.push(line);
  }

  /** One user -> assistant(toolCall) -> toolResult -> assistant(text) exchange. */
  toolTurn(prompt, tool, args, resultText, answer, o = {}) {
    this.user(prompt);
    const callId = `toolu_${this.newId()}${this.newId()}`;
    const content = [];
    if (o.thinking) content.push({ type: "thinking", thinking: o.thinking, thinkingSignature: `sig_${this.newId()}` });
    content.push({ type: "toolCall", id: callId, name: tool, arguments: args });
    this.assistant(content, o.assistant);
    this.toolResult(callId, tool, [{ type: "text", text: resultText }], { isError: o.isError });
    return this.assistant([{ type: "text", text: answer }], o.assistant);
  }

  text() {
    const body = this.lines.join(this.eol);
    return this.trailingNewline ? body + this.eol : body;
  }
}

const text = (t) => ({ type: "text", text: t });

// ---------------------------------------------------------------------------
// Corpus definitions
// ---------------------------------------------------------------------------

const corpus = [];
function add(file, kind, description, build, extra = {}) {
  corpus.push({ file, kind, description, build, referenceHangs: extra.referenceHangs ?? false, sampleContexts: extra.sampleContexts });
}

// --- good ------------------------------------------------------------------

add("good-minimal.jsonl", "good", "smallest useful session: one user message and one assistant reply", () => {
  const s = new Session("good-minimal");
  s.header();
  s.user("Hello, can you list the files in this repo?");
  s.assistant([text("Sure — there are three files: Cargo.toml, src/main.rs and README.md.")]);
  return s;
});

add("good-header-only.jsonl", "good", "a valid header and no entries (leaf is null)", () => {
  const s = new Session("good-header-only");
  s.header();
  return s;
});

add("good-no-trailing-newline.jsonl", "good", "valid session whose last (complete) line has no trailing newline", () => {
  const s = new Session("good-no-trailing-newline");
  s.header();
  s.user("ping");
  s.assistant([text("pong")]);
  s.trailingNewline = false;
  return s;
});

add(
  "good-all-entry-types.jsonl",
  "good",
  "one linear path containing every entry type, incl. compaction with details+fromHook and a branch_summary",
  () => {
    const s = new Session("good-all-entry-types");
    s.header();
    s.thinkingLevel("medium");
    s.modelChange("anthropic", "claude-sonnet-4-5");
    const u1 = s.user("Refactor the parser to stream input.");
    s.assistant([
      { type: "thinking", thinking: "The parser reads the whole file; switch to a BufRead.", thinkingSignature: "c2lnLTE=" },
      text("I'll start by reading src/parser.rs."),
    ]);
    s.custom("todo-extension", { items: [{ text: "stream parser", done: false }], version: 2 });
    s.customMessage("reminder", "Remember: the public API must stay the same.", true, { source: "AGENTS.md", line: 12 });
    s.customMessage("hidden-context", [text("Hidden: project uses edition 2021."), { type: "image", data: PNG_1PX, mimeType: "image/png" }], false);
    s.label(u1, "start");
    s.sessionInfo("Parser refactor");
    const keep = s.user("Now add tests.");
    s.assistant([text("Added 4 tests in tests/parser.rs.")]);
    s.compaction(
      "## Goal\nStream the parser.\n\n## Progress\nParser refactored, tests added.",
      keep,
      48213,
      { readFiles: ["src/lib.rs", "src/parser.rs"], modifiedFiles: ["src/parser.rs", "tests/parser.rs"] },
      true,
    );
    s.branchSummary(keep, "Tried a nom-based parser on another branch; abandoned because of compile times.", {
      readFiles: ["Cargo.toml"],
      modifiedFiles: [],
    });
    s.modelChange("openai", "gpt-5");
    s.thinkingLevel("high");
    s.user("Summarize what changed.");
    s.assistant([text("The parser now streams; four tests cover it.")], { provider: "openai", model: "gpt-5", api: "openai-responses" });
    return s;
  },
);

add("good-user-content.jsonl", "good", "user messages with string content and block content (text + image)", () => {
  const s = new Session("good-user-content");
  s.header();
  s.user("Plain string content.");
  s.assistant([text("ok")]);
  s.user([text("Here is a screenshot:"), { type: "image", data: PNG_1PX, mimeType: "image/png" }, text("What is wrong?")]);
  s.assistant([text("The button is misaligned.")]);
  s.user([{ type: "image", data: GIF_1PX, mimeType: "image/gif" }]);
  s.assistant([text("A single transparent pixel.")]);
  s.user("");
  s.assistant([text("You sent an empty message.")]);
  s.user([]);
  return s;
});

add(
  "good-assistant-variants.jsonl",
  "good",
  "assistant text/thinking (with and without signature)/toolCall with nested args, usage totalTokens 0, every stopReason, errorMessage",
  () => {
    const s = new Session("good-assistant-variants");
    s.header();
    s.user("Explain and then run the migration.");
    s.assistant([
      { type: "thinking", thinking: "First check the schema version.", thinkingSignature: "EqQBCkYIARgCKkA=" },
      { type: "thinking", thinking: "No signature on this one." },
      text("Let me look at the schema."),
      {
        type: "toolCall",
        id: "toolu_01ABCDEF",
        name: "bash",
        arguments: { command: "sqlite3 db.sqlite '.schema'", timeout: 30, env: { RUST_LOG: "debug", PATHS: ["/a", "/b"] }, opts: { nested: { deep: [1, 2.5, null, true, { k: "v" }] } } },
      },
    ]);
    s.toolResult("toolu_01ABCDEF", "bash", [text("CREATE TABLE users(id INTEGER PRIMARY KEY);")]);
    s.assistant([text("Partial answer cut at max tokens")], { stopReason: "length", output: 4096 });
    s.user("continue");
    s.assistant([text("Usage reported without totals.")], { totalTokens: 0, input: 1200, output: 80, cacheRead: 300, cacheWrite: 20 });
    s.user("try again");
    s.assistant([], { stopReason: "error", errorMessage: "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}", output: 0 });
    s.user("again please");
    s.assistant([text("I was about to")], { stopReason: "aborted", errorMessage: "Request was aborted" });
    s.user("Call two tools at once.");
    s.assistant(
      [
        { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/a.rs" } },
        { type: "toolCall", id: "call_2", name: "edit", arguments: { path: "src/b.rs", edits: [{ oldText: "fn a()", newText: "fn b()" }] } },
      ],
      { provider: "openai", model: "gpt-5-codex", api: "openai-responses", costOverride: { cacheWrite: 3e-7, total: 1.5e-7 } },
    );
    s.toolResult("call_1", "read", [text("fn main() {}")]);
    s.toolResult("call_2", "edit", [text("Successfully replaced text in src/b.rs.")], { details: { diff: "-fn a()\n+fn b()", firstChangedLine: 1 } });
    s.assistant([text("Both done.")], { provider: "google", model: "gemini-2.5-pro", api: "google-generative-ai" });
    return s;
  },
);

add("good-tool-results.jsonl", "good", "toolResult with text, image, isError, details", () => {
  const s = new Session("good-tool-results");
  s.header();
  s.user("Read the logo and the missing file.");
  s.assistant([
    { type: "toolCall", id: "t1", name: "read", arguments: { path: "logo.png" } },
    { type: "toolCall", id: "t2", name: "read", arguments: { path: "missing.txt" } },
    { type: "toolCall", id: "t3", name: "bash", arguments: { command: "ls" } },
  ]);
  s.toolResult("t1", "read", [text("Read image file [image/png]"), { type: "image", data: PNG_1PX, mimeType: "image/png" }]);
  s.toolResult("t2", "read", [text("ENOENT: no such file or directory, open 'missing.txt'")], { isError: true });
  s.toolResult("t3", "bash", [text("a\nb\nc\n")], { details: { truncation: null, fullOutputPath: null, exitCode: 0 } });
  s.assistant([text("The logo is a 1×1 PNG; missing.txt does not exist.")]);
  return s;
});

add(
  "good-bash-execution.jsonl",
  "good",
  "bashExecution messages: output, empty output, cancelled, non-zero exit, exitCode null/absent, truncated+fullOutputPath, excludeFromContext",
  () => {
    const s = new Session("good-bash-execution");
    s.header();
    s.bash("ls -la", "total 8\ndrwxr-xr-x  2 dev dev 4096 .\n");
    s.bash("true", "");
    s.bash("sleep 100", "partial", { cancelled: true, exitCode: null });
    s.bash("cargo test", "error[E0308]: mismatched types", { exitCode: 101 });
    s.bash("echo hi", "hi", { exitCode: null });
    s.bash("echo no-exit-code", "x", { exitCode: undefined });
    s.bash("cat huge.log", "...last 2000 lines...", { truncated: true, fullOutputPath: "/tmp/pi-bash-3f2a.log" });
    s.bash("cat big-but-no-path.log", "tail", { truncated: true });
    s.bash("env | grep SECRET", "SECRET=hunter2", { excludeFromContext: true });
    s.bash("false", "", { exitCode: 1, cancelled: true });
    s.user("What failed?");
    s.assistant([text("`cargo test` failed with a type mismatch.")]);
    return s;
  },
);

add("good-custom-messages.jsonl", "good", "custom_message entries (string/block content, display true/false, details) and role=custom message entries", () => {
  const s = new Session("good-custom-messages");
  s.header();
  s.customMessage("greeting", "Extension says hello", true);
  s.customMessage("blocks", [text("block one"), text("block two")], false, { count: 2, nested: { a: [1, 2] } });
  s.customMessage("image-note", [{ type: "image", data: PNG_1PX, mimeType: "image/png" }], true);
  s.customMessage("empty", "", false);
  s.user("hi");
  s.message({ role: "custom", customType: "direct", content: "custom role stored as a message entry", display: true });
  s.message({ role: "custom", customType: "direct-blocks", content: [text("blocks in a custom message")], display: false, details: { k: 1 } });
  s.assistant([text("hello")]);
  return s;
});

add("good-summary-roles-as-messages.jsonl", "good", "messages with role branchSummary / compactionSummary stored directly as message entries", () => {
  const s = new Session("good-summary-roles-as-messages");
  s.header();
  s.user("start");
  s.message({ role: "compactionSummary", summary: "Earlier: set up the repo.", tokensBefore: 12345 });
  s.message({ role: "branchSummary", summary: "Explored option B.", fromId: "deadbeef" });
  s.assistant([text("continuing")]);
  return s;
});

add("good-unknown-things.jsonl", "good", "unknown role (futureRole), unknown entry type (future_entry), unknown extra fields on header, entries, messages and blocks", () => {
  const s = new Session("good-unknown-things");
  s.header({ futureHeaderField: { x: 1 } });
  s.user([{ type: "text", text: "with extra block field", cache_control: { type: "ephemeral" } }], { extra: { futureEntryField: [1, "two", null] } });
  s.entry("future_entry", { payload: { anything: true }, list: [3, 2, 1] });
  s.message({ role: "futureRole", content: [text("from the future")], extraRoleData: 7 });
  s.message({ role: "user", content: "extra message fields", futureMsgField: "kept", nestedUnknown: { a: { b: [] } } });
  s.assistant([text("known text"), { type: "futureBlock", payload: "?" }, { type: "text", text: "second", signature: "unknown-sig" }], {
    msgExtra: { responseId: "resp_123", futureAssistantField: { n: 1 } },
  });
  s.entry("model_change", { provider: "acme", modelId: "acme-1", reasoning: "unknown field" });
  s.thinkingLevel("xhigh");
  s.message({ role: "hookMessage", customType: "old-hook", content: "hookMessage role in a v3 file is NOT migrated", display: true });
  s.user("last");
  return s;
});

add("good-labels.jsonl", "good", "label set, overwrite, clear with empty label, clear with absent label, label on unknown id, whitespace label", () => {
  const s = new Session("good-labels");
  s.header();
  const a = s.user("first");
  const b = s.assistant([text("second")]);
  const c = s.user("third");
  const d = s.assistant([text("fourth")]);
  s.label(a, "checkpoint-1");
  s.label(a, "checkpoint-1b"); // overwrite
  s.label(b, "to-be-cleared");
  s.label(b, ""); // clear with empty string
  s.label(c, "also-cleared");
  s.label(c, undefined); // clear with absent label
  s.label("ffffffff", "ghost"); // unknown target
  s.label(d, "   "); // whitespace-only label (truthy, kept)
  const lbl = s.label(d, "final");
  s.label(lbl, "label on a label entry");
  s.user("after labels");
  return s;
});

add("good-session-info.jsonl", "good", "session_info names: with surrounding spaces, replaced, cleared with empty name, set again, cleared by whitespace", () => {
  const s = new Session("good-session-info");
  s.header();
  s.user("hi");
  s.sessionInfo("  First name  ");
  s.assistant([text("hello")]);
  s.sessionInfo("Second name");
  s.sessionInfo("");
  s.user("named?");
  return s;
});

add("good-session-info-whitespace.jsonl", "good", "session_info: a name, then a whitespace-only name (clears), then absent name field", () => {
  const s = new Session("good-session-info-whitespace");
  s.header();
  s.sessionInfo("\t Tabbed name \n");
  s.user("x");
  s.sessionInfo("   ");
  s.sessionInfo("Final");
  s.sessionInfo(undefined);
  return s;
});

add(
  "good-branches.jsonl",
  "good",
  "several branches from different points, branch_summary with/without details, empty summary, fromId root (new root)",
  () => {
    const s = new Session("good-branches");
    s.header();
    const u1 = s.user("Implement feature X.");
    const a1 = s.assistant([text("Plan: A then B.")]);
    const u2 = s.user("Do A.");
    const a2 = s.assistant([text("A done.")]);
    s.user("Do B.");
    const abandoned = s.assistant([text("B done, but it broke C.")]);
    // branch 2: back to a2, with summary + details
    s.leaf = a2;
    s.branchSummary(abandoned, "Tried B directly; it broke C.", { readFiles: ["src/c.rs"], modifiedFiles: ["src/b.rs"] });
    s.user("Do B carefully.");
    const b2 = s.assistant([text("B done without breaking C.")]);
    // branch 3: back to a1, summary without details, fromHook false
    s.leaf = a1;
    s.branchSummary(b2, "Two attempts at A/B; second worked.", undefined, false);
    s.user("Alternative plan instead.");
    s.assistant([text("Alternative done.")]);
    // branch 4: back to u2 with an empty summary (not emitted into context)
    s.leaf = u2;
    s.branchSummary(a2, "");
    s.assistant([text("Answer to 'Do A.' regenerated.")]);
    // branch 5: from the very beginning: branch_summary with parentId null, fromId "root"
    s.leaf = null;
    s.branchSummary("root", "Everything before was abandoned.", { readFiles: [], modifiedFiles: [] }, true);
    s.user("Start over.");
    s.assistant([text("Starting over.")]);
    // finally continue the first branch again so the file's last entry is deep
    s.leaf = u1;
    s.assistant([text("Regenerated plan.")]);
    return s;
  },
);

add("good-multiple-roots.jsonl", "good", "entries with parentId null appearing later in the file (multiple roots)", () => {
  const s = new Session("good-multiple-roots");
  s.header();
  s.user("root one");
  s.assistant([text("reply one")]);
  s.leaf = null;
  s.user("root two (resetLeaf)");
  s.assistant([text("reply two")]);
  s.leaf = null;
  s.thinkingLevel("low");
  s.user("root three starts with a thinking change");
  s.leaf = null;
  s.modelChange("openai", "gpt-4o");
  return s;
});

add("good-orphans.jsonl", "good", "entries whose parentId points at a missing id (orphans become roots), including a chain below an orphan", () => {
  const s = new Session("good-orphans");
  s.header();
  const r = s.user("normal root");
  s.assistant([text("normal reply")]);
  s.leaf = "0badf00d";
  s.user("orphan: parent missing");
  s.assistant([text("child of orphan")]);
  s.leaf = r;
  s.assistant([text("second child of root, after orphans")]);
  s.leaf = "cafebabe";
  s.customMessage("orphan-note", "orphan custom message", true);
  s.entry("message", { message: { role: "user", content: "parentId field absent", timestamp: s.msTs() } }, { parentId: undefined });
  return s;
});

add(
  "good-timestamp-order.jsonl",
  "good",
  "siblings with equal timestamps (stable order), siblings written out of timestamp order, entry timestamps with offsets",
  () => {
    const s = new Session("good-timestamp-order");
    s.header();
    const root = s.user("root");
    const t = s.tick();
    s.assistant([text("child A (same ts as B and C)")], { parentId: root, ts: t });
    s.assistant([text("child B (same ts)")], { parentId: root, ts: t });
    s.assistant([text("child C (same ts)")], { parentId: root, ts: t });
    const late = s.tick(60_000, 60_000);
    const early = new Date(Date.parse(t) - 30_000).toISOString();
    const x = s.user("child D written first, newest timestamp", { parentId: root, ts: late });
    s.user("child E written second, oldest timestamp", { parentId: root, ts: early });
    s.user("child F with +02:00 offset timestamp", { parentId: root, ts: "2025-03-14T12:30:00.000+02:00" });
    s.user("child G without milliseconds", { parentId: root, ts: "2025-03-14T08:00:00Z" });
    s.assistant([text("grandchild")], { parentId: x });
    return s;
  },
);

add(
  "good-multi-compaction.jsonl",
  "good",
  "three compactions on one path, a compaction whose firstKeptEntryId is on another branch, one whose firstKeptEntryId is missing, one pointing at itself",
  () => {
    const s = new Session("good-multi-compaction");
    s.header();
    s.user("u1");
    s.assistant([text("a1")]);
    const u2 = s.user("u2");
    s.assistant([text("a2")]);
    const c1 = s.compaction("Summary one.", u2, 10_000, { readFiles: ["a.rs"], modifiedFiles: [] });
    const u3 = s.user("u3");
    s.assistant([text("a3")]);
    s.bash("make", "ok");
    s.compaction("Summary two (cumulative).", u3, 20_000, { readFiles: ["a.rs", "b.rs"], modifiedFiles: ["b.rs"] });
    s.user("u4");
    const a4 = s.assistant([text("a4")]);
    // side branch off c1, to host entries that are not on the main path
    s.leaf = c1;
    const side = s.user("side branch user");
    s.assistant([text("side reply")]);
    // main path continues
    s.leaf = a4;
    s.compaction("Summary three: firstKept is on another branch.", side, 30_000, undefined, true);
    s.user("u5");
    const a5 = s.assistant([text("a5")]);
    s.compaction("Summary four: firstKept missing.", "00000000", 31_000);
    s.user("u6");
    s.assistant([text("a6")]);
    // compaction without firstKeptEntryId at all, on a fresh branch
    s.leaf = a5;
    s.compaction("Summary five: no firstKeptEntryId field.", undefined, 32_000);
    s.user("u7");
    // compaction as the leaf
    s.leaf = a5;
    const selfId = s.newId();
    s.compaction("Summary six: firstKept is the compaction itself.", selfId, 33_000, undefined, undefined, { id: selfId });
    return s;
  },
);

add(
  "good-unicode.jsonl",
  "good",
  "CJK, emoji with astral chars and ZWJ sequences, combining marks, RTL, control chars, U+2028 in texts, names, labels and cwd",
  () => {
    const s = new Session("good-unicode");
    s.header({ cwd: "/home/开发者/項目/🦀-crate/é-combining-e\u0301" });
    const u = s.user("你好，世界！请重构这个函数。日本語もOK。한국어도.");
    s.assistant([
      { type: "thinking", thinking: "ユーザーはリファクタリングを望んでいる 🤔" },
      text("好的 👩‍💻 — done. Flags: 🇯🇵🇩🇪, family: 👨‍👩‍👧‍👦, skin tone: 👍🏽, astral math: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, old: 𐍈"),
      { type: "toolCall", id: "tc-ü", name: "write", arguments: { path: "文档/說明.md", content: "# 标题\n\nZalgo: Z̴̡̪a̷l̶g̸o̵\u0301" } },
    ]);
    s.toolResult("tc-ü", "write", [text("Wrote 文档/說明.md (42 bytes) ✅")]);
    const a = s.assistant([text("Arabic: مرحبا بالعالم — Hebrew: שלום — mixed ‏RTL‎ marks")]);
    s.label(u, "起点 🚀");
    s.label(a, "👩‍👩‍👧 family label");
    s.sessionInfo("  重构 🦀 session  ");
    s.user("Tabs\tand\nnewlines, a bell \u0007, NUL \u0000, separators \u2028 \u2029, BOM \ufeff, nbsp \u00a0.");
    s.customMessage("ünïcödé", "Ｆｕｌｌｗｉｄｔｈ and ㊗️", true, { "キー": "値" });
    s.bash("echo 'ñandú'", "ñandú\n", { exitCode: 0 });
    s.assistant([text("e\u0301 vs é (NFD vs NFC) and 𝒳 (U+1D4B3)")]);
    return s;
  },
);

add("good-lone-surrogate.jsonl", "good", "text containing lone UTF-16 surrogates written as \\ud83d / \\udc69 escapes (valid JSON, not valid UTF-8 when decoded)", () => {
  const s = new Session("good-lone-surrogate");
  s.header();
  s.user("lone high surrogate: \ud83d end; lone low: \udc69 end");
  s.assistant([text("reply with half an emoji: \ud83d")]);
  return s;
});

add("good-thinking-model-per-branch.jsonl", "good", "thinking level and model differ per branch; assistant messages override model_change", () => {
  const s = new Session("good-thinking-model-per-branch");
  s.header();
  s.modelChange("anthropic", "claude-opus-4");
  const t = s.thinkingLevel("minimal");
  s.user("q");
  s.assistant([text("a")], { provider: "anthropic", model: "claude-opus-4" });
  s.modelChange("openai", "gpt-5");
  s.user("q2 (model_change after assistant wins until next assistant)");
  s.leaf = t;
  s.thinkingLevel("high");
  s.modelChange("google", "gemini-2.5-flash");
  s.user("other branch");
  s.assistant([text("b")], { provider: "openrouter", model: "x-ai/grok-4", api: "openai-completions" });
  s.thinkingLevel("off");
  return s;
});

add("good-parent-session.jsonl", "good", "header with parentSession (forked session), extra header fields", () => {
  const s = new Session("good-parent-session");
  s.header({ parentSession: "/home/dev/.pi/agent/sessions/--home-dev-projects-ctxkit-demo--/2025-03-13T10-00-00-000Z_0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl" });
  s.user("continuing from the parent session");
  s.assistant([text("ok")]);
  return s;
});

add("good-large-realistic.jsonl", "good", "~300-entry realistic session: heavy tool use, branches with summaries, labels, two compactions", () => buildLarge(), {
  sampleContexts: 12,
});

// --- legacy ----------------------------------------------------------------

add(
  "legacy-v1-no-version.jsonl",
  "legacy",
  "v1 file: header without version, entries without id/parentId, compaction with firstKeptEntryIndex (index into parsed array incl. header)",
  () => {
    const s = new Session("legacy-v1-no-version", { dayOffset: -200 });
    const h = s.header();
    delete h.version;
    s.lines[0] = JSON.stringify({ type: "session", id: h.id, timestamp: h.timestamp, cwd: h.cwd });
    const e = (obj) => s.raw(JSON.stringify({ ...obj, timestamp: s.tick() }));
    e({ type: "message", message: { role: "user", content: "v1 first", timestamp: s.clock } }); // index 1
    e({ type: "message", message: { role: "assistant", content: [text("v1 reply")], provider: "anthropic", model: "claude-3-5-sonnet", usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: s.clock } }); // 2
    e({ type: "thinking_level_change", thinkingLevel: "low" }); // 3
    e({ type: "message", message: { role: "user", content: "kept from here", timestamp: s.clock } }); // 4
    e({ type: "message", message: { role: "assistant", content: [text("kept reply")], provider: "anthropic", model: "claude-3-5-sonnet", usage: { input: 20, output: 7, cacheRead: 0, cacheWrite: 0, totalTokens: 27, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: s.clock } }); // 5
    e({ type: "compaction", summary: "v1 compaction summary", firstKeptEntryIndex: 4, tokensBefore: 5000 }); // 6
    e({ type: "model_change", provider: "openai", modelId: "gpt-4o" }); // 7
    e({ type: "message", message: { role: "user", content: "after compaction", timestamp: s.clock } }); // 8
    return s;
  },
);

add(
  "legacy-v1-version1.jsonl",
  "legacy",
  "v1 file with explicit version 1: compactions whose firstKeptEntryIndex points at the header (0), out of range, and forward (to an entry not yet migrated)",
  () => {
    const s = new Session("legacy-v1-version1", { dayOffset: -180 });
    const h = s.header({ version: 1 });
    void h;
    const e = (obj) => s.raw(JSON.stringify({ ...obj, timestamp: s.tick() }));
    e({ type: "message", message: { role: "user", content: "one", timestamp: s.clock } }); // 1
    e({ type: "compaction", summary: "index 0 = header", firstKeptEntryIndex: 0, tokensBefore: 100 }); // 2
    e({ type: "message", message: { role: "user", content: "two", timestamp: s.clock } }); // 3
    e({ type: "compaction", summary: "index out of range", firstKeptEntryIndex: 99, tokensBefore: 200 }); // 4
    e({ type: "message", message: { role: "user", content: "three", timestamp: s.clock } }); // 5
    e({ type: "compaction", summary: "forward index", firstKeptEntryIndex: 7, tokensBefore: 300 }); // 6
    e({ type: "message", message: { role: "user", content: "four (target of forward index)", timestamp: s.clock } }); // 7
    e({ type: "compaction", summary: "string index is left alone", firstKeptEntryIndex: "5", tokensBefore: 400 }); // 8
    e({ type: "message", message: { role: "bashExecution", command: "ls", output: "x", exitCode: 0, cancelled: false, truncated: false, timestamp: s.clock } }); // 9
    return s;
  },
);

add("legacy-v2.jsonl", "legacy", "v2 file: ids present, version 2, branches, a message with role hookMessage (migrated to custom)", () => {
  const s = new Session("legacy-v2", { dayOffset: -90 });
  s.header({ version: 2 });
  s.user("v2 hello");
  const a = s.assistant([text("v2 reply")]);
  s.message({ role: "hookMessage", customType: "my-hook", content: "injected by a hook", display: true, details: { v: 2 } });
  s.message({ role: "hookMessage", customType: "my-hook-blocks", content: [text("hook blocks")], display: false });
  s.user("after hook");
  s.leaf = a;
  s.user("branch in v2");
  s.label(a, "v2 label");
  return s;
});

// --- bad -------------------------------------------------------------------

add("bad-empty.jsonl", "bad", "empty file (0 bytes)", () => {
  const s = new Session("bad-empty");
  s.trailingNewline = false;
  return s;
});

add("bad-whitespace-only.jsonl", "bad", "only blank / whitespace lines", () => {
  const s = new Session("bad-whitespace-only");
  s.raw("");
  s.raw("   ");
  s.raw("\t");
  return s;
});

add("bad-first-line-not-header.jsonl", "bad", "entries but no session header at all", () => {
  const s = new Session("bad-first-line-not-header");
  s.user("I have no header");
  s.assistant([text("reply")]);
  return s;
});

add("bad-header-not-first.jsonl", "bad", "a valid header, but on the second line", () => {
  const s = new Session("bad-header-not-first");
  s.user("entry before the header", { parentId: null });
  s.header();
  s.assistant([text("reply after header")]);
  return s;
});

add("bad-header-numeric-id.jsonl", "bad", "header whose id is a number", () => {
  const s = new Session("bad-header-numeric-id");
  s.raw(JSON.stringify({ type: "session", version: 3, id: 12345, timestamp: s.nowIso(), cwd: "/home/dev/p" }));
  s.user("hello");
  s.assistant([text("world")]);
  return s;
});

add("bad-malformed-middle-line.jsonl", "bad", "a non-JSON line and a half-written JSON line in the middle; the entry after references the lost one", () => {
  const s = new Session("bad-malformed-middle-line");
  s.header();
  s.user("before");
  const a = s.assistant([text("reply")]);
  s.raw("this is not json at all");
  const lostId = s.newId();
  s.raw(`{"type":"message","id":"${lostId}","parentId":"${a}","timestamp":"2025-03-14T10:00:00.000Z","message":{"role":"user","content":"cut`);
  s.leaf = lostId;
  s.assistant([text("reply to a lost message (now an orphan)")]);
  s.user("continues");
  return s;
});

add("bad-truncated-last-line.jsonl", "bad", "last line cut off mid-JSON, no trailing newline (crash during append)", () => {
  const s = new Session("bad-truncated-last-line");
  s.header();
  s.user("question");
  const a = s.assistant([text("answer")]);
  const id = s.newId();
  s.raw(`{"type":"message","id":"${id}","parentId":"${a}","timestamp":"2025-03-14T11:00:00.000Z","message":{"role":"user","content":"half a li`);
  s.trailingNewline = false;
  return s;
});

add("bad-crlf-blank-lines.jsonl", "bad", "CRLF line endings, blank lines, whitespace-only lines, leading blank line", () => {
  const s = new Session("bad-crlf-blank-lines");
  s.raw("");
  s.header();
  s.raw("");
  s.user("crlf user");
  s.raw("   ");
  s.raw("");
  s.assistant([text("crlf reply\r\nwith an escaped CRLF inside")]);
  s.raw("\t");
  s.user("last");
  s.raw("");
  s.eol = "\r\n";
  return s;
});

add(
  "bad-versionless-tree.jsonl",
  "bad",
  "header without version while entries already have id/parentId and branches, labels and a compaction (the reference re-migrates it as v1)",
  () => {
    const s = new Session("bad-versionless-tree");
    const h = s.header();
    s.lines[0] = JSON.stringify({ type: "session", id: h.id, timestamp: h.timestamp, cwd: h.cwd });
    const u1 = s.user("root");
    const a1 = s.assistant([text("reply")]);
    s.user("branch one");
    s.assistant([text("branch one reply")]);
    s.leaf = a1;
    const u3 = s.user("branch two");
    s.assistant([text("branch two reply")]);
    s.compaction("summary", u3, 999);
    s.label(u1, "root label");
    s.user("after");
    return s;
  },
);

add("bad-parent-cycle.jsonl", "bad", "A's parent is B and B's parent is A; the last entry descends from the cycle (the reference hangs walking it)", () => {
  const s = new Session("bad-parent-cycle");
  s.header();
  s.user("normal root");
  s.assistant([text("normal reply")]);
  const A = s.newId();
  const B = s.newId();
  s.user("A (parent B)", { id: A, parentId: B });
  s.assistant([text("B (parent A)")], { id: B, parentId: A });
  s.user("C (child of B)", { parentId: B });
  return s;
}, { referenceHangs: true });

add("bad-self-parent.jsonl", "bad", "an entry whose parentId is its own id (getTree treats it as a root; context walks hang)", () => {
  const s = new Session("bad-self-parent");
  s.header();
  s.user("normal");
  const X = s.newId();
  s.assistant([text("my parent is me")], { id: X, parentId: X });
  s.user("child of the self-parent entry", { parentId: X });
  return s;
}, { referenceHangs: true });

add("bad-non-object-line.jsonl", "bad", "a line that is valid JSON but not an object ([1,2]) in the middle; it loads as an entry without id", () => {
  const s = new Session("bad-non-object-line");
  s.header();
  s.user("before");
  s.raw("[1,2]");
  s.raw('"just a string"');
  s.assistant([text("after")]);
  return s;
});

add("bad-null-line.jsonl", "bad", "a line containing JSON null (the reference throws while indexing)", () => {
  const s = new Session("bad-null-line");
  s.header();
  s.user("before");
  s.raw("null");
  s.assistant([text("after")]);
  return s;
});

// ---------------------------------------------------------------------------
// The large realistic session
// ---------------------------------------------------------------------------

function buildLarge() {
  const s = new Session("good-large-realistic", { dayOffset: 3 });
  s.header({ cwd: "/home/dev/src/inventory-service" });
  s.modelChange("anthropic", "claude-sonnet-4-5");
  s.thinkingLevel("medium");
  s.sessionInfo("Inventory service: add reservations API");

  const files = [
    "src/main.rs", "src/lib.rs", "src/api/mod.rs", "src/api/reservations.rs", "src/db/schema.rs",
    "src/db/queries.rs", "src/model/item.rs", "src/model/reservation.rs", "tests/api.rs", "Cargo.toml",
    "migrations/0003_reservations.sql", "README.md", "docs/API.md",
  ];
  const prompts = [
    "Add a reservations table and model.", "Wire the POST /reservations endpoint.", "Add validation for quantities.",
    "Write integration tests for reservations.", "Fix the failing test.", "Add pagination to GET /reservations.",
    "Document the new endpoints.", "Handle the expiry of reservations.", "Refactor queries into a repository.",
    "Run clippy and fix warnings.", "Add a metrics counter for reservations.", "Make the expiry interval configurable.",
  ];
  const words = "the a reservation item stock quantity query handler row table index error result test config expiry async".split(" ");
  const sentence = (n) => {
    const w = [];
    for (let i = 0; i < n; i++) w.push(s.pick(words));
    const t = w.join(" ");
    return t.charAt(0).toUpperCase() + t.slice(1) + ".";
  };

  let readSet = new Set();
  let modSet = new Set();

  const toolCall = () => {
    const kind = s.pick(["read", "read", "read", "edit", "edit", "write", "bash", "bash"]);
    const id = `toolu_${s.newId()}${s.newId()}`;
    const file = s.pick(files);
    let args;
    let result;
    let isError = false;
    let details;
    if (kind === "read") {
      args = s.chance(0.3) ? { path: file, offset: s.int(1, 200), limit: 100 } : { path: file };
      result = `// ${file}\n${sentence(s.int(4, 10))}`;
      readSet.add(file);
    } else if (kind === "edit") {
      args = { path: file, edits: [{ oldText: sentence(3), newText: sentence(4) }] };
      isError = s.chance(0.1);
      result = isError ? `Could not find the exact text in ${file}.` : `Successfully replaced text in ${file}.`;
      if (!isError) details = { diff: `-${sentence(2)}\n+${sentence(3)}`, firstChangedLine: s.int(1, 300) };
      modSet.add(file);
    } else if (kind === "write") {
      args = { path: file, content: `${sentence(6)}\n${sentence(5)}\n` };
      result = `Successfully wrote ${s.int(40, 4000)} bytes to ${file}`;
      modSet.add(file);
    } else {
      const cmd = s.pick(["cargo build", "cargo test", "cargo clippy -- -D warnings", "git status --short", "rg reservation src"]);
      args = { command: cmd, timeout: s.pick([60, 120, 300]) };
      isError = s.chance(0.15);
      result = isError ? `error: ${sentence(5)}\n\nCommand exited with code 101` : `${sentence(s.int(3, 8))}\n`;
    }
    return { id, kind, args, result, isError, details };
  };

  const turn = (prompt) => {
    const userId = s.user(prompt);
    const steps = s.int(1, 4);
    for (let i = 0; i < steps; i++) {
      const calls = Array.from({ length: s.int(1, 3) }, toolCall);
      const content = [];
      if (s.chance(0.6)) content.push({ type: "thinking", thinking: sentence(s.int(6, 14)), thinkingSignature: `sig${s.newId()}` });
      if (s.chance(0.5)) content.push(text(sentence(s.int(4, 9))));
      for (const c of calls) content.push({ type: "toolCall", id: c.id, name: c.kind, arguments: c.args });
      s.assistant(content);
      for (const c of calls) s.toolResult(c.id, c.kind, [text(c.result)], { isError: c.isError, details: c.details });
    }
    const last = s.assistant([text(sentence(s.int(8, 20)))]);
    return { userId, last };
  };

  const turns = [];
  for (let i = 0; i < 4; i++) turns.push(turn(prompts[i]));
  s.bash("cargo test 2>&1 | tail -5", "test result: ok. 12 passed; 0 failed", { exitCode: 0 });
  s.customMessage("test-watcher", "Tests are green.", false, { passed: 12, failed: 0 });
  s.label(turns[1].userId, "endpoint wired");

  // abandoned attempt on a side branch, then a branch summary back on the main line
  const forkPoint = turns[3].last;
  for (let i = 4; i < 6; i++) turns.push(turn(prompts[i]));
  const abandonedTip = s.leaf;
  s.leaf = forkPoint;
  s.branchSummary(
    abandonedTip,
    "## Goal\nFix the failing test and add pagination.\n\n## Outcome\nPagination approach used OFFSET and was too slow; abandoned.",
    { readFiles: ["src/db/queries.rs", "tests/api.rs"], modifiedFiles: ["src/db/queries.rs"] },
  );
  for (let i = 4; i < 7; i++) turns.push(turn(prompts[i]));
  s.custom("todo", { items: [{ t: "pagination", done: true }, { t: "expiry", done: false }] });

  // first compaction: keep from the last user message
  const keep1 = turns[turns.length - 1].userId;
  s.compaction(
    "## Goal\nAdd a reservations API to the inventory service.\n\n## Progress\n- Table, model, endpoint, validation, tests, pagination, docs done.\n\n## Next\n- Expiry handling.",
    keep1,
    142_311,
    { readFiles: [...readSet].sort(), modifiedFiles: [...modSet].sort() },
  );
  readSet = new Set();
  modSet = new Set();
  for (let i = 7; i < 10; i++) turns.push(turn(prompts[i]));
  s.thinkingLevel("high");
  s.bash("git diff --stat", "", { exitCode: 0 });
  s.bash("cargo bench", "...", { cancelled: true, exitCode: null });
  const beforeSwitch = s.leaf;
  s.modelChange("openai", "gpt-5");
  const gpt = turn(prompts[10]);
  void gpt;
  // user did not like the other model: go back and redo with the original model
  s.leaf = beforeSwitch;
  s.branchSummary(gpt.last, "Metrics counter attempted with gpt-5; result discarded.", undefined, false);
  turns.push(turn(prompts[10]));

  // second compaction: keep from the previous turn's user message
  const keep2 = turns[turns.length - 2].userId;
  s.compaction(
    "## Goal\nReservations API.\n\n## Progress\n- Everything up to metrics done.\n\n## Next\n- Configurable expiry.",
    keep2,
    151_007,
    { readFiles: [...readSet].sort(), modifiedFiles: [...modSet].sort() },
  );
  s.label(keep2, "after 2nd compaction");
  let i = 0;
  while (s.lines.length < 300) {
    turns.push(turn(`${prompts[11]} (iteration ${++i})`));
  }
  return s;
}

// ---------------------------------------------------------------------------
// Write everything
// ---------------------------------------------------------------------------

fs.mkdirSync(OUT, { recursive: true });
for (const f of fs.readdirSync(OUT)) {
  if (f.endsWith(".jsonl") || f === "manifest.json") fs.rmSync(path.join(OUT, f));
}
const manifest = [];
for (const item of corpus) {
  const s = item.build();
  fs.writeFileSync(path.join(OUT, item.file), s.text());
  const m = { file: item.file, description: item.description, kind: item.kind, referenceHangs: item.referenceHangs };
  if (item.sampleContexts) m.sampleContexts = item.sampleContexts;
  manifest.push(m);
}
manifest.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
fs.writeFileSync(path.join(OUT, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
process.stderr.write(`wrote ${manifest.length} corpus files to ${OUT}\n`);
