"""How much a model can read: its window, where that figure came from, and counting.

A prompt must fit the window with room left for the answer. The window is, in order:
`[llm] max_input_tokens` (OpenHands' meaning), litellm's model information, what an
OpenAI-compatible server reports about the model it serves (llama.cpp, vLLM, LM Studio,
Ollama), else `DEFAULT_WINDOW`. Tokens are counted with litellm's tokenizer for the
model; for a model litellm does not know, that count is a guess (another tokenizer), so
a margin is added, and the margin grows when a server reports more prompt tokens than
were counted (`Window.learn`).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from condense_cli.llm.settings import LLMSettings

DEFAULT_WINDOW = 4096  # tokens: what nearly every model served today can read
DEFAULT_ANSWER = 1024  # tokens kept for the answer when max_output_tokens is not set
KNOWN_MARGIN = 1.05  # the model's own tokenizer: a little room for the chat template
GUESSED_MARGIN = 1.3  # another model's tokenizer: room for a less efficient one
TEMPLATE_TOKENS = 64  # a chat template's own tokens around the messages
SERVER_TIMEOUT = 3.0  # seconds to wait for a server's model list
SERVER_KEYS = ("max_model_len", "context_length", "max_context_length", "n_ctx", "n_ctx_train")


@dataclass
class Window:
    """A model's window, where the figure came from, and how its tokens are counted."""

    model: str
    tokens: int
    source: str  # "max_input_tokens", "litellm", "the server", "the default"
    answer: int  # tokens kept for the answer
    margin: float
    known: bool  # litellm knows the model's tokenizer
    counted: dict[str, int] = field(default_factory=dict)

    @property
    def prompt_budget(self) -> int:
        """Tokens a prompt may take, counted by `count`."""
        return self.tokens - self.answer - TEMPLATE_TOKENS

    def count(self, text: str) -> int:
        """Tokens of `text` with the margin: never fewer than the model will see."""
        raw = self.counted.get(text)
        if raw is None:
            raw = _litellm_count(self.model, text)
            if len(self.counted) < 10_000:
                self.counted[text] = raw
        return int(raw * self.margin) + 1

    def learn(self, counted: int, reported: int) -> None:
        """A server reported `reported` prompt tokens for a prompt counted as `counted`
        (margin included): widen the margin when the count fell short."""
        if counted > 0 and reported > counted:
            self.margin *= reported / counted * 1.05

    def describe(self) -> str:
        return f"a window of {self.tokens:,} tokens ({self.source})"


def window_of(settings: LLMSettings) -> Window:
    """The window of the model `settings` names (see the module doc)."""
    known_tokens = _litellm_window(settings.model)
    known = known_tokens is not None
    answer = settings.max_output_tokens or DEFAULT_ANSWER
    margin = KNOWN_MARGIN if known else GUESSED_MARGIN
    if settings.max_input_tokens is not None:
        tokens, source = settings.max_input_tokens, "max_input_tokens"
    elif known_tokens is not None:
        tokens, source = known_tokens, "litellm"
    else:
        served = server_window(settings)
        tokens, source = (served, "the server") if served else (DEFAULT_WINDOW, "the default")
    answer = min(answer, max(64, tokens // 4))
    return Window(settings.model, tokens, source, answer, margin, known)


def _litellm_window(model: str) -> int | None:
    from condense_cli.llm.client import litellm_module

    try:
        info = litellm_module().get_model_info(model)
    except Exception:
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return value if isinstance(value, int) and value > 0 else None


def _litellm_count(model: str, text: str) -> int:
    from condense_cli.llm.client import litellm_module

    return int(litellm_module().token_counter(model=model, text=text))


def server_window(settings: LLMSettings) -> int | None:
    """The window an OpenAI-compatible server reports for the model it serves: in its
    model list (vLLM, LM Studio, llama.cpp) or in llama.cpp's `/props`."""
    if not settings.base_url:
        return None
    base = settings.base_url.rstrip("/")
    wanted = settings.model.split("/", 1)[-1]
    listing = _get_json(f"{base}/models", settings)
    entries = listing.get("data") if isinstance(listing, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") in (wanted, settings.model, None):
            found = _window_field(entry)
            if found:
                return found
    if isinstance(entries, list) and len(entries) == 1 and isinstance(entries[0], dict):
        found = _window_field(entries[0])
        if found:
            return found
    props = _get_json(f"{base.removesuffix('/v1')}/props", settings)
    if isinstance(props, dict):
        return _window_field(props.get("default_generation_settings") or props)
    return None


def _window_field(entry: Any) -> int | None:
    """The first window-like figure in a model entry (or its `meta`)."""
    if not isinstance(entry, dict):
        return None
    for place in (entry, entry.get("meta")):
        if isinstance(place, dict):
            for key in SERVER_KEYS:
                value = place.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None


def _get_json(url: str, settings: LLMSettings) -> Any:
    """GET `url` as JSON, or None (no server there, no such route, not JSON)."""
    request = urllib.request.Request(url, headers=_auth(settings))
    try:
        with urllib.request.urlopen(request, timeout=SERVER_TIMEOUT) as response:
            return json.loads(response.read(1 << 20))
    except (OSError, ValueError, urllib.error.URLError):
        return None


def _auth(settings: LLMSettings) -> dict[str, str]:
    try:
        key = settings.resolved_api_key()
    except Exception:
        key = None
    return {"Authorization": f"Bearer {key}"} if key else {}
