#!/usr/bin/env node
// Seeded, deterministic generator for conformance/corpus-compaction/*.jsonl:
// long, tool-heavy sessions shaped to exercise the reference's compaction code
// (token estimates, cut points, split turns, file operations, summarizer
// serialization, branch summaries). See README.md, "Compaction vectors".
//
// Each file has its own PRNG (mulberry32 seeded from the file name, like
// generate-corpus.mjs); ids are 8 hex chars drawn from it and timestamps start
// at a fixed date and advance by seeded steps. Running this twice produces
// identical bytes.
//
// Usage: node conformance/generate-compaction-corpus.mjs [outDir]
//        (default: conformance/corpus-compaction)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fnv1a, mulberry32 } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(process.argv[2] ?? path.join(HERE, "corpus-compaction"));

const BASE_MS = Date.UTC(2025, 5, 2, 8, 0, 0, 0); // 2025-06-02T08:00:00.000Z
const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const JPG_TINY = "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////2Q==";

// ---------------------------------------------------------------------------
// Token estimate (chars/4, UTF-16 units), used only to place cut points while
// generating. The recorder writes what the reference computes.
// ---------------------------------------------------------------------------

function estimate(m) {
  let chars = 0;
  const blocksText = (content, images) => {
    if (typeof content === "string") return content.length;
    let n = 0;
    for (const b of content) {
      if (b.type === "text" && b.text) n += b.text.length;
      if (images && b.type === "image") n += 4800;
    }
    return n;
  };
  switch (m.role) {
    case "user":
      chars = blocksText(m.content, false);
      break;
    case "assistant":
      for (const b of m.content) {
        if (b.type === "text") chars += b.text.length;
        else if (b.type === "thinking") chars += b.thinking.length;
        else if (b.type === "toolCall") chars += b.name.length + JSON.stringify(b.arguments).length;
      }
      break;
    case "custom":
    case "toolResult":
      chars = blocksText(m.content, true);
      break;
    case "bashExecution":
      chars = m.command.length + m.output.length;
      break;
    case "branchSummary":
    case "compactionSummary":
      chars = m.summary.length;
      break;
    default:
      return 0;
  }
  return Math.ceil(chars / 4);
}

// ---------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------

const WORDS = (
  "the parser session entry token budget summary branch compaction leaf parent child cut point turn " +
  "message tool result call read write edit file path error test build cargo crate module struct enum " +
  "trait impl async await stream buffer index cache store load save migrate header version json line " +
  "field value key order sort hash map vector string slice char unit width offset limit range window"
).split(" ");
const CJK = (
  "会话条目令牌预算摘要分支压缩叶节点父子切点轮次消息工具结果调用读取写入编辑文件路径错误测试构建模块结构枚举" +
  "特性实现异步等待缓冲索引缓存存储加载保存迁移版本字段键值顺序排序哈希映射向量字符串切片宽度偏移限制范围窗口" +
  "セッションのエントリをトークン予算で要約しますブランチ圧縮葉親子切断点ターン" +
  "세션항목토큰예산요약분기압축잎부모자식절단점차례메시지도구결과"
).split("");
const CJK_PUNCT = "，。、；：！？「」（）".split("");
const ASTRAL_CJK = ["𠀀", "𠀁", "𠀂", "𠀃", "𡈽", "𤭢", "𨳒", "𩸽"];
const EMOJI = ["😀", "🎉", "🚀", "🦀", "🔥", "✅", "🧪", "📦"];

const text = (t) => ({ type: "text", text: t });
const image = (data = PNG_1PX, mimeType = "image/png") => ({ type: "image", data, mimeType });

/** Raw JSON text to splice into a line verbatim (non-canonical key order, number spellings). */
const RAW = (json) => ({ __raw: json });

