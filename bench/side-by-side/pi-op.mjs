#!/usr/bin/env node
// The reference's side of the side-by-side harness: runs one operation of
// @mariozechner/pi-coding-agent on one input in this (fresh) process and prints
// {"seconds", "peakRssBytes", "check"} on stdout. Mirrors crates/ctxkit-bench/src/measure.rs.
//
// Usage: node pi-op.mjs <operation> <input>
//   operations: open open-context context context-values prepare tree branch append list tokens tokens-tiktoken
// The reference is imported from $PI_DIR (a directory holding node_modules/<package>); when PI_DIR is
// unset it is installed with npm into $TMPDIR/ctxkit-bench-pi-<version> (reused later). PI_VERSION picks
// the release (default 0.73.1, `@mariozechner/pi-coding-agent`; 0.87.1 and later are published as
// `@earendil-works/pi-coding-agent` and need Node >= 22).
// `tokens` times the reference's own token count (estimateTokens: the only one it ships);
// `tokens-tiktoken` times js-tiktoken's exact cl100k_base count (not part of the reference; installed
// with npm into $TMPDIR/ctxkit-bench-js-tiktoken-<version>).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const PI_VERSION = process.env.PI_VERSION ?? "0.73.1";
const [PI_MAJOR, PI_MINOR] = PI_VERSION.split(".").map(Number);
const PI_PACKAGE =
  PI_MAJOR >= 1 || PI_MINOR >= 87 ? "@earendil-works/pi-coding-agent" : "@mariozechner/pi-coding-agent";
const TIKTOKEN_VERSION = "1.0.21";

function installed(dir, spec, probe) {
  if (!existsSync(join(dir, "node_modules", probe))) {
    mkdirSync(dir, { recursive: true });
    process.stderr.write(`Installing ${spec} into ${dir}\n`);
    execFileSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--silent", spec], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  return dir;
}

function piDir() {
  if (process.env.PI_DIR) return process.env.PI_DIR;
  return installed(
    join(tmpdir(), `ctxkit-bench-pi-${PI_VERSION}`),
    `${PI_PACKAGE}@${PI_VERSION}`,
    `${PI_PACKAGE}/package.json`,
  );
}

async function core(file) {
  const url = pathToFileURL(join(piDir(), "node_modules", PI_PACKAGE, "dist/core", file));
  return import(url.href);
}

function timed(work) {
  const start = process.hrtime.bigint();
  const value = work();
  return [Number(process.hrtime.bigint() - start) / 1e9, value];
}

async function timedAsync(work) {
  const start = process.hrtime.bigint();
  const value = await work();
  return [Number(process.hrtime.bigint() - start) / 1e9, value];
}

function messagesToAppend(count) {
  const messages = [];
  for (let i = 0; i < count; i++) {
    messages.push(
      i % 2 === 0
        ? { role: "user", content: `Appended prompt ${i}: run the tests again.`, timestamp: 1750000000000 + i }
        : {
            role: "assistant",
            content: [{ type: "text", text: `Reply ${i}: all tests pass.` }],
            api: "anthropic-messages",
            provider: "anthropic",
            model: "claude-sonnet-4-5",
            usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120,
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
            stopReason: "stop",
            timestamp: 1750000000000 + i,
          },
    );
  }
  return messages;
}

async function run(operation, input) {
  const { SessionManager } = await core("session-manager.js");
  switch (operation) {
    case "open-context": {
      const [seconds, context] = timed(() => SessionManager.open(input).buildSessionContext());
      return [seconds, `${context.messages.length} messages`];
    }
    case "open": {
      const [seconds, sm] = timed(() => SessionManager.open(input));
      return [seconds, `${sm.getEntries().length} entries`];
    }
    case "list": {
      // 0.87 filters `list(cwd, dir)` by the sessions' cwd; `listAll(dir)` lists the directory as is.
      const listing = SessionManager.listAll
        ? () => SessionManager.listAll(input)
        : () => SessionManager.list(process.cwd(), input);
      const [seconds, list] = await timedAsync(listing);
      return [seconds, `${list.length} sessions, 0 skipped`];
    }
    case "tokens": {
      const { estimateTokens } = await core("compaction/compaction.js");
      const text = readFileSync(input, "utf8");
      estimateTokens({ role: "user", content: "warm up", timestamp: 0 });
      const [seconds, tokens] = timed(() => estimateTokens({ role: "user", content: text, timestamp: 0 }));
      return [seconds, `${tokens} tokens (estimate)`];
    }
    case "tokens-tiktoken": {
      const dir = installed(
        join(tmpdir(), `ctxkit-bench-js-tiktoken-${TIKTOKEN_VERSION}`),
        `js-tiktoken@${TIKTOKEN_VERSION}`,
        "js-tiktoken/package.json",
      );
      const require = createRequire(join(dir, "node_modules", "index.js"));
      const { Tiktoken } = require("js-tiktoken/lite");
      const ranks = require("js-tiktoken/ranks/cl100k_base");
      const encoder = new Tiktoken(ranks.default ?? ranks);
      const text = readFileSync(input, "utf8");
      encoder.encode("warm up the vocabulary");
      const [seconds, tokens] = timed(() => encoder.encode(text).length);
      return [seconds, `${tokens} tokens`];
    }
    default:
      break;
  }
  const sm = SessionManager.open(input);
  switch (operation) {
    case "context":
    case "context-values": {
      const [seconds, context] = timed(() => sm.buildSessionContext());
      return [seconds, `${context.messages.length} messages`];
    }
    case "prepare": {
      const { prepareCompaction, DEFAULT_COMPACTION_SETTINGS } = await core("compaction/compaction.js");
      const [seconds, plan] = timed(() => prepareCompaction(sm.getBranch(), DEFAULT_COMPACTION_SETTINGS));
      return [seconds, plan ? `keep from ${plan.firstKeptEntryId}, ${plan.tokensBefore} tokens before` : "no plan"];
    }
    case "tree": {
      const [seconds, roots] = timed(() => sm.getTree());
      let nodes = 0;
      const stack = [...roots];
      while (stack.length > 0) {
        const node = stack.pop();
        nodes++;
        stack.push(...node.children);
      }
      return [seconds, `${nodes} nodes`];
    }
    case "branch": {
      const [seconds, file] = timed(() => sm.createBranchedSession(sm.getLeafId()));
      return [seconds, `written: ${file !== undefined}`];
    }
    case "append":
    case "append10k": {
      const messages = messagesToAppend(operation === "append" ? 1000 : 10000);
      const [seconds] = timed(() => {
        for (const message of messages) sm.appendMessage(message);
      });
      return [seconds, `${sm.getEntries().length} entries`];
    }
    default:
      throw new Error(`Unknown operation ${operation}`);
  }
}

const [operation, input] = process.argv.slice(2);
if (!operation || !input) {
  process.stderr.write("Usage: node pi-op.mjs <operation> <input>\n");
  process.exit(2);
}
const [seconds, check] = await run(operation, input);
const peakRssBytes = process.resourceUsage().maxRSS * 1024;
process.stdout.write(`${JSON.stringify({ seconds, peakRssBytes, check })}\n`);
