// Round trip through ctxkit's writing commands (issue 35): a session that Pi 1.6.0 itself writes
// (SessionManager: every entry kind, the new message fields thinkingLevel, durationMs, nestedCalls,
// usage on tool results, cost.totalFromProvider) is changed by each command that writes —
// `label`, `name`, `edit-context` (replace, omit), `branch --to`, `branch --to --summarize`,
// `compact --out`, `undo-compact`, `fork --at` — and after every step Pi 1.6.0 must open the file
// without rewriting it and build, at the leaf and at every entry, the context ctxkit shows
// (`ctxkit context --json [--leaf]`). Steps that change no context (label, name) must also leave
// Pi's context as it was before them.
//
// `chatRoundTrip` does it as a user would: Pi's CLI writes, `ctxkit chat` continues and compacts,
// Pi reads and continues (`mock-openai.mjs` stands in for the provider).
//
// Used by reverse.mjs when CTXKIT_BIN names the ctxkit binary and PI_VERSION is 1.6.0.

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { plain } from "./lib.mjs";
import { startMock } from "./mock-openai.mjs";

const PROVIDER_VARIABLES = [
  "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY",
  "OPENROUTER_API_KEY", "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "CTXKIT_SESSIONS_DIR",
];

let clock = Date.UTC(2026, 10, 22, 10, 0, 0);
const tick = () => (clock += 1500);

const usage = (input, output, extra = {}) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 15e-6, ...extra },
});

const reply = (content, stopReason, fields = {}) => ({
  role: "assistant",
  content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage: usage(1200, 90, { totalFromProvider: true }),
  stopReason,
  timestamp: tick(),
  thinkingLevel: "high",
  durationMs: 2345,
  ...fields,
});

/** Writes a session with Pi's own SessionManager; returns its file and the ids the steps use. */
export function writePiSession(ref, dir) {
  const sm = ref.SessionManager.create("/work/project", dir);
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendThinkingLevelChange("high");
  sm.appendMessage({ role: "system", content: "You are a careful coding assistant.", timestamp: tick() });
  const ask = sm.appendMessage({ role: "user", content: "Run the codemode script over src/ and fix the parser 🦀", timestamp: tick() });
  const call = sm.appendMessage(
    reply(
      [
        { type: "thinking", thinking: "Check the parser first.", thinkingSignature: "sig-1" },
        { type: "text", text: "Running the script." },
        { type: "toolCall", id: "call_code_1", name: "codemode", arguments: { script: "read('src/parse.rs'); edit('src/lib.rs')" } },
      ],
      "toolUse",
    ),
  );
  const result = sm.appendMessage({
    role: "toolResult",
    toolCallId: "call_code_1",
    toolName: "codemode",
    content: [{ type: "text", text: "fn parse() {}\n".repeat(30) }],
    isError: false,
    timestamp: tick(),
    durationMs: 812,
    usage: usage(300, 40, { totalFromProvider: false }),
    nestedCalls: {
      complete: true,
      calls: [
        { id: "n1", name: "read", arguments: { path: "src/parse.rs" }, status: "ok", durationMs: 3 },
        { id: "n2", name: "edit", argumentsBytes: 70000, status: "error", error: "too large" },
        { id: "n3", name: "edit", arguments: { path: "src/lib.rs", oldText: "a", newText: "b" }, status: "unfinished" },
      ],
    },
  });
  sm.appendMessage({ role: "bashExecution", command: "cargo test", output: "test result: ok", exitCode: 0, cancelled: false, truncated: false, timestamp: tick() });
  const note = sm.appendCustomMessageEntry("review-note", "Keep the public API stable.", true, { source: "extension" });
  sm.appendCustomEntry("extension-state", { step: 2 });
  sm.appendLabelChange(ask, "the task");
  sm.appendSessionInfo("Parser work");
  sm.appendUsage("subagent", "anthropic", "claude-haiku-4-5", usage(500, 60, { totalFromProvider: true }), "review pass");
  const done = sm.appendMessage(reply([{ type: "text", text: "The parser is fixed." }], "stop"));
  sm.appendContextEdit(result, { content: "[codemode output elided]" });
  const second = sm.appendMessage({ role: "user", content: "Now add tests for the new branch.", timestamp: tick() });
  sm.appendMessage(reply([{ type: "text", text: "Tests added in tests/parse.rs." }], "stop"));
  sm.appendCompaction("## Goal\n- Fix the parser and add tests", second, 4321, { readFiles: ["src/parse.rs"], modifiedFiles: ["src/lib.rs"] });
  const third = sm.appendMessage({ role: "user", content: "Try a different fix.", timestamp: tick() });
  sm.appendMessage(reply([{ type: "text", text: "Tried another approach." }], "stop"));
  // Back to the second question, with a summary of the branch left behind.
  sm.branchWithSummary(second, "The user tried a different fix and dropped it.", { readFiles: [], modifiedFiles: [] });
  sm.appendMessage({ role: "user", content: "Go on from the tests.", timestamp: tick() });
  const last = sm.appendMessage(reply([{ type: "text", text: "Continuing from the tests." }], "stop"));
  return { file: sm.getSessionFile(), ids: { ask, call, result, note, done, second, third, last } };
}