class Builder {
  constructor(name) {
    this.name = name;
    this.rand = mulberry32(fnv1a(name));
    this.clock = BASE_MS + this.int(0, 7_200_000);
    this.lines = [];
    this.parsed = []; // entries as JSON.parse sees them (same as the reference)
    this.byId = new Map();
    this.ids = new Set();
    this.leaf = null;
    this.raws = [];
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
  tick(lo = 300, hi = 40_000) {
    this.clock += this.int(lo, hi);
    return new Date(this.clock).toISOString();
  }
  hex(n) {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[Math.floor(this.rand() * 16)];
    return s;
  }
  newId() {
    for (;;) {
      const id = this.hex(8);
      if (!this.ids.has(id)) {
        this.ids.add(id);
        return id;
      }
    }
  }
  callId() {
    return `toolu_${this.hex(24)}`;
  }

  // ---- text of an exact UTF-16 length ------------------------------------
  words(n) {
    let s = "";
    while (s.length < n) {
      const w = this.pick(WORDS);
      s += s.length === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : this.chance(0.08) ? `. ${w}` : ` ${w}`;
    }
    return s.slice(0, n);
  }
  /** Pseudo source code / tool output of exactly n units, with newlines. */
  code(n, label = "") {
    const lines = [];
    let len = 0;
    let i = 1;
    while (len < n) {
      const kind = this.int(0, 4);
      const w = () => this.pick(WORDS);
      const line =
        kind === 0
          ? `fn ${w()}_${w()}(${w()}: &${w()}) -> Result<(), Error> {`
          : kind === 1
            ? `    let ${w()} = ${w()}.${w()}(${this.int(0, 999)})?;`
            : kind === 2
              ? `    // ${w()} ${w()} ${w()} ${label}`
              : kind === 3
                ? "}"
                : `${String(i).padStart(4, " ")}| ${w()} ${w()}`;
      lines.push(line);
      len += line.length + 1;
      i++;
    }
    return lines.join("\n").slice(0, n);
  }
  cjk(n, astralEvery = 0) {
    let s = "";
    let k = 0;
    while (s.length < n) {
      k++;
      if (astralEvery && k % astralEvery === 0 && s.length + 2 <= n) s += this.pick(ASTRAL_CJK);
      else if (k % 9 === 0) s += this.pick(CJK_PUNCT);
      else s += this.pick(CJK);
    }
    return s;
  }

  // ---- lines ------------------------------------------------------------
  header(fields = {}) {
    const h = {
      type: "session",
      version: 3,
      id: `${this.hex(8)}-${this.hex(4)}-7${this.hex(3)}-${"89ab"[this.int(0, 3)]}${this.hex(3)}-${this.hex(12)}`,
      timestamp: new Date(this.clock).toISOString(),
      cwd: "/home/dev/projects/ctxkit-compaction",
      ...fields,
    };
    this.lines.push(JSON.stringify(h));
  }

  /** Serialize with RAW(...) pieces spliced in verbatim. */
  stringify(obj) {
    const raws = [];
    const line = JSON.stringify(obj, (_k, v) => {
      if (v && typeof v === "object" && typeof v.__raw === "string") {
        raws.push(v.__raw);
        return `\u0001RAW${raws.length - 1}\u0001`;
      }
      return v;
    });
    return line.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i) => raws[Number(i)]);
  }

  entry(type, fields = {}, opts = {}) {
    const id = opts.id ?? this.newId();
    const parentId = "parentId" in opts ? opts.parentId : this.leaf;
    const timestamp = this.tick(opts.lo, opts.hi);
    const e = opts.fieldsFirst ? { type, ...fields, id, parentId, timestamp } : { type, id, parentId, timestamp, ...fields };
    const line = this.stringify(e);
    this.lines.push(line);
    const parsed = JSON.parse(line);
    this.parsed.push(parsed);
    this.byId.set(id, parsed);
    if (opts.advance !== false) this.leaf = id;
    return id;
  }

  message(msg, opts = {}) {
    const m = { ...msg };
    if (!("timestamp" in m)) m.timestamp = this.clock + this.int(200, 30_000) - this.int(0, 40);
    const id = this.entry("message", { message: m }, opts);
    return id;
  }
  /** estimate of the message stored in entry `id` */
  est(id) {
    const e = this.byId.get(id);
    return e.type === "message" ? estimate(e.message) : 0;
  }

  user(content, opts) {
    return this.message({ role: "user", content }, opts);
  }
  assistant(content, o = {}) {
    const input = o.input ?? this.int(2_000, 60_000);
    const output = o.output ?? this.int(20, 1_500);
    const cacheRead = o.cacheRead ?? (this.chance(0.7) ? this.int(0, 40_000) : 0);
    const cacheWrite = o.cacheWrite ?? (this.chance(0.3) ? this.int(0, 5_000) : 0);
    const usage = { input, output, cacheRead, cacheWrite, totalTokens: o.totalTokens ?? input + output + cacheRead + cacheWrite };
    const r6 = (x) => Math.round(x * 1e6) / 1e6;
    usage.cost = {
      input: r6(input * 3e-6),
      output: r6(output * 15e-6),
      cacheRead: r6(cacheRead * 0.3e-6),
      cacheWrite: r6(cacheWrite * 3.75e-6),
    };
    usage.cost.total = r6(usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite);
    const msg = {
      role: "assistant",
      content,
      api: o.api ?? "anthropic-messages",
      provider: o.provider ?? "anthropic",
      model: o.model ?? "claude-sonnet-4-5",
      usage,
      stopReason: o.stopReason ?? (content.some((b) => b.type === "toolCall") ? "toolUse" : "stop"),
    };
    if (o.errorMessage !== undefined) msg.errorMessage = o.errorMessage;
    if (o.noUsage) delete msg.usage;
    return this.message(msg, o);
  }
  toolResult(toolCallId, toolName, content, o = {}) {
    const msg = { role: "toolResult", toolCallId, toolName, content };
    if (o.details !== undefined) msg.details = o.details;
    msg.isError = o.isError ?? false;
    return this.message(msg, o);
  }
  bash(command, output, o = {}) {
    const msg = { role: "bashExecution", command, output, exitCode: o.exitCode ?? 0, cancelled: false, truncated: false };
    if (o.excludeFromContext !== undefined) msg.excludeFromContext = o.excludeFromContext;
    return this.message(msg, o);
  }
  modelChange(provider, modelId) {
    return this.entry("model_change", { provider, modelId });
  }
  thinkingLevel(level) {
    return this.entry("thinking_level_change", { thinkingLevel: level });
  }
  compaction(summary, firstKeptEntryId, tokensBefore, details, fromHook) {
    const f = { summary, firstKeptEntryId, tokensBefore };
    if (details !== undefined) f.details = details;
    if (fromHook !== undefined) f.fromHook = fromHook;
    return this.entry("compaction", f);
  }
  branchSummary(fromId, summary, details, fromHook, opts = {}) {
    const f = { fromId, summary };
    if (details !== undefined) f.details = details;
    if (fromHook !== undefined) f.fromHook = fromHook;
    return this.entry("branch_summary", f, opts);
  }
  customMessage(customType, content, display, details) {
    const f = { customType, content, display };
    if (details !== undefined) f.details = details;
    return this.entry("custom_message", f, { fieldsFirst: true });
  }
  custom(customType, data) {
    return this.entry("custom", { customType, data }, { fieldsFirst: true });
  }
  label(targetId, label) {
    return this.entry("label", { targetId, label });
  }
  sessionInfo(name) {
    return this.entry("session_info", { name });
  }

  /**
   * One agent step: an assistant message with the given tool calls (plus
   * optional thinking/text), followed by one toolResult per call.
   * calls: [{name, args, result: content[] | string, isError?}]
   */
  step(calls, o = {}) {
    const content = [];
    if (o.thinking !== undefined) content.push({ type: "thinking", thinking: o.thinking, thinkingSignature: `sig_${this.hex(16)}` });
    if (o.text !== undefined) content.push(text(o.text));
    const ids = calls.map(() => this.callId());
    calls.forEach((c, i) => content.push({ type: "toolCall", id: ids[i], name: c.name, arguments: c.args }));
    const a = this.assistant(content, o.assistant ?? {});
    const results = calls.map((c, i) =>
      this.toolResult(ids[i], c.name, typeof c.result === "string" ? [text(c.result)] : c.result, { isError: c.isError, details: c.details }),
    );
    return { assistant: a, results };
  }

  text() {
    return `${this.lines.join("\n")}\n`;
  }
}

