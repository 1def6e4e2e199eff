#!/usr/bin/env node
// Turns the side-by-side results (JSON lines written by run.sh) into a markdown table:
// median seconds of each side, peak RSS of the median run, and ratios.
import { readFileSync } from "node:fs";

const rows = readFileSync(process.argv[2], "utf8").trim().split("\n").map((line) => JSON.parse(line));
const groups = new Map();
for (const row of rows) {
  const operation = row.operation === "tokens-tiktoken" ? "tokens" : row.operation;
  const side = row.operation === "tokens" && row.side === "reference" ? "estimate" : row.side;
  const key = `${operation}\u0000${row.input}`;
  if (!groups.has(key)) groups.set(key, { operation, input: row.input, bytes: row.bytes, sides: {} });
  (groups.get(key).sides[side] ??= []).push({ ...row.result, processCpuSeconds: row.processCpuSeconds, load: row.load });
}

function median(results) {
  if (results.some((r) => r.skipped)) return { skipped: true };
  if (results.some((r) => r.failed)) return { failed: true };
  const sorted = [...results].sort((a, b) => a.seconds - b.seconds);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)], runs: sorted.length };
}
const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;
const time = (s) => (s >= 1 ? `${s.toFixed(2)} s` : s >= 1e-3 ? `${(s * 1e3).toFixed(1)} ms` : `${(s * 1e6).toFixed(0)} µs`);
const status = (m) => (m.skipped ? "skipped" : m.failed ? "failed" : null);
const names = {
  open: "open (load + index)",
  context: "build context",
  "context-values": "build context + materialize messages",
  prepare: "prepare compaction",
  tree: "tree",
  branch: "create branched session",
  append: "append 1000 messages",
  list: "list sessions",
  tokens: "exact cl100k tokenization (reference side: js-tiktoken)",
};

// The median of the whole processes' CPU time (user + system) and the range of load averages.
function cpu(results) {
  const seconds = results.map((r) => r.processCpuSeconds).filter((s) => typeof s === "number").sort((a, b) => a - b);
  return seconds.length ? seconds[Math.floor((seconds.length - 1) / 2)] : null;
}
function loads(results) {
  const values = results.map((r) => r.load).filter((l) => typeof l === "number");
  return values.length ? `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}` : "";
}

console.log("| operation | input | ctxkit time | reference time | time ratio (ref / ctxkit) | process CPU ctxkit / reference (ratio) | ctxkit peak RSS | reference peak RSS | memory (ctxkit / ref) | results agree | load |");
console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
for (const group of groups.values()) {
  const ours = median(group.sides.ctxkit ?? [{ failed: true }]);
  const theirs = median(group.sides.reference ?? [{ failed: true }]);
  const input = `${group.input} (${mb(group.bytes)})`;
  const throughput = (m) => `${(group.bytes / 1e6 / m.seconds).toFixed(2)} MB/s`;
  const show = (m) => status(m) ?? (group.operation === "tokens" ? throughput(m) : time(m.seconds));
  const ratio = status(ours) || status(theirs) ? "–" : `${(theirs.seconds / ours.seconds).toFixed(1)}×`;
  const rss = (m) => status(m) ?? mb(m.peakRssBytes);
  const share = status(ours) || status(theirs) ? 0 : (100 * ours.peakRssBytes) / theirs.peakRssBytes;
  const memory = status(ours) || status(theirs) ? "–" : `${share.toFixed(share < 10 ? 1 : 0)}%`;
  const agree = status(ours) || status(theirs) ? "–" : ours.check === theirs.check ? "yes" : `no: ${ours.check} / ${theirs.check}`;
  const [ourCpu, theirCpu] = [cpu(group.sides.ctxkit ?? []), cpu(group.sides.reference ?? [])];
  const cpus = ourCpu !== null && theirCpu !== null ? `${ourCpu.toFixed(2)} s / ${theirCpu.toFixed(2)} s (${(theirCpu / ourCpu).toFixed(1)}×)` : "–";
  const load = loads([...(group.sides.ctxkit ?? []), ...(group.sides.reference ?? [])]);
  console.log(`| ${names[group.operation] ?? group.operation} | ${input} | ${show(ours)} | ${show(theirs)} | ${ratio} | ${cpus} | ${rss(ours)} | ${rss(theirs)} | ${memory} | ${agree} | ${load} |`);
  if (group.sides.estimate) {
    const estimate = median(group.sides.estimate);
    console.log(`| reference's own token estimate (chars / 4, not exact) | ${input} | | ${show(estimate)} | | | ${rss(estimate)} | | ${estimate.check ?? ""} |`);
  }
}
