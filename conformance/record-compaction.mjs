#!/usr/bin/env node
// Records what the reference implementation (@mariozechner/pi-coding-agent@0.73.1)
// does when compacting and branch-summarizing each session file, into
// conformance/vectors-compaction/<name>.json. See README.md, "Compaction vectors".
//
// Inputs: every file of corpus-compaction/ and every good-*/legacy-* file of
// corpus/ (files flagged referenceHangs are skipped).
//
// Usage: PI_DIR=/dir/with/node_modules node conformance/record-compaction.mjs [outDir]
// Without PI_DIR the pinned reference is npm-installed into a temp dir first.
//
// No request leaves the process: summaries are produced by a fake model whose
// API ("ctxkit-fake") is registered in pi-ai's API registry with
// registerApiProvider; it records every request and answers with fixed text.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fnv1a, formatJson, installDeterminism, IS_087, IS_16, loadReference, plain, REFERENCE_PACKAGE, resolvePiDir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(process.argv[2] ?? path.join(HERE, "vectors-compaction"));
const CORPUS_DIRS = [
  { dir: path.join(HERE, "corpus-compaction"), select: () => true },
  { dir: path.join(HERE, "corpus"), select: (m) => (m.kind === "good" || m.kind === "legacy") && !m.referenceHangs },
  // 0.87.1 and later: files using its new entries (the BOM file is refused by it).
  ...(IS_087 ? [{ dir: path.join(HERE, "corpus-087"), select: (m) => m.kind === "good" }] : []),
  // 1.6.0 only: files for what it changed (nested calls, edits inside branches, reasoning…).
  ...(IS_16 ? [{ dir: path.join(HERE, "corpus-16"), select: (m) => m.kind === "good" }] : []),
];

// Determinism must be in place before the reference module graph is loaded.
const determinism = installDeterminism();
const piDir = resolvePiDir();
const ref = await loadReference(piDir);
const { SessionManager } = ref;
const pkgDir = path.join(piDir, "node_modules", ...REFERENCE_PACKAGE.split("/"));
const cmp = await import(pathToFileURL(path.join(pkgDir, "dist", "core", "compaction", "index.js")).href);
// pi-ai must be the very instance the compaction module imports (its API
// registry is module state). Prefer a copy nested in the package, like Node's
// resolution does; compact() throws "No API provider registered" otherwise.
const aiScope = REFERENCE_PACKAGE.split("/")[0];
const aiDir = [path.join(pkgDir, "node_modules", aiScope, "pi-ai"), path.join(piDir, "node_modules", aiScope, "pi-ai")].find(
  (d) => fs.existsSync(path.join(d, "package.json")),
);
const ai = await import(pathToFileURL(path.join(aiDir, "dist", "index.js")).href);

process.chdir("/");
// Same per-file clock and seed label as record.mjs, so ids created by v1
// migration equal the ones in vectors/<name>.json.
const CLOCK_BASE = Date.UTC(2099, 0, 1);
const clockFor = (file) => CLOCK_BASE + (fnv1a(file) % 2_000_000_000);

// ---------------------------------------------------------------------------
// The fake model
// ---------------------------------------------------------------------------

const FAKE_API = "ctxkit-fake";
const fakeModel = (id, over = {}) => ({
  id,
  name: id,
  api: FAKE_API,
  provider: "ctxkit-fake",
  baseUrl: "http://127.0.0.1:9",
  reasoning: false,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 16384,
  ...over,
});
const MODELS = {
  plain: fakeModel("fake-plain"),
  reasoning: fakeModel("fake-reasoning", { reasoning: true }),
  smallWindow: fakeModel("fake-small-window", { contextWindow: 18384 }),
};

let captured = [];
/** (request) => {content, stopReason?, errorMessage?} */
let responder = () => ({ content: [{ type: "text", text: "X" }] });

