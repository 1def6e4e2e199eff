// Shared helpers for record.mjs and reverse.mjs.
//
// Everything here runs on Node 20 (Node 22 for 0.87.1 and 1.6.0) with no dependencies
// besides the reference package, which is loaded dynamically (see PI_VERSION).

import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import module from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

// Three references: 0.73.1 (the default, for the vectors of 0.73-era files),
// 0.87.1 (published under a new scope; needs Node >= 22.19) and 1.6.0 (today's
// Pi, same scope, Node >= 22.19). PI_VERSION picks one.
const REFERENCES = {
  "0.73.1": "@mariozechner/pi-coding-agent",
  "0.87.1": "@earendil-works/pi-coding-agent",
  "1.6.0": "@earendil-works/pi-coding-agent",
};
export const REFERENCE_VERSION = process.env.PI_VERSION ?? "0.73.1";
if (!(REFERENCE_VERSION in REFERENCES)) {
  throw new Error(`PI_VERSION must be one of ${Object.keys(REFERENCES).join(", ")}, not ${REFERENCE_VERSION}`);
}
export const REFERENCE_PACKAGE = REFERENCES[REFERENCE_VERSION];
/** The 0.87 line and later (1.6.0): new entry kinds, new planning rules. */
export const IS_087 = REFERENCE_VERSION !== "0.73.1";
/** Pi 1.6.0: nested tool calls, summaries without an output limit, focus on the turn prefix. */
export const IS_16 = REFERENCE_VERSION === "1.6.0";

// ---------------------------------------------------------------------------
// Deterministic randomness
// ---------------------------------------------------------------------------

/** mulberry32: tiny 32-bit PRNG, returns floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a 32-bit hash of a string (UTF-16 code units), used to derive seeds. */
export function fnv1a(str) {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * Replaces every source of nondeterminism the session manager uses:
 *  - crypto.randomUUID (entry ids during v1 migration): patched on the CJS
 *    object and propagated to ESM named imports via syncBuiltinESMExports();
 *  - globalThis.crypto.getRandomValues (uuid v7 random bits for fresh session ids);
 *  - Date.now() / new Date() without arguments (fresh header timestamps and
 *    the uuid v7 time field). Date with arguments behaves normally.
 *
 * Must be called BEFORE the reference is imported. Returns a controller whose
 * reseed(label, nowMs) resets all three for the next file, so every file's
 * output depends only on its own name and the clock value given.
 */
export function installDeterminism() {
  let rand = mulberry32(1);
  let nowMs = Date.UTC(2099, 0, 1);

  const hexByte = () => Math.floor(rand() * 256);
  crypto.randomUUID = function deterministicRandomUUID() {
    const b = Array.from({ length: 16 }, hexByte);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.map((x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  module.syncBuiltinESMExports();

  globalThis.crypto.getRandomValues = function deterministicGetRandomValues(arr) {
    const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = hexByte();
    return arr;
  };

  const RealDate = Date;
  class FixedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(nowMs);
      else super(...args);
    }
    static now() {
      return nowMs;
    }
  }
  globalThis.Date = FixedDate;

  return {
    RealDate,
    reseed(label, clockMs) {
      rand = mulberry32(fnv1a(label));
      nowMs = clockMs;
    },
  };
}

// ---------------------------------------------------------------------------
// Loading the reference
// ---------------------------------------------------------------------------

/**
 * Returns the directory that contains node_modules/@mariozechner/pi-coding-agent.
 * Uses $PI_DIR when set; otherwise installs the pinned version into a temp dir.
 */
export function resolvePiDir() {
  if (process.env.PI_DIR) return path.resolve(process.env.PI_DIR);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ctxkit-pi-ref-"));
  process.stderr.write(`installing ${REFERENCE_PACKAGE}@${REFERENCE_VERSION} into ${dir}\n`);
  execFileSync(
    "npm",
    [
      "i",
      "--prefix",
      dir,
      `${REFERENCE_PACKAGE}@${REFERENCE_VERSION}`,
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
    ],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  // The temp install is removed when this process exits.
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function loadReference(piDir) {
  const pkgDir = path.join(piDir, "node_modules", ...REFERENCE_PACKAGE.split("/"));
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
  if (pkg.version !== REFERENCE_VERSION) {
    throw new Error(`expected ${REFERENCE_PACKAGE}@${REFERENCE_VERSION}, found ${pkg.version} in ${pkgDir}`);
  }
  const sm = await import(pathToFileURL(path.join(pkgDir, "dist", "core", "session-manager.js")).href);
  const msgs = await import(pathToFileURL(path.join(pkgDir, "dist", "core", "messages.js")).href);
  return {
    version: pkg.version,
    SessionManager: sm.SessionManager,
    buildSessionContext: sm.buildSessionContext,
    convertToLlm: msgs.convertToLlm,
  };
}

// ---------------------------------------------------------------------------
// Computations shared by record and reverse
// ---------------------------------------------------------------------------

/** JSON round trip: drops undefined members, turns them into null inside arrays. */
export function plain(value) {
  if (value === undefined) return undefined;
  return JSON.parse(JSON.stringify(value));
}

/**
 * Does the leaf -> root walk starting at `leafId` terminate?  Mirrors the
 * reference's walk exactly (`parentId ? byId.get(parentId) : undefined`, where
 * byId keeps the LAST entry for a duplicated id, and an unknown / undefined
 * leaf falls back to the last entry), but with a visited set, so it is safe to
 * call on files with parent cycles.
 */
export function walkTerminates(entries, leafId) {
  if (leafId === null) return true;
  const byId = new Map();
  for (const e of entries) byId.set(e.id, e);
  let cur = leafId ? byId.get(leafId) : undefined;
  if (!cur) cur = entries[entries.length - 1];
  const seen = new Set();
  while (cur) {
    if (seen.has(cur)) return false;
    seen.add(cur);
    cur = cur.parentId ? byId.get(cur.parentId) : undefined;
  }
  return true;
}

/**
 * Preorder flattening of sm.getTree(): roots in returned order, children in
 * returned (timestamp-sorted) order. Iterative. A node that is reachable twice
 * is emitted twice (that is what the reference's structure says); a node that
 * is its own ancestor aborts with an error instead of looping.
 */
export function flattenTree(roots) {
  const out = [];
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i], 0, null]);
  while (stack.length > 0) {
    const [node, depth, ancestors] = stack.pop();
    for (let a = ancestors; a; a = a.up) {
      if (a.node === node) throw new Error("getTree() returned a cyclic structure");
    }
    const e = node.entry;
    out.push({
      id: e?.id,
      parentId: e?.parentId,
      depth,
      type: e?.type,
      role: e?.type === "message" ? (e.message?.role ?? null) : null,
      label: node.label ?? null,
      children: node.children.length,
    });
    const chain = { node, up: ancestors };
    for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], depth + 1, chain]);
  }
  return plain(out);
}

