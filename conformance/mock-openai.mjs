// A loopback OpenAI-compatible Chat Completions server for trying Pi and ctxkit offline: answers
// every request (streamed when asked) with a scripted reply, and records each request body.
// Requests without tools (summaries) and requests ending with the summary instruction get a
// summary; the first chat request of each prompt may carry a tool call (`read` of README.md) so
// sessions hold tool results.
//
// Usage: node conformance/mock-openai.mjs <requests.jsonl>   (prints "listening <url>" on stdout)
// As a module: `startMock(recordPath)` → { url, close() }.

import fs from "node:fs";
import http from "node:http";

function reply(body) {
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1];
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  // A summary request continuing the conversation (`compaction.cachePrefix`) ends with this
  // instruction and carries the tools; a model answers it with the summary.
  const continued = last?.role === "user" && JSON.stringify(last.content).includes("Pause the task here: this message is not a new request");
  if (!hasTools || continued) {
    return { content: "## Goal\n- Continue the parser work\n\n## Progress\n- Summary written by the mock model", toolCalls: null };
  }
  const askedToRead = last?.role === "user" && JSON.stringify(last.content).includes("README");
  if (askedToRead && body.tools.some((tool) => tool.function?.name === "read")) {
    return {
      content: null,
      toolCalls: [{ id: `call_${messages.length}`, type: "function", function: { name: "read", arguments: JSON.stringify({ path: "README.md" }) } }],
    };
  }
  return { content: `Mock answer number ${messages.length}.`, toolCalls: null };
}

function send(response, body, answer) {
  const usage = { prompt_tokens: 900 + JSON.stringify(body.messages ?? []).length / 4, completion_tokens: 20 };
  usage.prompt_tokens = Math.round(usage.prompt_tokens);
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const finish = answer.toolCalls ? "tool_calls" : "stop";
  if (!body.stream) {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({
      id: "chatcmpl-mock", object: "chat.completion", created: 1, model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: answer.content, tool_calls: answer.toolCalls ?? undefined }, finish_reason: finish }],
      usage,
    }));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta, finishReason = null) => ({ id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  const events = [chunk({ role: "assistant", content: answer.content ?? "" })];
  if (answer.toolCalls) {
    events.push(chunk({ tool_calls: answer.toolCalls.map((call, index) => ({ index, ...call })) }));
  }
  events.push(chunk({}, finish));
  events.push({ id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: body.model, choices: [], usage });
  for (const event of events) response.write(`data: ${JSON.stringify(event)}\n\n`);
  response.end("data: [DONE]\n\n");
}

export function startMock(recordPath) {
  const server = http.createServer((request, response) => {
    let raw = "";
    request.on("data", (part) => (raw += part));
    request.on("end", () => {
      let body = {};
      try {
        body = JSON.parse(raw);
      } catch {
        body = {};
      }
      fs.appendFileSync(recordPath, `${JSON.stringify({ path: request.url, body })}\n`);
      send(response, body, reply(body));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}/v1`, close: () => new Promise((done) => server.close(done)) });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const record = process.argv[2];
  if (!record) {
    process.stderr.write("usage: node conformance/mock-openai.mjs <requests.jsonl>\n");
    process.exit(2);
  }
  const { url } = await startMock(record);
  process.stdout.write(`listening ${url}\n`);
}