function fakeStream(model, context, options) {
  const msgs = context.messages;
  if (msgs.length !== 1 || msgs[0].role !== "user" || !Array.isArray(msgs[0].content) || msgs[0].content.length !== 1 || msgs[0].content[0].type !== "text") {
    throw new Error(`unexpected summarization request shape: ${JSON.stringify(msgs).slice(0, 300)}`);
  }
  if (context.tools !== undefined && context.tools.length > 0) throw new Error("summarization request carries tools");
  const req = {
    model: model.id,
    systemPrompt: context.systemPrompt,
    userText: msgs[0].content[0].text,
    maxTokens: options?.maxTokens,
    reasoning: options?.reasoning ?? null,
  };
  captured.push(req);
  const answer = responder(req);
  const stream = ai.createAssistantMessageEventStream();
  queueMicrotask(() => {
    const message = {
      role: "assistant",
      content: answer.content ?? [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: answer.stopReason ?? "stop",
      timestamp: Date.now(),
    };
    if (answer.errorMessage !== undefined) message.errorMessage = answer.errorMessage;
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      stream.push({ type: "error", reason: message.stopReason, error: message });
    } else {
      stream.push({ type: "done", reason: message.stopReason, message });
    }
    stream.end(message);
  });
  return stream;
}
if (!IS_087) ai.registerApiProvider({ api: FAKE_API, stream: fakeStream, streamSimple: fakeStream }, "ctxkit-conformance");

/**
 * 0.87.1 takes a `streamFn` instead of a registered API. Its summarization
 * context is normalized: a leading system message (the system prompt, no
 * tools) and the one user message.
 */
async function fakeStreamFn087(model, context, options) {
  const msgs = context.messages;
  const [system, user] = msgs;
  if (
    msgs.length !== 2 ||
    system.role !== "system" ||
    typeof system.content !== "string" ||
    system.toolsAdded !== undefined ||
    user.role !== "user" ||
    !Array.isArray(user.content) ||
    user.content.length !== 1 ||
    user.content[0].type !== "text"
  ) {
    throw new Error(`unexpected summarization request shape: ${JSON.stringify(msgs).slice(0, 300)}`);
  }
  return fakeStream(model, { systemPrompt: system.content, messages: [user] }, options);
}
/** The extra arguments that route a summary through the fake model. */
const STREAM_FN = IS_087 ? fakeStreamFn087 : undefined;

// ---------------------------------------------------------------------------
// Prompt constants, captured from the reference's own requests (probes)
// ---------------------------------------------------------------------------

function stripPrefix(s, prefix, what) {
  if (!s.startsWith(prefix)) throw new Error(`probe ${what}: unexpected text ${JSON.stringify(s.slice(0, 200))}`);
  return s.slice(prefix.length);
}

async function probeConstants() {
  const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };
  const basePrep = {
    firstKeptEntryId: "probe",
    messagesToSummarize: [],
    turnPrefixMessages: [],
    isSplitTurn: false,
    tokensBefore: 0,
    previousSummary: undefined,
    fileOps: cmp.createFileOps(),
    settings,
  };
  const userHi = { role: "user", content: "hi", timestamp: 0 };
  const c = {};

  captured = [];
  await cmp.compact(basePrep, MODELS.plain, undefined, undefined, undefined, undefined, undefined, STREAM_FN);
  c.systemPrompt = captured[0].systemPrompt;
  c.historyPrompt = stripPrefix(captured[0].userText, "<conversation>\n\n</conversation>\n\n", "history");

  captured = [];
  await cmp.compact({ ...basePrep, previousSummary: "PREV" }, MODELS.plain, undefined, undefined, undefined, undefined, undefined, STREAM_FN);
  c.updatePrompt = stripPrefix(captured[0].userText, "<conversation>\n\n</conversation>\n\n<previous-summary>\nPREV\n</previous-summary>\n\n", "update");

  captured = [];
  await cmp.compact({ ...basePrep, isSplitTurn: true, turnPrefixMessages: [userHi] }, MODELS.plain, undefined, undefined, undefined, undefined, undefined, STREAM_FN);
  if (captured.length !== 1) throw new Error("probe turn prefix: expected one request");
  const prefixLayout = IS_087 ? "# Conversation\n[User]: hi\n\n# Instructions\n" : "<conversation>\n[User]: hi\n</conversation>\n\n";
  c.turnPrefixPrompt = stripPrefix(captured[0].userText, prefixLayout, "turn prefix");

  captured = [];
  const entry = { type: "message", id: "p1", parentId: null, timestamp: "2025-01-01T00:00:00.000Z", message: userHi };
  const res = await cmp.generateBranchSummary([entry], { model: MODELS.plain, apiKey: "k", streamFn: STREAM_FN });
  c.branchPrompt = stripPrefix(captured[0].userText, "<conversation>\n[User]: hi\n</conversation>\n\n", "branch");
  if (!res.summary.endsWith("X")) throw new Error("probe branch: unexpected summary");
  c.branchPreamble = res.summary.slice(0, -1);
  captured = [];
  return c;
}