// ---------------------------------------------------------------------------
// Shared content: paths and tool calls
// ---------------------------------------------------------------------------

const PATHS = [
  "src/main.rs", "src/lib.rs", "src/parser/mod.rs", "src/parser/lexer.rs", "src/store/session.rs",
  "src/store/index.rs", "tests/parser.rs", "Cargo.toml", "README.md", "docs/DESIGN.md", "Zeta.md",
  "src/ｆｕｌｌｗｉｄｔｈ.rs", "src/😀.rs", "src/ünïcode.rs", "src/𠀀.rs", "a b/with space.rs", "src/Upper.rs",
];

/** A random tool call with realistic arguments (several key orders and nestings). */
function randomCall(b, o = {}) {
  const kind = o.kind ?? b.pick(["read", "read", "read", "edit", "edit", "write", "bash", "grep", "find", "ls"]);
  const p = o.path ?? b.pick(PATHS);
  const resLen = o.resLen ?? (b.chance(0.04) ? b.int(2001, 2400) : b.int(40, 280));
  switch (kind) {
    case "read": {
      const v = b.int(0, 3);
      const args = v === 0 ? { path: p } : v === 1 ? { path: p, offset: b.int(1, 400), limit: 200 } : v === 2 ? { limit: 50, path: p } : { offset: 10, path: p, limit: 20 };
      if (o.image) return { name: "read", args, result: [text(`Read image file [image/png]`), image()] };
      return { name: "read", args, result: b.code(resLen, p) };
    }
    case "edit": {
      const v = b.int(0, 2);
      const oldText = b.words(b.int(10, 40));
      const newText = b.words(b.int(10, 50));
      const args =
        v === 0
          ? { path: p, edits: [{ oldText, newText }] }
          : v === 1
            ? { edits: [{ newText, oldText }, { oldText: b.words(12), newText: b.words(14) }], path: p }
            : { path: p, oldText, newText };
      const isError = b.chance(0.1);
      return {
        name: "edit",
        args,
        isError,
        result: isError ? `Could not find the exact text in ${p}. The old text must match exactly.` : `Successfully replaced text in ${p}.`,
        details: isError ? undefined : { diff: `-${oldText}\n+${newText}`, firstChangedLine: b.int(1, 300) },
      };
    }
    case "write": {
      const content = b.code(b.int(40, 200), p);
      return { name: "write", args: { content, path: p }, result: `Successfully wrote ${content.length} bytes to ${p}` };
    }
    case "bash": {
      const cmd = b.pick(["cargo build", "cargo test --workspace", "cargo clippy -- -D warnings", "git status --short", "ls -la src", "rg -n TODO"]);
      const args = b.chance(0.5) ? { command: cmd, timeout: b.pick([60, 120, 600]) } : { command: cmd };
      const isError = b.chance(0.15);
      return { name: "bash", args, isError, result: isError ? `${b.code(resLen)}\n\nCommand exited with code 101` : b.code(resLen) };
    }
    case "grep":
      return {
        name: "grep",
        args: { pattern: b.pick(["fn \\w+", "TODO|FIXME", "unwrap\\(\\)"]), path: p, options: { ignoreCase: b.chance(0.5), context: b.int(0, 3), glob: ["*.rs", "!target/**"] } },
        result: b.code(resLen, "match"),
      };
    case "find":
      return { name: "find", args: { pattern: "*.rs", path: "src" }, result: PATHS.filter((x) => x.endsWith(".rs")).join("\n") };
    default:
      return { name: "ls", args: { path: p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "." }, result: PATHS.join("\n") };
  }
}

