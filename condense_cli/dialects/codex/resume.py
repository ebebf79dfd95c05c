"""What Codex does with a rollout when it resumes it, beyond the history (measured
against the real client, 0.169.0; the "aborted" output it sends for a call left
without one is in `codex.messages`).

**Auto-compaction on resume.** Codex takes the context size from the last
`token_count` event (`info.last_token_usage.total_tokens`) and, when it reaches the
auto-compact limit, compacts the thread before it sends the new prompt. The limit is
90% of the model's full window (`info.model_context_window` is 95% of it: 244,800
for the 258,400 a 272k model reports), or `model_auto_compact_token_limit` from the
`config.toml` of the Codex home the rollout sits in when that is lower.

After its own compaction Codex writes a `token_count` whose `last_token_usage` is
zero but for `total_tokens`, its estimate of the new context; `condense run` does the
same (`after_compaction`), or Codex would compact the condensed thread again at once.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from condense_cli.core.jsonlines import as_dict
from condense_cli.dialects.reports import Threshold

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig

CLIENT = "Codex 0.171.0"  # the rule below held from 0.169.0 on
USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)
LIMIT_KEY = "model_auto_compact_token_limit"
WINDOW_KEY = "model_context_window"
TOLERANCE = 10_000  # a compaction this close to the limit fired at it (a turn's growth)
MAX_OVERHEAD = 32_000  # tokens of instructions and tools (Codex's own: about 16,000)


def default_limit(context_window: int) -> int:
    """Codex's own limit for a model whose `model_context_window` it reports: 90% of
    the full window, which it reports at 95%."""
    return context_window * 18 // 19


def configured_limit(rollout: str) -> tuple[int, str] | None:
    """`model_auto_compact_token_limit` from the Codex home the rollout sits in
    (`<home>/sessions/YYYY/MM/DD/rollout-*.jsonl`), and that config's path."""
    path = Path(rollout).resolve()
    for folder in path.parents:
        if folder.name in ("sessions", "archived_sessions"):
            config = folder.parent / "config.toml"
            try:
                value = tomllib.loads(config.read_text(encoding="utf-8")).get(LIMIT_KEY)
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value, str(config)
            return None
    return None


@dataclass(frozen=True)
class ResumeCompaction:
    """Where the rollout stands against Codex's auto-compact limit."""

    line: int | None  # the last token_count's line
    context_tokens: int
    limit: int
    source: str  # where the limit comes from

    @property
    def over(self) -> bool:
        """Codex compacts as soon as it resumes."""
        return self.context_tokens >= self.limit

    near = over  # Codex adds nothing before it compares

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "context_tokens": self.context_tokens,
            "threshold": self.limit,
            "compacts_on_resume": self.over,
            "may_compact_on_resume": self.over,
            "says": self.describe(),
        }

    def describe(self) -> str:
        where = f"the last token count (line {self.line})"
        used = f"{where} says the context holds {self.context_tokens:,} tokens"
        if self.over:
            return (
                f"{used}, {self.context_tokens - self.limit:,} over the {self.limit:,} at "
                f"which {CLIENT} compacts ({self.source}): the client will compact the "
                "thread as soon as it resumes, before the new prompt is sent"
            )
        below = f"{self.limit - self.context_tokens:,} below the {self.limit:,}"
        return f"{used}, {below} at which {CLIENT} compacts ({self.source})"


def limit_of(
    path: str, info: dict[str, Any] | None, client: ClientConfig | None = None
) -> tuple[int, str] | None:
    """Codex's auto-compact limit for the rollout at `path` whose last token count
    says `info`, and where it comes from (None: nothing to go by). A settings file
    `client` (a Codex `config.toml`) replaces the Codex home's: its
    `model_context_window` is the model's full window, its limit applies when lower."""
    limits: list[tuple[int, str]] = []
    window = info.get("model_context_window") if info is not None else None
    full = client.number(client.data.get(WINDOW_KEY), WINDOW_KEY) if client else None
    if client is not None and full is not None:
        limits.append((full * 9 // 10, f"90% of {WINDOW_KEY} {full:,} in {client.path}"))
    elif isinstance(window, int) and window > 0:
        said = f"90% of the model's window of {window * 20 // 19:,}"
        limits.append((default_limit(window), said))
    if client is not None:
        limit = client.number(client.data.get(LIMIT_KEY), LIMIT_KEY)
        configured = (limit, client.path) if limit is not None else None
    else:
        configured = configured_limit(path)
    if configured is not None:
        limits.append((configured[0], f"{LIMIT_KEY} in {configured[1]}"))
    return min(limits) if limits else None


def compaction_threshold(
    path: str,
    info: dict[str, Any] | None,
    tokens_before: int | None,
    client: ClientConfig | None = None,
) -> Threshold | None:
    """A compaction against Codex's limit: the context its last token count gave."""
    limit = limit_of(path, info, client)
    if limit is None or tokens_before is None:
        return None
    return Threshold("tokens", tokens_before, limit[0], limit[1], TOLERANCE)


def resume_compaction(
    path: str, info: dict[str, Any] | None, line: int | None, client: ClientConfig | None = None
) -> ResumeCompaction | None:
    """Codex's auto-compaction check on resume (None: no token count to go by), under
    the settings file `client` when given (else the Codex home's)."""
    if info is None:
        return None
    tokens = as_dict(info.get("last_token_usage")).get("total_tokens")
    if not isinstance(tokens, int):
        return None
    found = limit_of(path, info, client)
    if found is None:
        return None
    limit, source = found
    return ResumeCompaction(line, tokens, limit, source)


def after_compaction(
    info: dict[str, Any], rate_limits: Any, before_tokens: int, before_bytes: int, after_bytes: int
) -> dict[str, Any]:
    """The `token_count` payload Codex writes after a compaction, for a condensed view:
    the usage totals kept, the last usage zero but for `total_tokens`, estimated as
    a token per four bytes of the new view plus the part of the old count that was
    not the view (instructions, tools), at most `MAX_OVERHEAD` (an estimate on the
    low side: the next response's usage corrects it, while one on the high side
    would make Codex compact again)."""
    overhead = min(MAX_OVERHEAD, max(0, before_tokens - before_bytes // 4))
    last = dict.fromkeys(USAGE_KEYS, 0) | {"total_tokens": overhead + after_bytes // 4}
    payload: dict[str, Any] = {"type": "token_count", "info": info | {"last_token_usage": last}}
    if rate_limits is not None:
        payload["rate_limits"] = rate_limits
    return payload