export function contextRecord(ref, leafKey, ctx, withLlm) {
  const rec = {
    leafId: leafKey,
    messages: ctx.messages,
    thinkingLevel: ctx.thinkingLevel,
    model: ctx.model,
  };
  if (withLlm) rec.llm = ref.convertToLlm(ctx.messages);
  return plain(rec);
}

/** Id that is guaranteed not to be present in a session ("__missing__" leaf). */
export const MISSING_LEAF_ID = "zzzzzzzz";

// ---------------------------------------------------------------------------
// Output formatting
// ---------------------------------------------------------------------------

function isPrimitive(v) {
  return v === null || typeof v !== "object";
}

/**
 * Deterministic pretty printer (key order = insertion order, i.e. as the
 * reference produced it). Layout rules, to keep vectors small yet diffable:
 *  - arrays holding only primitives are written on one line;
 *  - an object that is an element of an array is written on one line when the
 *    array is nested at depth >= 2 (entries, messages, llm) or when all of the
 *    object's values are primitives (tree nodes);
 *  - everything else is indented by one space per level.
 * The result parses to exactly the same value as JSON.stringify(value).
 */
export function formatJson(value) {
  const compact = (v) => JSON.stringify(v);
  const fmt = (v, depth) => {
    if (isPrimitive(v)) return compact(v);
    const pad = " ".repeat(depth + 1);
    const end = " ".repeat(depth);
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      if (v.every(isPrimitive)) return compact(v);
      const items = v.map((item) => {
        if (!isPrimitive(item) && !Array.isArray(item)) {
          const allPrim = Object.values(item).every(isPrimitive);
          if (depth >= 2 || allPrim) return pad + compact(item);
        }
        return pad + fmt(item, depth + 1);
      });
      return `[\n${items.join(",\n")}\n${end}]`;
    }
    const keys = Object.keys(v);
    if (keys.length === 0) return "{}";
    const items = keys.map((k) => `${pad}${JSON.stringify(k)}: ${fmt(v[k], depth + 1)}`);
    return `{\n${items.join(",\n")}\n${end}}`;
  };
  return `${fmt(plain(value), 0)}\n`;
}
