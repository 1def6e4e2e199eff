"""What the `serve` attack scripts share: a loopback Chat Completions mock, a temporary home whose
settings point at it, `ctxkit serve --stdio` started there with no provider keys in its
environment, its peak RSS watched, and requests written to it."""

import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time


class Serve:
    """`ctxkit serve --stdio` in a temporary home, with `handler` as the model's endpoint."""

    def __init__(self, binary, handler, llm_settings=None):
        self.model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.model.serve_forever, daemon=True).start()
        self.home = tempfile.mkdtemp()
        self.project = os.path.join(self.home, "project")
        os.makedirs(self.project)
        llm = {"api": "openai-completions", "apiKey": "mock-key",
               "baseUrl": f"http://127.0.0.1:{self.model.server_address[1]}/v1",
               "models": [{"provider": "mock", "id": "coder", "contextWindow": 400_000_000,
                           "maxOutput": 2048}]}
        llm.update(llm_settings or {})
        settings = {"defaultProvider": "mock", "defaultModel": "mock/coder", "llm": llm}
        with open(os.path.join(self.home, "settings.json"), "w") as file:
            json.dump(settings, file)
        env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
        env.update({"CTXKIT_HOME": self.home})
        self.process = subprocess.Popen([binary, "serve", "--stdio"], cwd=self.project, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.peak_mb = 0
        self._done = threading.Event()
        threading.Thread(target=self._watch_memory, daemon=True).start()

    def _watch_memory(self):
        while not self._done.is_set():
            try:
                with open(f"/proc/{self.process.pid}/status") as status:
                    for line in status:
                        if line.startswith("VmHWM:"):
                            self.peak_mb = max(self.peak_mb, int(line.split()[1]) // 1024)
            except OSError:
                return
            time.sleep(0.2)

    def send(self, identifier, method, params):
        request = {"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()

    def stop(self, identifier):
        """Asks the server to shut down, waits for it and removes the temporary home."""
        self.send(identifier, "shutdown", {})
        self.process.stdin.close()
        self.process.wait()
        self._done.set()

    def remove_home(self):
        shutil.rmtree(self.home)


def answer_chat_chunk(handler, delta, finish):
    """Answers a Chat Completions request with one streamed chunk (`delta`, `finish_reason`), then
    `[DONE]`: the whole reply of the loopback mock models the tiny_* scripts start."""
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    answer = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("content-length", str(len(answer)))
    handler.end_headers()
    handler.wfile.write(answer)
