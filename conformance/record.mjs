#!/usr/bin/env node
// Records what the reference implementation (@mariozechner/pi-coding-agent@0.73.1,
// or 0.87.1 with PI_VERSION=0.87.1) does with every corpus file, into
// conformance/vectors/<name>.json (or the vectors dir given).
//
// Usage: PI_DIR=/dir/with/node_modules node conformance/record.mjs [corpusDir] [vectorsDir]
// Without PI_DIR the pinned reference is npm-installed into a temp dir first.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  contextRecord,
  flattenTree,
  fnv1a,
  formatJson,
  installDeterminism,
  loadReference,
  MISSING_LEAF_ID,
  plain,
  resolvePiDir,
  walkTerminates,
} from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CORPUS = path.resolve(process.argv[2] ?? path.join(HERE, "corpus"));
const VECTORS = path.resolve(process.argv[3] ?? path.join(HERE, "vectors"));

// Determinism must be in place before the reference module graph is loaded.
const determinism = installDeterminism();
const piDir = resolvePiDir();
const ref = await loadReference(piDir);
const { SessionManager } = ref;

// A fresh session header written by the reference uses process.cwd(); make it
// machine-independent.
process.chdir("/");

// Fake "now" for each file: a fixed base plus an offset derived from the file
// name. Files are processed in increasing clock order, so the uuid v7 generator
// inside the reference always sees time move forward and its output for a file
// depends only on that file's name.
const CLOCK_BASE = Date.UTC(2099, 0, 1);
const clockFor = (file) => CLOCK_BASE + (fnv1a(file) % 2_000_000_000);
// Fixed mtime for the copies handed to SessionManager.list (its last fallback
// for "modified").
const FIXED_MTIME = new Date(Date.UTC(2001, 1, 3, 4, 5, 6));

const manifest = JSON.parse(fs.readFileSync(path.join(CORPUS, "manifest.json"), "utf8"));
const onDisk = fs.readdirSync(CORPUS).filter((f) => f.endsWith(".jsonl")).sort();
const inManifest = new Set(manifest.map((m) => m.file));
for (const f of onDisk) if (!inManifest.has(f)) throw new Error(`${f} is not listed in manifest.json`);

const isoOrNull = (d) => (d instanceof determinism.RealDate && !Number.isNaN(d.getTime()) ? d.toISOString() : null);

/**
 * For very large sessions (manifest "sampleContexts": N) only some entries are
 * used as leaves for contexts/branches, to keep the vectors small: every tip
 * (no children), every entry with 2+ children, every non-message entry type
 * that changes context building (compaction, branch_summary, custom_message,
 * model/thinking changes), the first entry after each compaction, every
 * non-user/assistant/toolResult message, plus N evenly spaced entries.
 */
function sampleLeaves(entries, tree, ids, n) {
  const wanted = new Set();
  for (const node of tree) {
    if (node.children === 0 || node.children >= 2) wanted.add(node.id);
  }
  let afterCompaction = false;
  for (const e of entries) {
    if (afterCompaction) wanted.add(e.id);
    afterCompaction = e.type === "compaction";
    if (e.type !== "message" && e.type !== "label" && e.type !== "custom" && e.type !== "session_info") wanted.add(e.id);
    const role = e.type === "message" ? e.message?.role : null;
    if (role && role !== "user" && role !== "assistant" && role !== "toolResult") wanted.add(e.id);
  }
  const step = Math.max(1, Math.ceil(ids.length / n));
  for (let i = 0; i < ids.length; i += step) wanted.add(ids[i]);
  return wanted;
}

