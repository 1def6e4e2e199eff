#!/usr/bin/env node
// Reverse conformance: check that session files WRITTEN BY CTXKIT are read by the
// reference (@mariozechner/pi-coding-agent@0.73.1, or with PI_VERSION=0.87.1 / 1.6.0
// and Node >= 22.19 @earendil-works/pi-coding-agent at that version) exactly as ctxkit
// reads them.
//
// Usage: [PI_VERSION=0.87.1|1.6.0] [PI_DIR=/dir/with/node_modules] [CTXKIT_BIN=target/debug/ctxkit]
//        node conformance/reverse.mjs <dir>
//
// With PI_VERSION=1.6.0 and CTXKIT_BIN, also the round trip of round-trip.mjs: a session Pi 1.6.0
// writes, changed by each of ctxkit's writing commands, read back by Pi with ctxkit's contexts
// (one more "file" per step in the count).
//
// <dir> holds pairs X.jsonl + X.expected.json, where X.expected.json is
//   {
//     "contexts": [{"leafId", "messages", "thinkingLevel", "model", "llm"?}],
//     "tree": [{"id","parentId","depth","type","role","label","children"}],   (optional)
//     "load": {"header"?, "entries"?, "leafId"?, "sessionName"?, "labels"?},  (optional)
//     "branches": {"<id>": [ids...]},                                        (optional)
//     "info": {...}                                                          (optional)
//   }
// with the same meaning as in conformance/vectors (see README.md). leafId may be
// an entry id, null, "__default__" (leaf after load) or "__missing__" (an id that
// does not exist -> fallback to the last entry).
//
// Every mismatch prints one line: "<file> <json path>: ctxkit=<json> reference=<json>".
// A file also fails when the reference would rewrite it on open (migration or
// "invalid file" overwrite), throws while opening it, or would hang walking a leaf.
// Last line: "N passed, M failed" (counted per file). Exit status 1 on any failure.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { authRoundTrip, chatRoundTrip, roundTrip } from "./round-trip.mjs";
import {
  IS_087,
  IS_16,
  contextRecord,
  flattenTree,
  loadReference,
  MISSING_LEAF_ID,
  plain,
  resolvePiDir,
  walkTerminates,
} from "./lib.mjs";

const MAX_LINES_PER_FILE = 200;

function usage() {
  process.stderr.write("usage: node conformance/reverse.mjs <dir-with-X.jsonl-and-X.expected.json>\n");
  process.exit(2);
}

const dir = process.argv[2];
if (!dir || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) usage();

const piDir = resolvePiDir();
const ref = await loadReference(piDir);
const { SessionManager } = ref;

const show = (v) => (v === undefined ? "<absent>" : JSON.stringify(v));