function ctxkit(bin, home, args) {
  const env = { ...process.env, CTXKIT_HOME: home, NO_COLOR: "1" };
  for (const name of PROVIDER_VARIABLES) delete env[name];
  return execFileSync(bin, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Pi's context of `file` at the leaf (`null` key) and at each entry. */
function piContexts(ref, file) {
  const sm = ref.SessionManager.open(file);
  const entries = sm.getEntries();
  const at = (leaf) => {
    const ctx = leaf === null ? sm.buildSessionContext() : ref.buildSessionContext(entries, leaf);
    return plain({ messages: ctx.messages, thinkingLevel: ctx.thinkingLevel, model: ctx.model ?? null });
  };
  const contexts = new Map([[null, at(null)]]);
  for (const entry of entries) contexts.set(entry.id, at(entry.id));
  return contexts;
}

function ctxkitContext(bin, home, file, leaf) {
  const args = ["context", file, "--json"];
  if (leaf !== null) args.push("--leaf", leaf);
  const record = JSON.parse(ctxkit(bin, home, args));
  return plain({ messages: record.messages, thinkingLevel: record.thinkingLevel, model: record.model ?? null });
}

/**
 * Runs the round trip; `diff(expected, actual, path, out)` is reverse.mjs's comparison. Returns
 * [step name, problems] for every step.
 */
export function roundTrip(ref, bin, diff) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxkit-round-trip-"));
  const home = path.join(work, "home");
  fs.mkdirSync(home);
  const results = [];
  try {
    const { file, ids } = writePiSession(ref, path.join(work, "pi"));
    const check = (name, target, unchangedFrom) => {
      const problems = [];
      const before = fs.readFileSync(target);
      let contexts;
      try {
        contexts = piContexts(ref, target);
      } catch (err) {
        results.push([name, [["$", "(opens)", `throws ${err?.message}`]]]);
        return null;
      }
      if (!fs.readFileSync(target).equals(before)) problems.push(["$.rewritten", false, true]);
      for (const [leaf, pi] of contexts) {
        diff(ctxkitContext(bin, home, target, leaf), pi, `$.context(${leaf ?? "leaf"})`, problems);
      }
      if (unchangedFrom) diff(unchangedFrom.get(null), contexts.get(null), "$.unchanged", problems);
      results.push([name, problems]);
      return contexts;
    };
    const session = path.join(work, "session.jsonl");
    fs.copyFileSync(file, session);
    const written = check("written by Pi 1.6.0", session, null);
    ctxkit(bin, home, ["label", session, ids.call, "ctxkit label"]);
    const labelled = check("label", session, written);
    ctxkit(bin, home, ["name", session, "Renamed by ctxkit"]);
    check("name", session, labelled);
    ctxkit(bin, home, ["edit-context", session, ids.last, "--replace", "Edited by ctxkit."]);
    check("edit-context --replace", session, null);
    ctxkit(bin, home, ["edit-context", session, ids.second, "--omit"]);
    check("edit-context --omit", session, null);
    ctxkit(bin, home, ["branch", session, "--to", ids.done]);
    check("branch --to", session, null);
    ctxkit(bin, home, ["branch", session, "--to", ids.ask, "--summarize"]);
    check("branch --to --summarize", session, null);
    ctxkit(bin, home, ["branch", session, "--to", ids.last]);
    const compacted = path.join(work, "compacted.jsonl");
    ctxkit(bin, home, ["compact", session, "--out", compacted, "--keep-recent-tokens", "20"]);
    check("compact --out", compacted, null);
    ctxkit(bin, home, ["undo-compact", compacted]);
    check("undo-compact", compacted, null);
    const forked = ctxkit(bin, home, ["fork", session, "--at", ids.done]).trim().split("\n").pop();
    check("fork --at", path.resolve(forked), null);
  } catch (err) {
    results.push(["(round trip)", [["$", "(no error)", `${err?.stack ?? err}${err?.stderr ? `\n${err.stderr}` : ""}`]]]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return results;
}

/** Runs `command args` with `input` on stdin; resolves with its stdout, rejects on failure. */
function run(command, args, { env, cwd, input = "" }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.stdout.on("data", (part) => (stdout += part));
    child.stderr.on("data", (part) => (stderr += part));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${path.basename(command)} ${args.join(" ")} exited with ${code}:\n${stderr}`));
    });
    child.stdin.end(input);
  });
}

/** The non-system messages of a recorded chat request, as the model reads them. */
function conversation(body) {
  return body.messages
    .filter((message) => message.role !== "system")
    .map((message) => ({
      role: message.role,
      text: typeof message.content === "string" ? message.content : (message.content ?? []).map((part) => part.text ?? "").join(""),
      calls: (message.tool_calls ?? []).map((call) => [call.function.name, call.function.arguments]),
      callId: message.tool_call_id ?? null,
    }));
}

/**
 * Tried as a user would, against a loopback OpenAI-compatible mock: Pi 1.6.0's CLI writes a
 * session (two prompts, a tool call), `ctxkit chat` continues it (a prompt, `/compact` with focus,
 * another prompt; `compaction.modelOverrides` sets the model's keep budget), Pi opens the result
 * with ctxkit's contexts at every entry, and Pi's CLI continues it: the conversation Pi sends
 * starts with exactly what ctxkit sent after its compaction.
 */
export async function chatRoundTrip(ref, bin, piDir, diff) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxkit-chat-round-trip-"));
  const problems = [];
  const requests = path.join(work, "requests.jsonl");
  const mock = await startMock(requests);
  try {
    const agentDir = path.join(work, "pi-agent");
    const project = path.join(work, "project");
    const home = path.join(work, "ctxkit-home");
    for (const dir of [agentDir, project, home]) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(project, "README.md"), "# Demo project\nA parser for session files.\n");
    const model = { id: "mock-model", name: "Mock", contextWindow: 32000, maxTokens: 4096, reasoning: false };
    fs.writeFileSync(
      path.join(agentDir, "models.json"),
      JSON.stringify({ providers: { mock: { baseUrl: mock.url, api: "openai-completions", apiKey: "mock-key", models: [model] } } }),
    );
    fs.writeFileSync(
      path.join(home, "settings.json"),
      JSON.stringify({
        defaultProvider: "mock",
        defaultModel: "mock/mock-model",
        llm: { api: "openai-completions", baseUrl: mock.url, apiKey: "mock-key", models: [{ provider: "mock", id: "mock-model", contextWindow: 32000, maxOutput: 4096 }] },
        retry: { enabled: false },
        compaction: { modelOverrides: { "mock/mock-model": { keepRecentTokens: 50 } } },
      }),
    );
    const env = { ...process.env, HOME: work, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", CTXKIT_HOME: home, NO_COLOR: "1" };
    for (const name of PROVIDER_VARIABLES) delete env[name];
    const pi = path.join(piDir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
    const piPrompt = (text, more) => run(process.execPath, [pi, "--provider", "mock", "--model", "mock-model", ...more, "-p", text], { env, cwd: project });
    await piPrompt("Please read the README and summarize it", []);
    await piPrompt("Now list what else the project needs", ["--continue"]);
    const sessions = path.join(agentDir, "sessions");
    const [folder] = fs.readdirSync(sessions);
    const [name] = fs.readdirSync(path.join(sessions, folder));
    const file = path.join(sessions, folder, name);
    // `--script`: the piped lines as typed at the prompt (`/compact` a command), not print mode.
    const chat = await run(bin, ["chat", "--script", "--session", file], {
      env,
      cwd: project,
      input: "Read the README again please\n/compact keep the README facts\nWhat did we do so far?\n",
    });
    if (!chat.includes("Compacted: ")) problems.push(["$.chat", "Compacted: …", chat]);
    const entries = fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    if (!entries.some((entry) => entry.type === "compaction")) problems.push(["$.compaction", "an entry", "none"]);
    const before = fs.readFileSync(file);
    const contexts = piContexts(ref, file);
    if (!fs.readFileSync(file).equals(before)) problems.push(["$.rewritten", false, true]);
    for (const [leaf, piContext] of contexts) {
      diff(ctxkitContext(bin, home, file, leaf), piContext, `$.context(${leaf ?? "leaf"})`, problems);
    }
    await piPrompt("One more question from Pi", ["--session", file]);
    const recorded = fs.readFileSync(requests, "utf8").trim().split("\n").map((line) => JSON.parse(line).body);
    const chatRequests = recorded.filter((body) => Array.isArray(body.tools) && body.tools.length > 0);
    const lastUser = (body) => conversation(body).filter((message) => message.role === "user").pop()?.text;
    const ctxkitAfter = chatRequests.find((body) => lastUser(body) === "What did we do so far?");
    const piAfter = chatRequests.find((body) => lastUser(body) === "One more question from Pi");
    if (!ctxkitAfter || !piAfter) {
      problems.push(["$.requests", "ctxkit's and Pi's requests after the compaction", recorded.length]);
    } else {
      // ctxkit's view adds one line to each summary naming where its originals are (`recall`
      // `ctxkit://summarized`; docs/pi-compatibility.md); Pi, reading the same file, sends the rest.
      const pointer = /\n\n\(The original messages behind this summary stay in the session:[^)]*\)/;
      const sent = conversation(ctxkitAfter);
      if (!pointer.test(sent[0]?.text ?? "")) problems.push(["$.summaryPointer", true, sent[0]]);
      if (sent[0]) sent[0].text = sent[0].text.replace(pointer, "");
      if (!sent[0]?.text.includes("Summary written by the mock model")) problems.push(["$.summarySent", true, sent[0]]);
      diff(sent, conversation(piAfter).slice(0, sent.length), "$.piContinues", problems);
    }
  } catch (err) {
    problems.push(["$", "(no error)", `${err?.stack ?? err}`]);
  } finally {
    await mock.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
  return problems;
}

/**
 * The keys `ctxkit login` saves, read by Pi 1.6.0's own credential store: each provider's key as
 * typed, `$` and a leading `!` included (written with Pi's escapes, so Pi neither runs nor
 * expands them), and an entry Pi wrote before left as it was. Then a key Pi writes under its lock
 * is removed by `ctxkit logout`, the rest kept.
 */
export async function authRoundTrip(piDir, bin) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxkit-auth-round-trip-"));
  const problems = [];
  try {
    const home = path.join(work, "ctxkit-home");
    fs.mkdirSync(home, { recursive: true });
    const authPath = path.join(home, "auth.json");
    const piOwn = { type: "oauth", access: "a", refresh: "r", expires: 1 };
    fs.writeFileSync(authPath, JSON.stringify({ "github-copilot": piOwn }));
    const keys = { anthropic: "sk-ant-plain-1", openai: "sk-with$dollar", groq: "!starts-with-bang" };
    const env = { ...process.env, HOME: work, CTXKIT_HOME: home };
    for (const [provider, key] of Object.entries(keys)) {
      await run(bin, ["login", provider], { env, cwd: work, input: `${key}\n` });
    }
    const pkgDir = path.join(piDir, "node_modules", "@earendil-works", "pi-coding-agent");
    const auth = await import(pathToFileURL(path.join(pkgDir, "dist", "core", "auth-storage.js")).href);
    const storage = auth.AuthStorage.create(authPath);
    for (const [provider, key] of Object.entries(keys)) {
      const credential = await storage.read(provider);
      if (credential?.type !== "api_key" || credential.key !== key) {
        problems.push([`$.${provider}`, { type: "api_key", key }, credential ?? null]);
      }
    }
    const kept = await storage.read("github-copilot");
    if (JSON.stringify(kept) !== JSON.stringify(piOwn)) problems.push(["$.github-copilot", piOwn, kept ?? null]);
    const mode = fs.statSync(authPath).mode & 0o777;
    if (mode !== 0o600) problems.push(["mode", "600", mode.toString(8)]);
    // Pi writes a key under its lock; ctxkit reads the file Pi wrote and removes that key.
    await storage.modify("xai", async () => ({ type: "api_key", key: "xai-from-pi" }));
    const removed = await run(bin, ["logout", "xai"], { env, cwd: work });
    if (!removed.includes("Removed the saved key of `xai`")) problems.push(["logout xai", "removed", removed.trim()]);
    const left = JSON.parse(fs.readFileSync(authPath, "utf8"));
    const expected = ["anthropic", "github-copilot", "groq", "openai"];
    if (JSON.stringify(Object.keys(left).sort()) !== JSON.stringify(expected)) {
      problems.push(["$ (after Pi's write and ctxkit's logout)", expected, Object.keys(left).sort()]);
    }
  } catch (err) {
    problems.push(["$", "(no error)", `checker error: ${err?.stack ?? err}`]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return problems;
}
