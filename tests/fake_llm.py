"""A small OpenAI-compatible chat-completions server on 127.0.0.1, scripted per test.

`GET /v1/models` reports the model's window (`window`, as vLLM does). Each POST to
`/v1/chat/completions` takes the next scripted reply (text, tool
call, JSON, an error status, a slow answer or a malformed body) and is recorded,
so tests can assert on the prompt that litellm actually sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int
    body: bytes
    delay: float = 0.0
    echo: tuple[str, ...] = ()  # request headers to quote in the body (`{headers}`)


def completion(
    message: dict[str, Any], prompt_tokens: int = 120, completion_tokens: int = 40
) -> bytes:
    """An OpenAI chat completion body holding `message`."""
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", **message},
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    ).encode()


class FakeLLM:
    """The server, its script of replies, and the requests it received."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.always: Reply | None = None  # the reply once the script runs out (`forever`)
        self.requests: list[dict[str, Any]] = []
        # What `GET /v1/models` reports as the model's window (as vLLM does), or None
        # for a server that says nothing of it (a 404, as many proxies answer).
        self.window: int | None = 1_000_000
        self.gets: list[str] = []
        self.paths: list[str] = []
        self.in_flight = self.most_in_flight = 0  # completions answered at once
        lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.gets.append(self.path)
                if self.path.rstrip("/") == "/v1/models" and fake.window is not None:
                    entry = {"id": "test-model", "object": "model", "max_model_len": fake.window}
                    body = json.dumps({"object": "list", "data": [entry]}).encode()
                    self.send_response(200)
                else:
                    body = b'{"error": {"message": "not found"}}'
                    self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                with lock:
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                try:
                    self.answer()
                finally:
                    with lock:
                        fake.in_flight -= 1

            def answer(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                fake.paths.append(self.path)
                fake.requests.append(json.loads(raw or b"{}"))
                reply = (
                    fake.replies.popleft()
                    if fake.replies
                    else fake.always or Reply(500, b'{"error": {"message": "no reply scripted"}}')
                )
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.body
                if reply.echo:
                    quoted = ", ".join(f"{h}: {self.headers.get(h)}" for h in reply.echo)
                    body = body.replace(b"{headers}", quoted.encode())
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- scripting ---------------------------------------------------------------

    def text(self, content: str, **usage: int) -> FakeLLM:
        self.replies.append(Reply(200, completion({"content": content}, **usage)))
        return self

    def tool_call(self, name: str, arguments: dict[str, Any] | str) -> FakeLLM:
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}
        self.replies.append(Reply(200, completion({"content": None, "tool_calls": [call]})))
        return self

    def json(self, value: Any) -> FakeLLM:
        return self.text(json.dumps(value))

    def status(self, code: int, message: str = "scripted failure") -> FakeLLM:
        body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
        self.replies.append(Reply(code, body))
        return self

    def echo_headers(self, code: int, *headers: str) -> FakeLLM:
        """An error whose message quotes request headers, as some proxies do."""
        message = "rejected request with {headers}"
        body = json.dumps({"error": {"message": message, "type": "auth_error"}}).encode()
        self.replies.append(Reply(code, body, echo=headers))
        return self

    def slow(self, seconds: float, content: str = "late") -> FakeLLM:
        self.replies.append(Reply(200, completion({"content": content}), delay=seconds))
        return self

    def malformed(self, body: bytes = b"this is not json") -> FakeLLM:
        self.replies.append(Reply(200, body))
        return self

    def forever(self) -> FakeLLM:
        """The reply scripted last answers every request from now on."""
        self.always = self.replies.pop()
        return self

    # --- reading what was sent ----------------------------------------------------

    def prompt(self, index: int = -1) -> str:
        """All message texts of request `index`, joined."""
        messages = self.requests[index]["messages"]
        return "\n".join(str(m.get("content") or "") for m in messages)