/** user prompt -> n steps of tool calls -> final answer. Returns ids. */
function toolTurn(b, prompt, nSteps, o = {}) {
  const userId = b.user(prompt);
  const steps = [];
  for (let i = 0; i < nSteps; i++) {
    const calls = Array.from({ length: o.callsPerStep ?? b.int(1, 3) }, () => randomCall(b, { image: o.images && b.chance(o.images) }));
    steps.push(
      b.step(calls, {
        thinking: b.chance(0.5) ? b.words(b.int(20, 120)) : undefined,
        text: b.chance(0.4) ? b.words(b.int(20, 80)) : undefined,
      }),
    );
  }
  const answer = o.noAnswer ? null : b.assistant([text(o.answer ?? b.words(b.int(40, 200)))]);
  return { userId, steps, answer };
}

// ---------------------------------------------------------------------------
// Corpus definitions
// ---------------------------------------------------------------------------

const corpus = [];
function add(file, description, build) {
  corpus.push({ file, description, build });
}

add(
  "cmp-tool-heavy.jsonl",
  "~330 entries of read/write/edit/bash/grep/find/ls tool use: nested arguments in several key orders, raw JSON arguments with integer-like keys and unusual number spellings, non-counting file ops (path not a string, empty path, 'Read', 'read_file', file_path), images, thinking (incl. empty), isError results, results > 2000 units; ends with a dangling toolResult",
  () => {
    const b = new Builder("cmp-tool-heavy");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("medium");
    b.sessionInfo("Tool-heavy refactor");
    let t = 0;
    while (b.lines.length < 120) toolTurn(b, `Task ${++t}: ${b.words(b.int(20, 100))}`, b.int(2, 5), { images: 0.12 });

    // file operations that must NOT count, and some that must
    b.user("Now look at the odd files.");
    b.step(
      [
        { name: "read", args: { path: ["src/a.rs", "src/b.rs"] }, result: "EISDIR" , isError: true },
        { name: "read", args: { path: "" }, result: "empty path", isError: true },
        { name: "Read", args: { path: "src/capital-read.rs" }, result: b.code(200) },
        { name: "read_file", args: { path: "src/read-file-tool.rs" }, result: b.code(200) },
        { name: "edit", args: { file_path: "src/file-path-key.rs", oldText: "a", newText: "b" }, result: "ok" },
        { name: "write", args: { path: 42, content: "x" }, result: "bad path", isError: true },
        { name: "write", args: { path: "out/🦀-generated.rs", content: "// 🦀\n" }, result: "Successfully wrote 8 bytes" },
        { name: "read", args: { path: "Cargo.toml" }, result: b.code(300) },
        { name: "edit", args: { path: "Cargo.toml", edits: [] }, result: "no edits" },
      ],
      { thinking: "", text: "Checking the odd ones." },
    );
    // raw JSON arguments: integer-like keys, number spellings, escapes
    b.step(
      [
        {
          name: "edit",
          args: RAW(
            '{"path":"src/raw\\/escaped.rs","z":1,"10":"ten","2":"two","b":{"y":[1.0,1E3,-0.0,0.1,1.50,12345678901234567890,1e-7],"1":null},"t":"tab\\there \\u00e9 \\ud83e\\udd80"}',
          ),
          result: "Successfully replaced text in src/raw/escaped.rs.",
        },
        { name: "bash", args: RAW('{"timeout":1e2,"command":"echo \\"quoted\\" \\u2028 done","env":{"B":"2","A":"1","0":"zero"}}'), result: '"quoted" \u2028 done\n' },
      ],
      { text: "Raw arguments." },
    );
    b.toolResult("toolu_orphan_result_0001", "bash", [text("a result whose call is not in this session")]);
    b.assistant([text(b.words(300))]);
    // long results (> 2000 units)
    b.user("Read the big files.");
    b.step([
      { name: "read", args: { path: "src/big.rs" }, result: b.code(2600, "big") },
      { name: "bash", args: { command: "cargo test 2>&1" }, result: [text(b.code(1800)), text(b.code(900))] },
    ]);
    b.assistant([text(b.words(200))]);
    while (b.lines.length < 320) toolTurn(b, `Follow-up ${++t}: ${b.words(b.int(20, 120))}`, b.int(2, 6), { images: 0.12 });
    // ends mid-turn: a tool call and its result, no final answer
    b.user("One more read, then stop.");
    b.step([{ name: "read", args: { path: "src/last.rs" }, result: b.code(900) }], { thinking: b.words(120) });
    return b;
  },
);