/** Deep comparison; numbers compare numerically, key order is ignored. */
function diff(expected, actual, p, out) {
  if (out.length >= MAX_LINES_PER_FILE) return;
  if (typeof expected === "number" && typeof actual === "number") {
    if (!(expected === actual || (Number.isNaN(expected) && Number.isNaN(actual)))) out.push([p, expected, actual]);
    return;
  }
  if (expected === null || actual === null || typeof expected !== "object" || typeof actual !== "object") {
    if (expected !== actual) out.push([p, expected, actual]);
    return;
  }
  if (Array.isArray(expected) !== Array.isArray(actual)) {
    out.push([p, expected, actual]);
    return;
  }
  if (Array.isArray(expected)) {
    if (expected.length !== actual.length) {
      out.push([`${p}.length`, expected.length, actual.length]);
    }
    const n = Math.min(expected.length, actual.length);
    for (let i = 0; i < n; i++) diff(expected[i], actual[i], `${p}[${i}]`, out);
    for (let i = n; i < expected.length; i++) out.push([`${p}[${i}]`, expected[i], undefined]);
    for (let i = n; i < actual.length; i++) out.push([`${p}[${i}]`, undefined, actual[i]]);
    return;
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  for (const k of keys) {
    const kp = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `${p}.${k}` : `${p}[${JSON.stringify(k)}]`;
    if (!(k in expected)) out.push([kp, undefined, actual[k]]);
    else if (!(k in actual)) out.push([kp, expected[k], undefined]);
    else diff(expected[k], actual[k], kp, out);
  }
}

async function checkOne(jsonlPath, expectedPath) {
  const problems = [];
  const expected = JSON.parse(fs.readFileSync(expectedPath, "utf8"));
  const original = fs.readFileSync(jsonlPath);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxkit-rev-"));
  try {
    const copy = path.join(work, path.basename(jsonlPath));
    fs.writeFileSync(copy, original);
    let sm;
    try {
      sm = SessionManager.open(copy);
    } catch (err) {
      problems.push(["$", "(opens)", `throws ${err?.name}: ${err?.message}`]);
      return problems;
    }
    const after = fs.readFileSync(copy);
    if (!after.equals(original)) {
      problems.push(["$.rewritten", false, true]);
      return problems;
    }
    const entries = sm.getEntries();

    if (expected.load && typeof expected.load === "object") {
      const actual = {
        header: sm.getHeader(),
        entries,
        leafId: sm.getLeafId() ?? null,
        sessionName: sm.getSessionName() ?? null,
        labels: {},
      };
      for (const id of Object.keys(expected.load.labels ?? {})) {
        const l = sm.getLabel(id);
        if (l !== undefined) actual.labels[id] = l;
      }
      for (const e of entries) {
        const l = typeof e?.id === "string" ? sm.getLabel(e.id) : undefined;
        if (l !== undefined) actual.labels[e.id] = l;
      }
      for (const k of Object.keys(expected.load)) {
        if (k in actual) diff(expected.load[k], plain(actual[k]), `$.load.${k}`, problems);
      }
    }

    if (Array.isArray(expected.tree)) {
      diff(expected.tree, flattenTree(sm.getTree()), "$.tree", problems);
    }

    if (Array.isArray(expected.contexts)) {
      expected.contexts.forEach((exp, i) => {
        const p = `$.contexts[${i}]`;
        const key = exp.leafId;
        let leaf;
        if (key === null) leaf = null;
        else if (key === "__default__") leaf = sm.getLeafId();
        else if (key === "__missing__") leaf = MISSING_LEAF_ID;
        else leaf = key;
        if (!walkTerminates(entries, leaf)) {
          problems.push([`${p}(leafId ${show(key)})`, "(terminates)", "reference would loop forever (parent cycle)"]);
          return;
        }
        const ctx = key === "__default__" ? sm.buildSessionContext() : ref.buildSessionContext(sm.getEntries(), leaf);
        const actual = contextRecord(ref, key, ctx, "llm" in exp);
        for (const k of Object.keys(exp)) {
          if (k === "leafId") continue;
          diff(exp[k], actual[k], `${p}(leafId ${show(key)}).${k}`, problems);
        }
      });
    }

    if (expected.branches && typeof expected.branches === "object") {
      for (const [id, ids] of Object.entries(expected.branches)) {
        if (!walkTerminates(entries, id)) {
          problems.push([`$.branches[${show(id)}]`, "(terminates)", "reference would loop forever (parent cycle)"]);
          continue;
        }
        diff(ids, sm.getBranch(id).map((e) => e.id), `$.branches[${show(id)}]`, problems);
      }
    }

    if (expected.info !== undefined) {
      const listDir = path.join(work, "list");
      fs.mkdirSync(listDir);
      fs.writeFileSync(path.join(listDir, path.basename(jsonlPath)), original);
      const [i] = await SessionManager.list("/nonexistent-cwd", listDir);
      const iso = (d) => (d instanceof Date && !Number.isNaN(d.getTime()) ? d.toISOString() : null);
      const actual = i
        ? plain({
            id: i.id,
            cwd: i.cwd,
            name: i.name,
            parentSessionPath: i.parentSessionPath,
            created: iso(i.created),
            modified: iso(i.modified),
            messageCount: i.messageCount,
            firstMessage: i.firstMessage,
            allMessagesText: i.allMessagesText,
          })
        : null;
      diff(expected.info, actual, "$.info", problems);
    }
    return problems;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

// Files using what Pi 0.87 added (context edits, system messages…) are named
// written-087-*, and sessions Pi 1.6.0 wrote that ctxkit continued written-16-*;
// 0.73.1 cannot read them as ctxkit does, so only 0.87.1 and 1.6.0 check them.
const needs087 = (f) => f.startsWith("written-087-") || f.startsWith("written-16-");
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".jsonl") && (IS_087 || !needs087(f)))
  .sort();
let passed = 0;
let failed = 0;
let skipped = 0;
for (const f of fs.readdirSync(dir)) if (f.endsWith(".jsonl") && !IS_087 && needs087(f)) skipped++;
for (const f of files) {
  const base = f.slice(0, -".jsonl".length);
  const expectedPath = path.join(dir, `${base}.expected.json`);
  let problems;
  if (!fs.existsSync(expectedPath)) {
    problems = [["$", `${base}.expected.json`, "(missing)"]];
  } else {
    try {
      problems = await checkOne(path.join(dir, f), expectedPath);
    } catch (err) {
      problems = [["$", "(no error)", `checker error: ${err?.stack ?? err}`]];
    }
  }
  if (problems.length === 0) {
    passed++;
    continue;
  }
  failed++;
  for (const [p, exp, act] of problems) {
    process.stdout.write(`${f} ${p}: ctxkit=${show(exp)} reference=${show(act)}\n`);
  }
  if (problems.length >= MAX_LINES_PER_FILE) process.stdout.write(`${f}: (further mismatches not shown)\n`);
}
if (IS_16 && process.env.CTXKIT_BIN) {
  const bin = path.resolve(process.env.CTXKIT_BIN);
  const steps = roundTrip(ref, bin, diff);
  steps.push(["Pi's CLI, then ctxkit chat and /compact, then Pi's CLI", await chatRoundTrip(ref, bin, piDir, diff)]);
  steps.push(["keys saved by ctxkit login, read by Pi's credential store", await authRoundTrip(piDir, bin)]);
  for (const [step, problems] of steps) {
    if (problems.length === 0) {
      passed++;
      continue;
    }
    failed++;
    for (const [p, exp, act] of problems.slice(0, MAX_LINES_PER_FILE)) {
      process.stdout.write(`round trip, ${step} ${p}: ctxkit=${show(exp)} reference=${show(act)}\n`);
    }
  }
} else if (IS_16) {
  process.stdout.write("round trip through ctxkit's commands not run: set CTXKIT_BIN\n");
}
for (const f of fs.readdirSync(dir).filter((x) => x.endsWith(".expected.json"))) {
  const base = f.slice(0, -".expected.json".length);
  if (!fs.existsSync(path.join(dir, `${base}.jsonl`))) {
    failed++;
    process.stdout.write(`${base}.jsonl $: ctxkit="${base}.jsonl" reference="(missing)"\n`);
  }
}
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} left to 0.87.1 and 1.6.0` : ""} (reference ${ref.version})\n`);
process.exit(failed > 0 ? 1 : 0);