async function recordOne(item) {
  const file = item.file;
  const original = fs.readFileSync(path.join(CORPUS, file));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxkit-rec-"));
  try {
    // ---- load -------------------------------------------------------------
    const openDir = path.join(work, "open");
    fs.mkdirSync(openDir);
    const copy = path.join(openDir, file);
    fs.writeFileSync(copy, original);
    determinism.reseed(file, clockFor(file));

    let sm = null;
    let loadError = null;
    try {
      sm = SessionManager.open(copy);
    } catch (err) {
      // The temp dir is not part of the answer (0.87.1 names the file).
      loadError = `${err?.name ?? "Error"}: ${err?.message ?? String(err)}`.replaceAll(openDir, "<dir>");
    }
    const after = fs.readFileSync(copy);
    const rewritten = !after.equals(original);

    const load = {
      rewritten,
      rewrittenContent: rewritten ? after.toString("utf8") : null,
    };
    if (loadError !== null) load.error = loadError;

    let entries = [];
    if (sm) {
      entries = sm.getEntries();
      const labels = {};
      const labelKeys = [];
      for (const e of entries) if (typeof e?.id === "string") labelKeys.push(e.id);
      for (const e of entries) if (e?.type === "label" && typeof e.targetId === "string") labelKeys.push(e.targetId);
      for (const id of labelKeys) {
        const l = sm.getLabel(id);
        if (l !== undefined && !(id in labels)) labels[id] = l;
      }
      Object.assign(load, {
        header: sm.getHeader(),
        entries,
        leafId: sm.getLeafId() ?? null,
        sessionName: sm.getSessionName() ?? null,
        labels,
      });
    } else {
      Object.assign(load, { header: null, entries: null, leafId: null, sessionName: null, labels: null });
    }

    // ---- tree / contexts / branches -------------------------------------
    let tree = null;
    let contexts = null;
    let branches = null;
    const skippedLeaves = [];
    if (sm) {
      // getTree only walks down from roots, so it terminates even when entries
      // form a parent cycle (cycle members are simply unreachable).
      tree = flattenTree(sm.getTree());

      const ids = [];
      const seen = new Set();
      for (const e of entries) {
        if (typeof e?.id === "string" && !seen.has(e.id)) {
          seen.add(e.id);
          ids.push(e.id);
        }
      }
      const safe = (leaf) => walkTerminates(entries, leaf);
      const wanted = item.sampleContexts ? sampleLeaves(entries, tree, ids, item.sampleContexts) : null;
      contexts = [];
      branches = {};
      for (const id of ids) {
        if (wanted && !wanted.has(id)) continue;
        if (!safe(id)) {
          skippedLeaves.push(id);
          continue;
        }
        contexts.push(contextRecord(ref, id, ref.buildSessionContext(sm.getEntries(), id), true));
        branches[id] = sm.getBranch(id).map((e) => e.id);
      }
      contexts.push(contextRecord(ref, null, ref.buildSessionContext(sm.getEntries(), null), true));
      if (safe(sm.getLeafId())) {
        contexts.push(contextRecord(ref, "__default__", sm.buildSessionContext(), true));
      } else skippedLeaves.push("__default__");
      if (safe(MISSING_LEAF_ID)) {
        contexts.push(contextRecord(ref, "__missing__", ref.buildSessionContext(sm.getEntries(), MISSING_LEAF_ID), true));
      } else skippedLeaves.push("__missing__");
      if (skippedLeaves.length > 0 && !item.referenceHangs) {
        throw new Error(`${file}: leaves ${skippedLeaves.join(",")} would hang the reference, but the manifest does not say referenceHangs`);
      }
      if (item.referenceHangs && skippedLeaves.length === 0) {
        throw new Error(`${file}: manifest says referenceHangs but every walk terminates`);
      }
    }

    // ---- info (SessionManager.list on a pristine copy) -------------------
    const listDir = path.join(work, "list");
    fs.mkdirSync(listDir);
    const listCopy = path.join(listDir, file);
    fs.writeFileSync(listCopy, original);
    fs.utimesSync(listCopy, FIXED_MTIME, FIXED_MTIME);
    const listed = await SessionManager.list("/nonexistent-cwd", listDir);
    let info = null;
    if (listed.length > 0) {
      const i = listed[0];
      info = {
        id: i.id,
        cwd: i.cwd,
        name: i.name,
        parentSessionPath: i.parentSessionPath,
        created: isoOrNull(i.created),
        modified: isoOrNull(i.modified),
        messageCount: i.messageCount,
        firstMessage: i.firstMessage,
        allMessagesText: i.allMessagesText,
      };
    }

    const vector = { file, load: plain(load), tree, contexts, branches, info: plain(info) };
    if (skippedLeaves.length > 0) vector.skippedLeaves = skippedLeaves;
    if (item.sampleContexts && sm) vector.sampledLeaves = true;
    return vector;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

fs.mkdirSync(VECTORS, { recursive: true });
for (const f of fs.readdirSync(VECTORS)) if (f.endsWith(".json")) fs.rmSync(path.join(VECTORS, f));

const order = [...manifest].sort((a, b) => clockFor(a.file) - clockFor(b.file));
let total = 0;
for (const item of order) {
  const vector = await recordOne(item);
  const out = path.join(VECTORS, `${item.file.replace(/\.jsonl$/, "")}.json`);
  const text = formatJson(vector);
  fs.writeFileSync(out, text);
  total += text.length;
  const flags = [
    vector.load.rewritten ? "REWRITTEN" : null,
    vector.load.error ? "LOAD-ERROR" : null,
    vector.skippedLeaves ? `skipped=${vector.skippedLeaves.length}` : null,
  ].filter(Boolean);
  process.stderr.write(`${item.file}: ${vector.contexts?.length ?? 0} contexts ${flags.join(" ")}\n`);
}
process.stderr.write(`wrote ${order.length} vectors (${total} chars) to ${VECTORS} using reference ${ref.version}\n`);
