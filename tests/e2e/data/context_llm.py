#!/usr/bin/env python3
"""A stand-in for a vLLM server with a context limit, for the e2e tests.

usage: context_llm.py CONTEXT_TOKENS ADVERTISE(0|1) REPLY_FILE LOG_FILE PORT_FILE
Serves 127.0.0.1 on a free port (written to PORT_FILE). GET /v1/models lists one model, with
max_model_len when ADVERTISE is 1. POST /v1/chat/completions: a request whose messages
(bytes / 4) plus max_tokens exceed CONTEXT_TOKENS is answered 400 in vLLM's words; any other
gets REPLY_FILE's text. Each POST appends "max_tokens STATUS" to LOG_FILE and its JSON body
as one line to LOG_FILE.requests."""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONTEXT, ADVERTISE = int(sys.argv[1]), sys.argv[2] == "1"
REPLY, LOG, PORT_FILE = sys.argv[3], sys.argv[4], sys.argv[5]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        model = {"id": "m", "object": "model"}
        if ADVERTISE:
            model["max_model_len"] = CONTEXT
        if self.path == "/v1/models":
            self.send(200, {"object": "list", "data": [model]})
        else:
            self.send(404, {"error": {"message": "no route"}})

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = sum(len(m.get("content", "")) for m in req["messages"]) // 4
        asked = int(req.get("max_tokens", 0))
        status = 400 if prompt + asked > CONTEXT else 200
        with open(LOG, "a") as f:
            f.write(f"{asked} {status}\n")
        with open(LOG + ".requests", "a") as f:
            f.write(json.dumps(req) + "\n")
        if status == 400:
            self.send(400, {"object": "error", "code": 400, "type": "BadRequestError",
                            "message": f"This model's maximum context length is {CONTEXT} "
                                       f"tokens. However, you requested {prompt + asked} tokens "
                                       f"({prompt} in the messages, {asked} in the completion)."})
            return
        with open(REPLY) as f:
            text = f.read()
        self.send(200, {"id": "c", "object": "chat.completion", "model": "m",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": prompt, "completion_tokens": len(text) // 4}})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