const CONSTANTS = await probeConstants();

// Fixed answers. Text blocks are joined with "\n" by the reference and other
// blocks dropped, so each answer mixes in a thinking block.
const ANSWERS = {
  history: { content: [{ type: "text", text: "SUMMARY-HISTORY" }, { type: "thinking", thinking: "not part of the summary" }, { type: "text", text: "history line 2" }] },
  turnPrefix: { content: [{ type: "text", text: "SUMMARY-PREFIX" }] },
  branch: { content: [{ type: "text", text: "SUMMARY-BRANCH" }, { type: "text", text: "branch line 2" }] },
};
// A turn-prefix request ends with its prompt (0.73.1, 0.87.1) or, under 1.6.0, with the prompt and
// an "Additional focus" line; its layout starts with "# Conversation" from 0.87.1 on.
const isTurnPrefix = (text) =>
  text.endsWith(CONSTANTS.turnPrefixPrompt) || (IS_087 && text.startsWith("# Conversation\n") && text.includes(`# Instructions\n${CONSTANTS.turnPrefixPrompt}`));
const requestKind = (req, phase) => (phase === "branch" ? "branch" : isTurnPrefix(req.userText) ? "turnPrefix" : "history");
function answerWith(mode, phase) {
  return (req) => {
    const kind = requestKind(req, phase);
    req.kind = kind;
    if (mode === "error") return { content: [], stopReason: "error", errorMessage: `fake ${kind} failure` };
    if (mode === "aborted") return { content: [], stopReason: "aborted", errorMessage: "Request was aborted" };
    return ANSWERS[kind];
  };
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/**
 * Writes `text` as a list of literal strings and {"ref": name} pieces, where
 * each ref names one of `named` ([name, value] pairs; values shorter than 16
 * units are only used when the name starts with "constants."). Longest match
 * wins at each position. Joining the pieces (refs replaced by their values)
 * gives `text` back exactly; this is checked.
 */
function decompose(text, named) {
  const cands = named.filter(([n, v]) => typeof v === "string" && v.length > 0 && (v.length >= 16 || n.startsWith("constants.")));
  cands.sort((a, b) => b[1].length - a[1].length);
  const parts = [];
  let lit = "";
  let i = 0;
  while (i < text.length) {
    const hit = cands.find(([, v]) => text.startsWith(v, i));
    if (hit) {
      if (lit) parts.push(lit);
      lit = "";
      parts.push({ ref: hit[0] });
      i += hit[1].length;
    } else {
      lit += text[i];
      i++;
    }
  }
  if (lit) parts.push(lit);
  const map = new Map(cands);
  const back = parts.map((p) => (typeof p === "string" ? p : map.get(p.ref))).join("");
  if (back !== text) throw new Error("decompose: round trip failed");
  return parts;
}

function constantRefs() {
  return Object.entries(CONSTANTS).map(([k, v]) => [`constants.${k}`, v]);
}

/** Does `msg` come from `entry` (as the entry's own message object, or synthesized from it)? */
function producedBy(entry, msg) {
  const ts = new Date(entry.timestamp).getTime();
  const sameTs = msg.timestamp === ts || (Number.isNaN(ts) && Number.isNaN(msg.timestamp));
  switch (entry.type) {
    case "message":
      if (entry.message === msg) return "same";
      // 0.87.1 projects a copy when an edit or a null content changed the message.
      return IS_087 && msg.role === entry.message?.role && msg.timestamp === entry.message?.timestamp ? "synth" : null;
    case "custom_message":
      return msg.role === "custom" && msg.customType === entry.customType && (msg.content === entry.content || IS_087) && sameTs ? "synth" : null;
    case "branch_summary":
      return msg.role === "branchSummary" && msg.summary === entry.summary && msg.fromId === entry.fromId && sameTs ? "synth" : null;
    case "compaction":
      return msg.role === "compactionSummary" && msg.summary === entry.summary && msg.tokensBefore === entry.tokensBefore && sameTs ? "synth" : null;
    default:
      return null;
  }
}

/**
 * Attributes each message to the entry it came from, scanning `entries`
 * forward from `start`: [{entryId}] when the message is the entry's own
 * `message` object, [{entryId, message}] when it was synthesized.
 */
function messageRefs(messages, entries, start = 0) {
  const out = [];
  let i = start;
  for (const msg of messages) {
    let kind = null;
    while (i < entries.length && !(kind = producedBy(entries[i], msg))) i++;
    if (i >= entries.length) throw new Error(`cannot attribute message ${JSON.stringify(msg).slice(0, 200)}`);
    out.push(kind === "same" ? { entryId: entries[i].id } : { entryId: entries[i].id, message: plain(msg) });
    i++;
  }
  return out;
}

const serialize = (messages) => cmp.serializeConversation(ref.convertToLlm(messages));

/** boundaryStart exactly as prepareCompaction derives it. */
function boundaryStartOf(pathEntries) {
  let prev = -1;
  for (let i = pathEntries.length - 1; i >= 0; i--) {
    if (pathEntries[i].type === "compaction") {
      prev = i;
      break;
    }
  }
  if (prev < 0) return 0;
  const kept = pathEntries.findIndex((e) => e.id === pathEntries[prev].firstKeptEntryId);
  return kept >= 0 ? kept : prev + 1;
}

const KEEPS = [0, 500, 2000, 8000, 20000, 100000];
const CASES = [...KEEPS.map((k) => ({ keepRecentTokens: k, reserveTokens: 16384 })), { keepRecentTokens: 2000, reserveTokens: 4000 }];
// Runs of compact() per case. "every" runs are done for each case; the others
// only for the case keepRecentTokens 2000 / reserveTokens 16384 (FULL_CASE), to
// keep the vectors small.
const COMPACT_RUNS = [
  { run: "plain", model: "plain", every: true },
  { run: "custom", model: "plain", customInstructions: "focus on the tests", every: true },
  { run: "reasoningHigh", model: "reasoning", thinkingLevel: "high", every: true },
  { run: "emptyCustom", model: "plain", customInstructions: "" },
  { run: "reasoningOff", model: "reasoning", thinkingLevel: "off" },
  { run: "plainHigh", model: "plain", thinkingLevel: "high" },
  { run: "error", model: "plain", mode: "error" },
];
const FULL_CASE = { keepRecentTokens: 2000, reserveTokens: 16384 };
const BRANCH_BUDGETS = [0, 200, 2000, 100000, 111616];
// Runs of generateBranchSummary() per pair; the ones without "every" only for
// the first pair of a file.
const BRANCH_RUNS = [
  { run: "plain", model: "plain", every: true },
  { run: "custom", model: "plain", customInstructions: "focus on the tests", every: true },
  { run: "replace", model: "plain", customInstructions: "Only list the files touched.", replaceInstructions: true, every: true },
  { run: "smallWindow", model: "smallWindow", every: true },
  { run: "replaceWithoutCustom", model: "plain", replaceInstructions: true },
  { run: "error", model: "plain", mode: "error" },
  { run: "aborted", model: "plain", mode: "aborted" },
  // 1.6.0 passes the thinking level to branch summaries (recorded only for it, so the
  // older vectors stay as they were).
  ...(IS_16 ? [{ run: "reasoningHigh", model: "reasoning", thinkingLevel: "high", every: true }, { run: "reasoningOff", model: "reasoning", thinkingLevel: "off" }] : []),
];
const branchBudgetOf = (model, reserve = 16384) => (model.contextWindow || 128000) - reserve;

function errorText(err) {
  return `${err?.name ?? "Error"}: ${err?.message ?? String(err)}`;
}

function recordRequests(reqs, named) {
  return reqs.map((r) => ({
    kind: r.kind,
    model: r.model,
    systemPrompt: decompose(r.systemPrompt, constantRefs()),
    userText: decompose(r.userText, [...named, ...constantRefs()]),
    maxTokens: r.maxTokens,
    reasoning: r.reasoning,
  }));
}

// ---------------------------------------------------------------------------
// Per file
// ---------------------------------------------------------------------------

async function compactionCase(pathEntries, c) {
  const settings = { enabled: true, reserveTokens: c.reserveTokens, keepRecentTokens: c.keepRecentTokens };
  if (IS_087) return compactionCase087(pathEntries, c, settings);
  const boundaryStart = boundaryStartOf(pathEntries);
  const cutPoint = cmp.findCutPoint(pathEntries, boundaryStart, pathEntries.length, c.keepRecentTokens);
  const prep = cmp.prepareCompaction(pathEntries, settings);
  const rec = { keepRecentTokens: c.keepRecentTokens, reserveTokens: c.reserveTokens, boundaryStart, cutPoint, preparation: null, runs: [] };
  if (!prep) return rec;

  if (prep.firstKeptEntryId !== pathEntries[cutPoint.firstKeptEntryIndex]?.id || prep.isSplitTurn !== cutPoint.isSplitTurn) {
    throw new Error("prepareCompaction disagrees with findCutPoint");
  }
  const { readFiles, modifiedFiles } = cmp.computeFileLists(prep.fileOps);
  const serializedToSummarize = serialize(prep.messagesToSummarize);
  const serializedTurnPrefix = serialize(prep.turnPrefixMessages);
  rec.preparation = {
    firstKeptEntryId: prep.firstKeptEntryId,
    isSplitTurn: prep.isSplitTurn,
    tokensBefore: prep.tokensBefore,
    previousSummary: prep.previousSummary ?? null,
    messagesToSummarize: messageRefs(prep.messagesToSummarize, pathEntries, boundaryStart),
    turnPrefixMessages: messageRefs(prep.turnPrefixMessages, pathEntries, Math.max(cutPoint.turnStartIndex, 0)),
    readFiles,
    modifiedFiles,
    fileBlocks: cmp.formatFileOperations(readFiles, modifiedFiles),
    serializedToSummarize,
    serializedTurnPrefix,
  };
  await recordRuns(rec, prep, c);
  return rec;
}

/** The compact() runs of one case, into rec.runs. */
async function recordRuns(rec, prep, c) {
  const named = [
    ["preparation.serializedToSummarize", rec.preparation.serializedToSummarize],
    ["preparation.serializedTurnPrefix", rec.preparation.serializedTurnPrefix],
    ["preparation.previousSummary", prep.previousSummary],
  ];
  const full = c.keepRecentTokens === FULL_CASE.keepRecentTokens && c.reserveTokens === FULL_CASE.reserveTokens;
  for (const r of COMPACT_RUNS) {
    if (!r.every && !full) continue;
    captured = [];
    responder = answerWith(r.mode ?? "ok", "compaction");
    const run = { run: r.run, model: MODELS[r.model].id };
    if ("customInstructions" in r) run.customInstructions = r.customInstructions;
    if ("thinkingLevel" in r) run.thinkingLevel = r.thinkingLevel;
    try {
      const res = await cmp.compact(prep, MODELS[r.model], "fake-key", undefined, r.customInstructions, undefined, r.thinkingLevel, STREAM_FN);
      run.requests = recordRequests(captured, named);
      run.result = {
        summary: decompose(res.summary, [["preparation.fileBlocks", rec.preparation.fileBlocks]]),
        firstKeptEntryId: res.firstKeptEntryId,
        tokensBefore: res.tokensBefore,
        details: res.details,
      };
    } catch (err) {
      run.requests = recordRequests(captured, named);
      run.error = errorText(err);
    }
    rec.runs.push(run);
  }
}

/** 0.87.1: the plan over the projection; its raw findCutPoint is no longer what plans use. */
async function compactionCase087(pathEntries, c, settings) {
  const prep = cmp.prepareCompaction(pathEntries, settings);
  const rec = { keepRecentTokens: c.keepRecentTokens, reserveTokens: c.reserveTokens, preparation: null, runs: [] };
  if (!prep) return rec;
  const { readFiles, modifiedFiles } = cmp.computeFileLists(prep.fileOps);
  rec.preparation = {
    firstKeptEntryId: prep.firstKeptEntryId,
    isSplitTurn: prep.isSplitTurn,
    tokensBefore: prep.tokensBefore,
    previousSummary: prep.previousSummary ?? null,
    messagesToSummarize: messageRefs(prep.messagesToSummarize, pathEntries),
    turnPrefixMessages: messageRefs(prep.turnPrefixMessages, pathEntries),
    readFiles,
    modifiedFiles,
    fileBlocks: cmp.formatFileOperations(readFiles, modifiedFiles),
    serializedToSummarize: serialize(prep.messagesToSummarize),
    serializedTurnPrefix: serialize(prep.turnPrefixMessages),
  };
  await recordRuns(rec, prep, c);
  return rec;
}

function pickBranchPairs(sm, entries, pathEntries) {
  const leaf = sm.getLeafId();
  if (!leaf || entries.length === 0) return [];
  const hasChild = new Set(entries.map((e) => e.parentId).filter((p) => p));
  const tips = entries.filter((e) => !hasChild.has(e.id) && e.id !== leaf).map((e) => e.id);
  const pairs = [];
  const addPair = (a, b) => {
    if (!pairs.some(([x, y]) => x === a && y === b)) pairs.push([a, b]);
  };
  // other tips: up to three, spread over the file
  const step = Math.max(1, Math.ceil(tips.length / 3));
  for (let i = 0; i < tips.length && pairs.length < 3; i += step) addPair(leaf, tips[i]);
  if (tips.length > 0) addPair(tips[0], leaf);
  addPair(leaf, pathEntries[0].id); // back to the root of the current path
  addPair(leaf, pathEntries[Math.floor(pathEntries.length / 2)].id); // an ancestor
  addPair(leaf, null); // null target: getBranch(null) falls back to the current leaf
  addPair(null, leaf); // no old leaf: nothing to summarize
  return pairs;
}

async function branchPair(sm, oldLeafId, targetId, first) {
  const { entries, commonAncestorId } = cmp.collectEntriesForBranchSummary(sm, oldLeafId, targetId);
  const rec = { oldLeafId, targetId, commonAncestorId, entryIds: entries.map((e) => e.id), prepared: [], serialized: {}, runs: [] };
  for (const budget of BRANCH_BUDGETS) {
    const p = cmp.prepareBranchEntries(entries, budget);
    const { readFiles, modifiedFiles } = cmp.computeFileLists(p.fileOps);
    rec.prepared.push({ tokenBudget: budget, messages: messageRefs(p.messages, entries), readFiles, modifiedFiles, totalTokens: p.totalTokens });
  }
  const runBudgets = [...new Set(BRANCH_RUNS.map((r) => branchBudgetOf(MODELS[r.model])))].sort((a, b) => a - b);
  for (const budget of runBudgets) rec.serialized[budget] = serialize(cmp.prepareBranchEntries(entries, budget).messages);
  for (const r of BRANCH_RUNS) {
    if (!r.every && !first) continue;
    captured = [];
    responder = answerWith(r.mode ?? "ok", "branch");
    const run = { run: r.run, model: MODELS[r.model].id, tokenBudget: branchBudgetOf(MODELS[r.model]) };
    const ownSerialized = [[`serialized.${run.tokenBudget}`, rec.serialized[run.tokenBudget]]];
    if ("customInstructions" in r) run.customInstructions = r.customInstructions;
    if ("replaceInstructions" in r) run.replaceInstructions = r.replaceInstructions;
    if ("thinkingLevel" in r) run.thinkingLevel = r.thinkingLevel;
    try {
      const res = await cmp.generateBranchSummary(entries, {
        model: MODELS[r.model],
        apiKey: "fake-key",
        customInstructions: r.customInstructions,
        replaceInstructions: r.replaceInstructions,
        thinkingLevel: r.thinkingLevel,
        streamFn: STREAM_FN,
      });
      run.requests = recordRequests(captured, ownSerialized);
      const { readFiles, modifiedFiles } = cmp.computeFileLists(cmp.prepareBranchEntries(entries, run.tokenBudget).fileOps);
      const fileBlocks = cmp.formatFileOperations(readFiles, modifiedFiles);
      run.result = plain({
        ...res,
        summary: typeof res.summary === "string" ? decompose(res.summary, [["fileBlocks", fileBlocks], ...constantRefs()]) : res.summary,
      });
      if (fileBlocks) run.fileBlocks = fileBlocks;
    } catch (err) {
      run.requests = recordRequests(captured, ownSerialized);
      run.error = errorText(err);
    }
    rec.runs.push(run);
  }
  return rec;
}

async function recordOne(dir, item) {
  const file = item.file;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxkit-cmp-"));
  try {
    const copy = path.join(work, file);
    fs.copyFileSync(path.join(dir, file), copy);
    determinism.reseed(file, clockFor(file));
    const sm = SessionManager.open(copy);
    const entries = sm.getEntries();
    const pathEntries = sm.getBranch();
    const ctx = sm.buildSessionContext();
    const perEntry = {};
    for (const e of pathEntries) {
      if (e.type !== "message") continue;
      // 0.87.1 throws on a raw message without content (its projection normalizes it first).
      try {
        perEntry[e.id] = cmp.estimateTokens(e.message);
      } catch (err) {
        if (!IS_087) throw err;
        perEntry[e.id] = null;
      }
    }

    const vector = {
      file,
      corpus: path.basename(dir),
      leafId: sm.getLeafId() ?? null,
      pathIds: pathEntries.map((e) => e.id),
      tokens: { perMessage: ctx.messages.map((m) => cmp.estimateTokens(m)), context: cmp.estimateContextTokens(ctx.messages) },
      perEntry,
      constants: CONSTANTS,
      cases: [],
      branchSummaries: [],
    };
    for (const c of CASES) vector.cases.push(await compactionCase(pathEntries, c));
    if (IS_087) {
      vector.tokens.projected = cmp.estimateProjectedContextTokens(sm.buildSessionProjection(), pathEntries);
    }
    for (const [a, b] of pickBranchPairs(sm, entries, pathEntries)) {
      try {
        vector.branchSummaries.push(await branchPair(sm, a, b, vector.branchSummaries.length === 0));
      } catch (err) {
        // 0.87.1 throws on a message without content inside a branch; say so instead.
        if (!IS_087) throw err;
        vector.branchSummaries.push({ oldLeafId: a, targetId: b, error: errorText(err) });
      }
    }
    return vector;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

const items = [];
for (const { dir, select } of CORPUS_DIRS) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
  const listed = new Set(manifest.map((m) => m.file));
  for (const f of fs.readdirSync(dir)) if (f.endsWith(".jsonl") && !listed.has(f)) throw new Error(`${dir}/${f} is not listed in manifest.json`);
  for (const m of manifest) if (select(m)) items.push({ dir, item: m });
}
const names = new Set();
for (const { item } of items) {
  if (names.has(item.file)) throw new Error(`duplicate corpus file name ${item.file}`);
  names.add(item.file);
}

fs.mkdirSync(OUT, { recursive: true });
for (const f of fs.readdirSync(OUT)) if (f.endsWith(".json")) fs.rmSync(path.join(OUT, f));

items.sort((a, b) => clockFor(a.item.file) - clockFor(b.item.file));
let total = 0;
for (const { dir, item } of items) {
  const vector = await recordOne(dir, item);
  const text = formatJson(vector);
  fs.writeFileSync(path.join(OUT, `${item.file.replace(/\.jsonl$/, "")}.json`), text);
  total += text.length;
  const splits = vector.cases.map((c) => (c.preparation ? (c.preparation.isSplitTurn ? "S" : "-") : "x")).join("");
  process.stderr.write(`${item.file}: path ${vector.pathIds.length}, cases ${splits}, branch pairs ${vector.branchSummaries.length}, ${text.length} chars\n`);
}
process.stderr.write(`wrote ${items.length} vectors (${total} chars) to ${OUT} using reference ${ref.version}\n`);