add(
  "cmp-surrogate-truncation.jsonl",
  "tool results around the 2000-unit serialization limit: exactly 2000, 2001, cut inside a surrogate pair (emoji, astral CJK), cut right after a pair, cut inside a ZWJ sequence, boundary spanning two text blocks around an image; long user/bash text with emoji (not truncated)",
  () => {
    const b = new Builder("cmp-surrogate-truncation");
    b.header();
    b.thinkingLevel("off");
    const results = [
      ["exactly 2000 units", b.code(2000)],
      ["2001 units", b.code(2001)],
      ["emoji starts at 1999 (cut inside the pair)", `${b.code(1999)}😀${b.code(500)}`],
      ["emoji at 1998..1999 (cut right after the pair)", `${b.code(1998)}🎉${b.code(300)}`],
      ["odd offset then astral CJK only", `a${"𠀀𠀁𠀂𠀃𡈽𤭢𨳒𩸽".repeat(190)}`],
      ["even offset then astral CJK only", `${"𠀀𠀁𠀂𠀃𡈽𤭢𨳒𩸽".repeat(190)}`],
      ["ZWJ family: cut after a ZWJ", `${b.code(1997)}👨‍👩‍👧‍👦${b.code(100)}`],
      ["many emoji, high surrogate at 1999", `${"🦀".repeat(999)}x🚀${"🔥".repeat(200)}`],
    ];
    let k = 0;
    for (const [what, body] of results) {
      b.user(`Case ${++k}: ${what}.`);
      b.step([{ name: "read", args: { path: `fixtures/case-${k}.txt` }, result: body }]);
      b.assistant([text(`Result ${k} had ${body.length} UTF-16 units.`)]);
    }
    b.user("Now a result split over two text blocks with an image between them.");
    b.step([
      {
        name: "read",
        args: { path: "fixtures/two-blocks.txt" },
        result: [text(b.code(1500)), image(), text(`${b.code(499)}🧪${b.code(300)}`)],
      },
    ]);
    b.assistant([text("Blocks are joined without a separator before truncation.")]);
    b.user("An error result with emoji at the limit.");
    b.step([{ name: "bash", args: { command: "./fail.sh" }, result: `${b.code(1998)}✅🦀${b.code(40)}`, isError: true }]);
    b.assistant([text("It failed.")]);
    b.user(`A long user message is never truncated: ${b.code(1990)}😀${b.code(1200)}`);
    b.assistant([text(`Long thinking and text are not truncated either ${"🚀".repeat(1100)}`), text("second text block")]);
    b.bash("cat emoji.log", `${b.code(1999)}🎉${b.code(800)}`);
    b.user("Summarize the emoji log.");
    b.assistant([text("Done 🎉")]);
    for (let i = 0; i < 20; i++) toolTurn(b, `Filler ${i} ${"🦀".repeat(b.int(0, 3))}`, b.int(1, 3), { images: 0.1 });
    return b;
  },
);

add(
  "cmp-cjk-heavy.jsonl",
  "CJK-heavy prompts, answers, thinking and tool results (BMP and astral CJK, results > 2000 units), CJK file paths for read/write/edit (UTF-16 sort order)",
  () => {
    const b = new Builder("cmp-cjk-heavy");
    b.header({ cwd: "/home/開発/プロジェクト" });
    b.modelChange("anthropic", "claude-opus-4-1");
    b.thinkingLevel("high");
    const cjkPaths = ["文档/说明.md", "ソース/メイン.rs", "한국어/파일.txt", "src/中文.rs", "𠀀/astral.md", "ａｂｃ.txt", "abc.txt", "ABC.txt"];
    for (let t = 0; t < 28; t++) {
      b.user(`${b.cjk(b.int(20, 120), 7)}？`);
      const nSteps = b.int(1, 3);
      for (let s = 0; s < nSteps; s++) {
        const p = b.pick(cjkPaths);
        const kind = b.pick(["read", "edit", "write", "bash"]);
        const call =
          kind === "read"
            ? { name: "read", args: { path: p }, result: b.cjk(b.chance(0.12) ? b.int(2001, 2300) : b.int(40, 300), 11) }
            : kind === "edit"
              ? { name: "edit", args: { path: p, edits: [{ oldText: b.cjk(12), newText: b.cjk(16) }] }, result: `已成功替换 ${p} 中的文本。` }
              : kind === "write"
                ? { name: "write", args: { path: p, content: b.cjk(b.int(30, 150)) }, result: `已写入 ${p}` }
                : { name: "bash", args: { command: `grep -rn "${b.cjk(3)}" .` }, result: b.cjk(b.int(40, 250)) };
        b.step([call], { thinking: b.chance(0.6) ? b.cjk(b.int(30, 200), 13) : undefined });
      }
      b.assistant([text(b.cjk(b.int(40, 300), 17))]);
    }
    return b;
  },
);

add(
  "cmp-prev-compaction.jsonl",
  "one previous compaction (pi-generated details with unsorted/duplicate/overlapping lists, paths that sort differently by UTF-16 and by code point) whose firstKeptEntryId lies before it; model/thinking changes before user messages",
  () => {
    const b = new Builder("cmp-prev-compaction");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("low");
    const turns = [];
    for (let i = 0; i < 12; i++) turns.push(toolTurn(b, `Step ${i + 1}: ${b.words(b.int(40, 200))}`, b.int(1, 4), { images: 0.1 }));
    b.compaction(
      `## Goal\n${b.words(300)}\n\n## Progress\n### Done\n- [x] ${b.words(120)}\n\n## Next Steps\n1. ${b.words(100)}`,
      turns[9].userId,
      61_234,
      {
        readFiles: ["src/b.rs", "src/a.rs", "src/a.rs", "Zeta.md", "src/😀.rs", "src/ｆｕｌｌ.rs", "docs/shared.md", "src/Upper.rs"],
        modifiedFiles: ["docs/shared.md", "src/z.rs", "src/z.rs"],
      },
    );
    for (let i = 12; i < 40; i++) {
      if (i % 7 === 0) {
        b.modelChange(i % 14 === 0 ? "openai" : "anthropic", i % 14 === 0 ? "gpt-5" : "claude-sonnet-4-5");
        b.thinkingLevel(i % 14 === 0 ? "high" : "medium");
      }
      toolTurn(b, `Step ${i + 1}: ${b.words(b.int(40, 200))}`, b.int(1, 4), { images: 0.2 });
    }
    return b;
  },
);

