'use strict';

const http = require('node:http');
const { URL } = require('node:url');

const PORT = Number(process.env.PORT ?? 8080);
const MAX_BODY_BYTES = 1024 * 1024;

/** In-memory store of todo items, keyed by numeric id. */
const todos = new Map();
let nextId = 1;

function sendJson(res, status, body) {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

async function readJson(req) {
  let size = 0;
  const chunks = [];
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      throw Object.assign(new Error('body too large'), { status: 413 });
    }
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  } catch (err) {
    throw Object.assign(new Error(`invalid JSON: ${err.message}`), { status: 400 });
  }
}

const routes = {
  'GET /todos': async (_req, res) => {
    sendJson(res, 200, [...todos.values()]);
  },
  'POST /todos': async (req, res) => {
    const { title, done = false } = await readJson(req);
    if (typeof title !== 'string' || title.trim() === '') {
      return sendJson(res, 422, { error: 'title must be a non-empty string' });
    }
    const todo = { id: nextId++, title: title.trim(), done: Boolean(done), createdAt: new Date().toISOString() };
    todos.set(todo.id, todo);
    sendJson(res, 201, todo);
  },
  'PATCH /todos/:id': async (req, res, params) => {
    const todo = todos.get(Number(params.id));
    if (!todo) return sendJson(res, 404, { error: `no todo with id ${params.id}` });
    const patch = await readJson(req);
    if ('title' in patch) todo.title = String(patch.title);
    if ('done' in patch) todo.done = Boolean(patch.done);
    sendJson(res, 200, todo);
  },
  'DELETE /todos/:id': async (_req, res, params) => {
    const removed = todos.delete(Number(params.id));
    sendJson(res, removed ? 204 : 404, removed ? {} : { error: 'not found' });
  },
};

function match(method, pathname) {
  for (const [key, handler] of Object.entries(routes)) {
    const [m, pattern] = key.split(' ');
    if (m !== method) continue;
    const names = [];
    const re = new RegExp('^' + pattern.replace(/:(\w+)/g, (_, n) => (names.push(n), '([^/]+)')) + '$');
    const found = re.exec(pathname);
    if (found) {
      return { handler, params: Object.fromEntries(names.map((n, i) => [n, found[i + 1]])) };
    }
  }
  return null;
}

const server = http.createServer(async (req, res) => {
  const { pathname } = new URL(req.url, `http://${req.headers.host}`);
  const route = match(req.method, pathname);
  if (!route) return sendJson(res, 404, { error: 'route not found' });
  try {
    await route.handler(req, res, route.params);
  } catch (err) {
    console.error(`[${new Date().toISOString()}] ${req.method} ${pathname} failed:`, err);
    sendJson(res, err.status ?? 500, { error: err.message });
  }
});

server.listen(PORT, () => console.log(`listening on http://localhost:${PORT}`));
