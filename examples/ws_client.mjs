#!/usr/bin/env node
// A minimal agent over `ctxkit serve --listen`: connects to /rpc, creates a session (or opens one by
// id with --session), runs each prompt with `agent.run` and prints the replies, tool calls and
// compactions as they stream. ctxkit runs the loop with the model in its settings.
//
//   npm install --prefix examples       # once (the `ws` package)
//   node examples/ws_client.mjs --url ws://127.0.0.1:8477/rpc [--token T] [--session ID] "prompt" …
//
// The token defaults to $CTXKIT_SERVER_TOKEN. The session id is printed first: pass it to
// --session (on this instance or another one sharing the database) to continue the session.
// --cwd (default: the folder it runs in) is the project the session is created in and every run
// works in.
// It exits 0 only when every prompt was answered and the server answered the final `shutdown`;
// a run that ended otherwise (interrupted by a stopping server, failed, not sent) or a connection
// closed before its answer exits 1.

import { parseArgs } from "node:util";
import WebSocket from "ws";

const usage =
  "usage: node examples/ws_client.mjs [--url ws://HOST:PORT/rpc] [--token T] [--session ID] [--cwd DIR] \"prompt\" …";

function parsed() {
  try {
    return parseArgs({
      options: {
        url: { type: "string", default: "ws://127.0.0.1:8477/rpc" },
        token: { type: "string", default: process.env.CTXKIT_SERVER_TOKEN ?? "" },
        session: { type: "string" },
        cwd: { type: "string", default: process.cwd() },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
    });
  } catch (error) {
    console.error(`${error.message}\n${usage}`);
    process.exit(2);
  }
}

const { values: options, positionals: prompts } = parsed();
if (options.help) {
  console.log(usage);
  process.exit(0);
}

const headers = options.token ? { Authorization: `Bearer ${options.token}` } : {};
const socket = new WebSocket(options.url, { headers });
const waiting = new Map();
let nextId = 0;
// Set once the final `shutdown` is answered: a close after it is the expected end.
let finished = false;

function call(method, params = {}) {
  nextId += 1;
  const id = nextId;
  socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  return new Promise((resolve) => waiting.set(id, resolve));
}

function show(notification) {
  const params = notification.params ?? {};
  if (notification.method === "agent_event" && params.type === "reply") {
    const text = (params.message?.content ?? [])
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("");
    if (text) console.log(text);
  } else if (notification.method === "agent_event" && params.type === "tool_start") {
    console.log(`→ ${params.call.name} ${JSON.stringify(params.call.arguments)}`);
  } else if (notification.method === "event" && params.type === "compaction_end") {
    console.log(`[compacted: ${params.tokens_before} → ${params.tokens_after} tokens]`);
  }
}

socket.on("message", (data) => {
  const message = JSON.parse(data.toString());
  if (message.id !== undefined && waiting.has(message.id)) {
    waiting.get(message.id)(message);
    waiting.delete(message.id);
  } else {
    show(message);
  }
});
// A server that stops (SIGHUP, SIGTERM) closes the connection with calls unanswered: their promises
// would never settle and Node would exit 0 with nothing left to run.
socket.on("close", (code, reason) => {
  if (finished) return;
  const why = reason?.toString() || `close code ${code}`;
  console.error(`error: the connection closed before the server answered (${why})`);
  process.exit(1);
});
socket.on("error", (error) => {
  console.error(`error: ${options.url}: ${error.message}`);
  process.exit(1);
});

// A session whose instance died stays leased until its lease expires (`store.leaseSeconds`, 30 s):
// wait for it rather than give up.
async function openWaiting(id) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const opened = await call("session.open", { id });
    if (opened.error?.data?.kind !== "session_in_use" || Date.now() > deadline) return opened;
    console.log(`waiting: ${opened.error.message}`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

socket.on("open", async () => {
  await call("initialize");
  const opened = options.session
    ? await openWaiting(options.session)
    : await call("session.create", { cwd: options.cwd });
  if (opened.error) {
    console.error(`error: ${opened.error.message}`);
    process.exit(1);
  }
  console.log(`session: ${opened.result.session_id} (${opened.result.entries} entries)`);
  let completed = true;
  for (const text of prompts) {
    // The project to work in, named on every run: a session opened by id records the directory
    // it was created in, which the server does not take unless the client names it (QA r99: the
    // failover of deployment.md's step 6 was refused, `unconfirmed_cwd`).
    const answer = await call("agent.run", { text, approve: "none", cwd: options.cwd });
    const outcome = answer.result ?? answer.error;
    console.log(`[${JSON.stringify(text)}: ${JSON.stringify(outcome)}]`);
    if (answer.result?.outcome !== "answered") {
      // The later prompts would follow a turn that did not complete.
      console.error(`error: the run of ${JSON.stringify(text)} did not complete`);
      completed = false;
      break;
    }
  }
  await call("shutdown");
  finished = true;
  socket.close();
  process.exitCode = completed ? 0 : 1;
});