add(
  "cmp-two-compactions-fromhook.jsonl",
  "two previous compactions on the path: the first pi-generated with details, the last fromHook:true with details (ignored for file ops); custom_message and bashExecution after the last one",
  () => {
    const b = new Builder("cmp-two-compactions-fromhook");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("medium");
    const turns = [];
    for (let i = 0; i < 10; i++) turns.push(toolTurn(b, `Phase A ${i}: ${b.words(b.int(40, 160))}`, b.int(1, 4)));
    b.compaction(`## Goal\nPhase A.\n\n## Progress\n${b.words(400)}`, turns[8].userId, 48_000, {
      readFiles: ["first/read.md", "shared.rs"],
      modifiedFiles: ["first/mod.rs"],
    });
    for (let i = 0; i < 10; i++) turns.push(toolTurn(b, `Phase B ${i}: ${b.words(b.int(40, 160))}`, b.int(1, 4)));
    b.compaction(`Summary written by an extension hook. ${b.words(500)}`, turns[17].userId, 77_777, {
      readFiles: ["hook/only-read.md", "shared.rs"],
      modifiedFiles: ["hook/only-mod.rs"],
    }, true);
    b.customMessage("reminder", `Remember the plan: ${b.words(200)}`, true, { source: "extension" });
    for (let i = 0; i < 14; i++) {
      if (i === 5) b.bash("cargo test -q", b.code(600));
      if (i === 9) b.customMessage("status", [text(b.words(120)), image()], false);
      turns.push(toolTurn(b, `Phase C ${i}: ${b.words(b.int(40, 160))}`, b.int(1, 4), { images: 0.1 }));
    }
    return b;
  },
);

add(
  "cmp-compaction-last.jsonl",
  "the loaded leaf is a compaction entry (prepareCompaction returns nothing); side branches with edits and a branch_summary on the path",
  () => {
    const b = new Builder("cmp-compaction-last");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("medium");
    const turns = [];
    for (let i = 0; i < 6; i++) turns.push(toolTurn(b, `Main ${i}: ${b.words(b.int(40, 160))}`, b.int(1, 3)));
    const fork = turns[4].answer;
    // side branch from turn 4's answer
    for (let i = 0; i < 4; i++) toolTurn(b, `Side ${i}: ${b.words(b.int(40, 160))}`, b.int(1, 3));
    const sideTip = b.leaf;
    b.leaf = fork;
    b.branchSummary(sideTip, `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n${b.words(400)}`, {
      readFiles: ["side/read.rs"],
      modifiedFiles: ["side/mod.rs", "src/lib.rs"],
    });
    for (let i = 6; i < 24; i++) turns.push(toolTurn(b, `Main ${i}: ${b.words(b.int(40, 160))}`, b.int(1, 3), { images: 0.05 }));
    b.compaction(`## Goal\nMain line.\n\n${b.words(600)}`, turns[21].userId, 91_500, {
      readFiles: ["src/main.rs"],
      modifiedFiles: ["src/lib.rs"],
    });
    return b;
  },
);

add(
  "cmp-split-turn.jsonl",
  "a few normal turns, then one very long turn (~75 tool steps with thinking, images, a bashExecution and a custom_message in the middle) so most cuts fall mid-turn",
  () => {
    const b = new Builder("cmp-split-turn");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("high");
    for (let i = 0; i < 8; i++) toolTurn(b, `Warm-up ${i}: ${b.words(b.int(40, 160))}`, b.int(1, 2));
    b.modelChange("anthropic", "claude-opus-4-1");
    b.user(`Big task: ${b.words(600)}`);
    for (let s = 0; s < 75; s++) {
      if (s === 35) b.bash("git diff --stat", b.code(700));
      if (s === 66) b.customMessage("ci-status", `CI failed on ${b.words(200)}`, true, { run: 17 });
      const calls = [randomCall(b, { kind: s % 5 === 2 ? "read" : undefined, image: s % 5 === 2 })];
      if (s % 4 === 0) calls.push(randomCall(b, { kind: b.pick(["edit", "write", "read"]) }));
      b.step(calls, { thinking: b.words(b.int(30, 200)), text: s % 3 === 0 ? b.words(b.int(20, 100)) : undefined });
    }
    b.assistant([text(b.words(900))]);
    return b;
  },
);

