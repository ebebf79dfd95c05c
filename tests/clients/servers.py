"""Scripted model servers on 127.0.0.1 for the real Claude Code, Codex and Gemini clients.

`AnthropicServer` speaks the Messages API (`POST /v1/messages`, streamed as SSE
when the client asks for it, plus `count_tokens`); `OpenAIServer` speaks the
Responses API (`POST /v1/responses`, streamed as SSE). Each records every
request it receives (method, path, headers, parsed JSON body) and answers model
calls from a script of texts, falling back to `default`. Any other path gets a
404 and is recorded too, so a test can see what else a client tried to reach.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    """One request a client sent."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None


# a text, or (for the Responses API) a whole output item; a list: (for the Messages
# API) one answer of several content blocks
Reply = str | dict[str, Any] | list[dict[str, Any]]


@dataclass
class _State:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


class _QuietServer(ThreadingHTTPServer):
    """Clients drop keep-alive connections at exit; that is not an error worth printing."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class ScriptedServer:
    """A threaded HTTP server on a random port of 127.0.0.1; subclasses answer model calls."""

    default = "ok"

    def __init__(self) -> None:
        self.state = _State()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = Request(self.command, self.path, dict(self.headers), body)
                with server.state.lock:
                    server.state.requests.append(request)
                status, content_type, payload = server.answer(request)
                try:
                    self.send_response(status)
                    for name, value in server.headers(request).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_CONNECT = _handle

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[Request]:
        with self.state.lock:
            return list(self.state.requests)

    def reply(self, *answers: Reply) -> ScriptedServer:
        """Queue the next model answers, in order: texts, or output items (a tool call)."""
        self.state.replies.extend(answers)
        return self

    def next_reply(self) -> Reply:
        with self.state.lock:
            return self.state.replies.popleft() if self.state.replies else self.default

    def next_item(self) -> str | dict[str, Any]:
        """The next answer, a text or one item (not an answer of several blocks)."""
        answer = self.next_reply()
        if isinstance(answer, list):
            raise TypeError(f"this server answers one item at a time, not {answer!r}")
        return answer

    def next_text(self) -> str:
        answer = self.next_reply()
        if not isinstance(answer, str):
            raise TypeError(f"this server answers with texts only, not {answer!r}")
        return answer

    def answer(self, request: Request) -> tuple[int, str, bytes]:
        return 404, "application/json", b'{"error": {"message": "not found"}}'

    def headers(self, request: Request) -> dict[str, str]:
        """Headers of the answer to `request`, besides its type and length."""
        return {}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _route(path: str) -> str:
    return path.split("?", 1)[0].rstrip("/")


class AnthropicServer(ScriptedServer):
    """The Messages API as Claude Code calls it: `/v1/messages` and `count_tokens`.
    With `request_ids`, each answer has a `request-id` header, as Anthropic's API
    sends (the client records it); without, none, as other gateways."""

    def __init__(self, request_ids: bool = False) -> None:
        super().__init__()
        self.request_ids = request_ids
        self.served: dict[str, Any] = {}  # usage fields every answer reports (speed, ...)

    def headers(self, request: Request) -> dict[str, str]:
        if self.request_ids and _route(request.path) == "/v1/messages":
            return {"request-id": f"req_scripted_{uuid.uuid4().hex}"}
        return {}

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of every `POST /v1/messages`, in order."""
        return [
            r.body for r in self.requests if r.method == "POST" and _route(r.path) == "/v1/messages"
        ]

    def answer(self, request: Request) -> tuple[int, str, bytes]:
        route = _route(request.path)
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "POST" and route == "/v1/messages/count_tokens":
            tokens = len(json.dumps(body)) // 4
            return 200, "application/json", json.dumps({"input_tokens": tokens}).encode()
        if request.method == "POST" and route == "/v1/messages":
            answer = self.next_reply()
            text = {"type": "text", "text": answer} if isinstance(answer, str) else answer
            blocks = text if isinstance(text, list) else [text]
            model = body.get("model", "claude-test")
            # every answer its own id, across servers too, as the real API's: the client
            # (and condense) group the lines of one response by it
            message = _anthropic_message(blocks, model, f"msg_scripted_{uuid.uuid4().hex}")
            message["usage"] |= self.served
            if body.get("stream"):
                return 200, "text/event-stream", _anthropic_stream(message)
            return 200, "application/json", json.dumps(message).encode()
        return super().answer(request)


def _stop_reason(block: dict[str, Any]) -> str:
    return "tool_use" if block.get("type") == "tool_use" else "end_turn"


