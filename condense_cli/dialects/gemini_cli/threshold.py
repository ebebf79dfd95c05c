"""When Gemini CLI compresses a session: before a request, once the last prompt the
model answered held at least a share of the model's window (`model.compressionThreshold`
in its `settings.json`, 0.5 by default). The count starts afresh with every run, so
the client never compresses as a resumed session's first request goes out."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from condense_cli.dialects.reports import Threshold

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig

CLIENT = "Gemini CLI 0.61.0"
SHARE_KEY = "model.compressionThreshold"
DEFAULT_SHARE = 0.5
WINDOW = 1_048_576  # every Gemini model the client names, and any it does not
WINDOWS = {"gemma-4-31b-it": 256_000, "gemma-4-26b-a4b-it": 256_000}


def window_of(model: str | None) -> int:
    return WINDOWS.get(model or "", WINDOW)


def share_of(client: ClientConfig | None) -> tuple[float, str]:
    """The share of the window and where it comes from: `client` (a settings.json
    named with --client-config), else the user's `~/.gemini/settings.json`."""
    if client is not None:
        data, where = client.data, client.path
    else:
        path = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini" / "settings.json"
        data, where = _settings(path), str(path)
    model = data.get("model") if isinstance(data, dict) else None
    share = model.get("compressionThreshold") if isinstance(model, dict) else None
    if isinstance(share, int | float) and not isinstance(share, bool) and 0 < share <= 1:
        return float(share), f"{SHARE_KEY} {share:g} in {where}"
    return DEFAULT_SHARE, f"{CLIENT}'s default share {DEFAULT_SHARE:g}"


def _settings(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class Standing:
    """Where the session's last prompt stands against the client's compression."""

    line: int | None
    prompt_tokens: int
    threshold: int
    source: str

    @property
    def over(self) -> bool:
        return self.prompt_tokens >= self.threshold

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "context_tokens": self.prompt_tokens,
            "threshold": self.threshold,
            "compacts_on_resume": False,
            "may_compact_on_resume": False,
            "says": self.describe(),
        }

    def describe(self) -> str:
        held = f"{self.prompt_tokens:,} tokens"
        used = f"the last response (line {self.line}) says its prompt held {held}"
        if self.over:
            where = f"{self.prompt_tokens - self.threshold:,} over the {self.threshold:,}"
        else:
            where = f"{self.threshold - self.prompt_tokens:,} below the {self.threshold:,}"
        return (
            f"{used}, {where} at which {CLIENT} compresses ({self.source}); it compresses "
            "before a request only once a prompt of the same run passed it, never as it resumes"
        )


def standing(
    model: str | None, tokens: int | None, line: int | None, client: ClientConfig | None
) -> Standing | None:
    if tokens is None:
        return None
    share, said = share_of(client)
    window = window_of(model)
    threshold = int(share * window)
    return Standing(
        line, tokens, threshold, f"{said} of {model or 'the model'}'s {window:,}-token window"
    )


def compression_threshold(
    model: str | None, tokens: int | None, client: ClientConfig | None
) -> Threshold | None:
    """A compression against the threshold: one below it was asked for (`/compress`)."""
    found = standing(model, tokens, None, client)
    if found is None:
        return None
    manual = found.prompt_tokens < found.threshold
    # the client checks only before a request: any prompt past the threshold is
    # where its rule fires, so a compression after one fired "at" it
    past = max(0, found.prompt_tokens - found.threshold)
    return Threshold(
        "tokens", found.prompt_tokens, found.threshold, found.source, past, manual=manual
    )