add(
  "cmp-false-split-turn.jsonl",
  "sizes engineered so that, from the end, keepRecentTokens 500 crosses at a user message preceded by model_change+thinking_level_change, 2000 at a user message preceded by label+session_info (both: false split turn), 8000 at a user message preceded by an assistant (clean cut), 20000 at a bashExecution (split turn with an empty prefix), 100000 past the start",
  () => {
    const b = new Builder("cmp-false-split-turn");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("medium");
    // ---- filler (about 11000 tokens, several images) -------------------
    for (let i = 0; i < 6; i++) toolTurn(b, `Filler ${i}: ${b.words(b.int(40, 120))}`, b.int(1, 3), { images: 0.25 });

    // Helpers to hit exact token sums. A text of 4n units is n tokens.
    const textOf = (tokens) => b.words(tokens * 4);
    /** A tool step (call + result) followed by an answer, totalling exactly `tokens` (answer padded). */
    const segment = (tokens, result) => {
      const st = b.step([{ name: "read", args: { path: "src/lib.rs" }, result }]);
      const used = b.est(st.assistant) + st.results.reduce((n, id) => n + b.est(id), 0);
      if (tokens - used < 1) throw new Error("segment too small");
      return b.assistant([text(textOf(tokens - used))]);
    };

    // Suffix sums are counted from the end of the session backwards:
    //   final answer 450                                   -> 450
    //   U_last 100 (after model_change + thinking change)  -> 550   >= 500
    //   seg B 1400                                         -> 1950
    //   U_prev 100 (after label + session_info)            -> 2050  >= 2000
    //   seg C 5500                                         -> 7550
    //   U_c 500 (right after an assistant)                 -> 8050  >= 8000
    //   seg D 10000                                        -> 18050
    //   U_d 100                                            -> 18150
    //   answer (padded), read result 1300, read call       -> 19610
    //   bashExecution 400 (inside turn U_e)                -> 20010 >= 20000
    // Sizes come mostly from images (4800 chars = 1200 tokens each) to keep the file small.
    b.user(textOf(100)); // U_e
    b.step([{ name: "bash", args: { command: "make check" }, result: [text(textOf(50)), image()] }]);
    b.bash("make lint", textOf(400).slice(9));
    const st2 = b.step([{ name: "read", args: { path: "src/e.rs" }, result: [text(textOf(100)), image()] }]);
    b.assistant([text(textOf(19610 - 18150 - 1300 - b.est(st2.assistant)))]);
    b.user(textOf(100)); // U_d
    segment(10000, [text(textOf(200)), image(), image(), image(), image(), image(), image(), image()]);
    b.user(textOf(500)); // U_c, directly after an assistant message
    segment(5500, [text(textOf(100)), image(), image(), image(), image()]);
    const target = b.leaf;
    b.label(target, "before-prev");
    b.sessionInfo("False split turn demo");
    b.user(textOf(100)); // U_prev
    segment(1400, [text(textOf(50)), image()]);
    b.modelChange("openai", "gpt-5");
    b.thinkingLevel("high");
    b.user(textOf(100)); // U_last
    // usage with totalTokens 0: context tokens fall back to the sum of the parts
    b.assistant([text(textOf(450))], { provider: "openai", model: "gpt-5", api: "openai-responses", totalTokens: 0, input: 20_000, output: 450, cacheRead: 1_000, cacheWrite: 10 });
    // check the engineered crossings (linear session: path = all entries)
    const expect = { 500: ["user", "thinking_level_change"], 2000: ["user", "session_info"], 8000: ["user", "message"], 20000: ["bashExecution", "message"] };
    for (const [keep, [role, before]] of Object.entries(expect)) {
      let acc = 0;
      let hit = -1;
      for (let i = b.parsed.length - 1; i >= 0; i--) {
        if (b.parsed[i].type !== "message") continue;
        acc += estimate(b.parsed[i].message);
        if (acc >= Number(keep)) {
          hit = i;
          break;
        }
      }
      const e = b.parsed[hit];
      if (e?.message?.role !== role || b.parsed[hit - 1].type !== before) {
        throw new Error(`cmp-false-split-turn: keep ${keep} crosses at ${e?.message?.role} after ${b.parsed[hit - 1]?.type}`);
      }
    }
    const total = b.parsed.reduce((n, e) => n + (e.type === "message" ? estimate(e.message) : 0), 0);
    if (total >= 100000 || total < 20000) throw new Error(`cmp-false-split-turn: total ${total}`);
    return b;
  },
);

add(
  "cmp-nothing-to-cut.jsonl",
  "after the previous compaction (whose firstKeptEntryId is a toolResult) the path holds only toolResults and non-message entries, so there is no valid cut point",
  () => {
    const b = new Builder("cmp-nothing-to-cut");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("off");
    b.user("Run the migration script and show me the log.");
    b.step([{ name: "bash", args: { command: "./migrate.sh" }, result: b.code(2500) }]);
    const a2 = b.callId();
    b.assistant([{ type: "toolCall", id: a2, name: "read", arguments: { path: "logs/migrate.log" } }]);
    const kept = b.toolResult(a2, "read", [text(b.code(1200))]);
    b.custom("progress", { step: 2, of: 3 });
    b.label(kept, "log");
    b.compaction("## Goal\nRun the migration.\n\n## Progress\nMigration ran; reading its log.", kept, 15_000, {
      readFiles: ["logs/migrate.log"],
      modifiedFiles: ["db/schema.sql"],
    });
    b.toolResult("toolu_late_result_000000001", "bash", [text(b.code(800))]);
    b.modelChange("anthropic", "claude-haiku-4-5");
    b.thinkingLevel("minimal");
    b.sessionInfo("nothing to cut");
    return b;
  },
);