def _anthropic_message(blocks: list[dict[str, Any]], model: str, id: str) -> dict[str, Any]:
    """A whole answer: its content blocks (texts, tool calls, thinking)."""
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": _stop_reason(blocks[-1]),
        "stop_sequence": None,
        "usage": {
            "input_tokens": 100,
            "output_tokens": max(1, sum(len(json.dumps(block)) for block in blocks) // 4),
        },
    }


def _anthropic_stream(message: dict[str, Any]) -> bytes:
    """The answer as the API streams it: its usage at the start says one output token,
    the final count comes with the last event."""
    blocks = message["content"]
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = message["usage"] | {"output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(blocks):
        if block.get("type") == "tool_use":
            empty = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        elif block.get("type") == "thinking":
            empty = {"type": "thinking", "thinking": "", "signature": ""}
            delta = {"type": "thinking_delta", "thinking": block["thinking"]}
        else:
            empty = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
        ]
        if block.get("type") == "thinking":
            signature = {"type": "signature_delta", "signature": block.get("signature", "")}
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": signature},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(blocks[-1]), "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(events)


class OpenAIServer(ScriptedServer):
    """The Responses API as Codex calls it, over HTTP only.

    A WebSocket upgrade is refused with 426, on which Codex falls back to HTTP
    at once (a 404 makes it retry five times first). A request whose input ends
    with a `compaction_trigger` item (Codex's remote compaction) is answered with
    one `compaction` item whose `encrypted_content` is the scripted text. Every
    answer reports `input_tokens` as its usage (set it high to make the client
    compact at its next turn).
    """

    input_tokens = 100

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of every `POST /v1/responses`, in order."""
        return [
            r.body
            for r in self.requests
            if r.method == "POST" and _route(r.path) == "/v1/responses"
        ]

    def answer(self, request: Request) -> tuple[int, str, bytes]:
        route = _route(request.path)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return 426, "application/json", b'{"error": {"message": "use HTTP"}}'
        if request.method == "POST" and route == "/v1/responses":
            body = request.body if isinstance(request.body, dict) else {}
            items = body.get("input") or [{}]
            if items[-1].get("type") == "compaction_trigger":
                item = {
                    "type": "compaction",
                    "id": "cmp_scripted",
                    "encrypted_content": self.next_text(),
                }
                return 200, "text/event-stream", _responses_stream(item, self.input_tokens)
            answer = self.next_item()
            item = _message(answer) if isinstance(answer, str) else answer
            return 200, "text/event-stream", _responses_stream(item, self.input_tokens)
        return super().answer(request)


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_scripted",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _responses_stream(item: dict[str, Any], input_tokens: int) -> bytes:
    text = "".join(c.get("text", "") for c in item.get("content", []))
    tokens = max(1, len(text) // 4)
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + tokens,
    }
    response = {"id": "resp_scripted", "object": "response", "status": "in_progress"}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": response}),
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ),
    ]
    if text:
        delta = {
            "type": "response.output_text.delta",
            "item_id": item["id"],
            "output_index": 0,
            "content_index": 0,
            "delta": text,
        }
        events.append(("response.output_text.delta", delta))
    events += [
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "usage": usage},
            },
        ),
    ]
    return _sse(events)


class GeminiServer(ScriptedServer):
    """The Gemini API as Gemini CLI calls it (`GOOGLE_GEMINI_BASE_URL`):
    `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` for a turn, answered
    from the script (a text, or a `{"functionCall": ...}` part), and
    `:generateContent` for the client's own side calls (routing, next speaker),
    answered with `side_answer`. Every answer reports `prompt_tokens` as its usage."""

    prompt_tokens = 100
    side_answer = '{"reasoning": "scripted", "model_choice": "pro", "next_speaker": "user"}'

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of every turn (`streamGenerateContent`), in order."""
        return [
            r.body
            for r in self.requests
            if r.method == "POST" and _route(r.path).endswith(":streamGenerateContent")
        ]

    def answer(self, request: Request) -> tuple[int, str, bytes]:
        route = _route(request.path)
        if request.method != "POST" or not route.startswith("/v1beta/models/"):
            return super().answer(request)
        if route.endswith(":streamGenerateContent"):
            answer = self.next_item()
            part = {"text": answer} if isinstance(answer, str) else answer
            chunk = _gemini_response(part, self.prompt_tokens)
            return 200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode()
        if route.endswith(":generateContent"):
            body = _gemini_response({"text": self.side_answer}, self.prompt_tokens)
            return 200, "application/json", json.dumps(body).encode()
        return super().answer(request)


def _gemini_response(part: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
    text = part.get("text", "")
    tokens = max(1, len(text) // 4)
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": tokens,
            "totalTokenCount": prompt_tokens + tokens,
        },
        "modelVersion": "scripted",
    }
