// `ctxkit serve --listen` under many clients sending a large message at once: how long until each
// is answered, and the server's peak RSS (VmHWM). Runs the server in a temporary home.
//
//   node --experimental-websocket crates/ctxkit-bench/scripts/serve_many_senders.mjs \
//     target/debug/ctxkit CLIENTS BYTES [server.maxBufferedBytes]
//
// Each message is an `initialize` request padded to BYTES, over `server.maxRequestBytes` on
// purpose: the server reads it whole and answers with the request-line error, so what is measured
// is receiving, not running.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [binary, clients, bytes, budget] = process.argv.slice(2);
const home = mkdtempSync(join(tmpdir(), "ctxkit-senders-"));
const env = { ...process.env, HOME: home, CTXKIT_HOME: join(home, ".ctxkit") };
if (budget) execFileSync(binary, ["config", "set", "server.maxBufferedBytes", budget], { env });
const server = spawn(binary, ["serve", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve) => {
  server.stdout.on("data", (chunk) => {
    const found = /ws:\/\/\S+\/rpc/.exec(chunk.toString());
    if (found) resolve(found[0]);
  });
});
const peak = () => /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))[1];
const payload = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: "x".repeat(+bytes) } });
const started = Date.now();
const times = await Promise.all(
  Array.from({ length: +clients }, () => new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.onopen = () => socket.send(payload);
    socket.onmessage = () => { resolve(Date.now() - started); socket.close(); };
    socket.onclose = (event) => resolve(`closed ${event.code}`);
  })),
);
const answered = times.filter((time) => typeof time === "number");
console.log(`${answered.length} of ${clients} answered, the last after ${Math.max(...answered)} ms; ` +
  `server peak RSS ${Math.round(peak() / 1024)} MB`);
server.kill();
rmSync(home, { recursive: true, force: true });