add(
  "cmp-branches.jsonl",
  "a tree: several branches from different points, branch_summary entries (pi-generated with details, fromHook with details, nested), a compaction on one branch, a second root (branch_summary fromId root), custom_message and bashExecution (one excludeFromContext) on branches",
  () => {
    const b = new Builder("cmp-branches");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("medium");
    const turns = [];
    for (let i = 0; i < 5; i++) turns.push(toolTurn(b, `Trunk ${i}: ${b.words(b.int(40, 200))}`, b.int(1, 3)));
    const P = turns[3].answer;
    const early = turns[1].answer;

    // branch A from P
    b.leaf = P;
    toolTurn(b, `A0: ${b.words(100)}`, 2);
    b.bash("env | sort", b.code(300), { excludeFromContext: true });
    b.bash("cargo fmt --check", b.code(200), { exitCode: 1 });
    b.customMessage("hint", [text(b.words(150)), image()], false, { k: 1 });
    b.user("Write the new module.");
    b.step([{ name: "write", args: { path: "src/a_only.rs", content: b.code(300) }, result: "ok" }]);
    b.step([{ name: "edit", args: { path: "src/lib.rs", edits: [{ oldText: "mod x;", newText: "mod x;\nmod a_only;" }] }, result: "ok" }]);
    b.assistant([text(b.words(200))]);
    const tipA = b.leaf;

    // branch C from an early point (short)
    b.leaf = early;
    toolTurn(b, `C0: ${b.words(80)}`, 1);
    b.branchSummary(tipA, `Nested summary of A seen from C. ${b.words(200)}`, { readFiles: ["nested/read.md"], modifiedFiles: ["nested/mod.rs"] }, undefined);
    toolTurn(b, `C1: ${b.words(80)}`, 1);
    const tipC = b.leaf;

    // second root: a branch summary attached to nothing
    b.leaf = null;
    b.branchSummary("root", `Summary of the abandoned first attempt. ${b.words(150)}`, { readFiles: ["root/read.md"], modifiedFiles: [] });
    toolTurn(b, `D0: ${b.words(80)}`, 1);
    const tipD = b.leaf;

    // branch B from P (the loaded leaf ends up here)
    b.leaf = P;
    b.branchSummary(P, `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n${b.words(300)}`, {
      readFiles: ["src/lib.rs", "side/read.md"],
      modifiedFiles: ["src/a_only.rs", "src/lib.rs"],
    }, false);
    for (let i = 0; i < 6; i++) turns.push(toolTurn(b, `B${i}: ${b.words(b.int(40, 200))}`, b.int(1, 3)));
    b.branchSummary(P, `Extension-written summary. ${b.words(120)}`, { readFiles: ["hook/read.md"], modifiedFiles: ["hook/mod.rs"] }, true);
    for (let i = 6; i < 10; i++) turns.push(toolTurn(b, `B${i}: ${b.words(b.int(40, 200))}`, b.int(1, 3)));
    b.compaction(`## Goal\nBranch B.\n\n${b.words(300)}`, turns[turns.length - 2].userId, 54_321, {
      readFiles: ["b/read.md"],
      modifiedFiles: ["b/mod.rs"],
    });
    for (let i = 10; i < 16; i++) turns.push(toolTurn(b, `B${i}: ${b.words(b.int(40, 200))}`, b.int(1, 3)));
    const tipB = b.leaf;
    void tipC;
    void tipD;
    void tipB;
    return b;
  },
);

add(
  "cmp-usage-aborted.jsonl",
  "usage variants for context tokens: totalTokens 0, error and aborted assistants with usage (skipped), a length stop, trailing bashExecution/custom_message/user after the last valid usage; ~90 image tool results so the session exceeds 100000 estimated tokens",
  () => {
    const b = new Builder("cmp-usage-aborted");
    b.header();
    b.modelChange("anthropic", "claude-sonnet-4-5");
    b.thinkingLevel("medium");
    for (let i = 0; i < 30; i++) {
      b.user(`Screenshot batch ${i}: ${b.words(b.int(30, 120))}`);
      b.step(
        [0, 1, 2].map((k) => ({ name: "read", args: { path: `shots/${i}-${k}.png` }, result: [text("Read image file [image/png]"), image(k === 2 ? JPG_TINY : PNG_1PX, k === 2 ? "image/jpeg" : "image/png")] })),
        { thinking: b.words(80) },
      );
      if (i === 10) b.assistant([text(b.words(200))], { totalTokens: 0, input: 31_000, output: 400, cacheRead: 5_000, cacheWrite: 100 });
      else if (i === 20) b.assistant([text(b.words(120))], { stopReason: "length" });
      else b.assistant([text(b.words(b.int(60, 300)))]);
    }
    b.user("Try again.");
    b.assistant([text("Partial")], { stopReason: "error", errorMessage: "overloaded", input: 99_999, output: 1, totalTokens: 100_000 });
    b.user("And again.");
    b.assistant([text("Stopped halfway")], { stopReason: "aborted", errorMessage: "Request was aborted", totalTokens: 123_456 });
    b.bash("uptime", " 10:00:00 up 1 day");
    b.customMessage("note", "A note from an extension.", true);
    b.user("Last question without an answer yet.");
    return b;
  },
);

// ---------------------------------------------------------------------------
// Write everything
// ---------------------------------------------------------------------------

fs.mkdirSync(OUT, { recursive: true });
for (const f of fs.readdirSync(OUT)) {
  if (f.endsWith(".jsonl") || f === "manifest.json") fs.rmSync(path.join(OUT, f));
}
const manifest = [];
for (const item of corpus) {
  const b = item.build();
  fs.writeFileSync(path.join(OUT, item.file), b.text());
  manifest.push({ file: item.file, description: item.description, kind: "good", referenceHangs: false, entries: b.lines.length - 1 });
}
manifest.sort((a, c) => (a.file < c.file ? -1 : a.file > c.file ? 1 : 0));
fs.writeFileSync(path.join(OUT, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
process.stderr.write(`wrote ${manifest.length} corpus files to ${OUT}\n`);
