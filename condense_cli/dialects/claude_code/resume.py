"""What Claude Code does with a session when it resumes it, beyond the active chain
(measured against the real client, 2.1.330; the repairs of unanswered calls are in
`claude_code.messages`).

- **Auto-compaction on resume.** The client counts the context of the last response
  (its `usage`: input, cache read and written, and output tokens), adds what it puts
  in on resume (the new prompt and its own reminders), and when that reaches the
  model's window less `RESUME_MARGIN` it compacts the session before it sends
  anything else. Measured: 177,000 for a 200k window (`claude-sonnet-4-5`), 977,000
  for a 1M window (`claude-opus-5-5`, the client's default model); what it adds was
  up to `RESUME_ADDS` (a session with a tool call compacted from 967,000), so below
  the threshold by less than that the client may compact. `DISABLE_AUTO_COMPACT` or
  `DISABLE_COMPACT` in the environment turns it off. The responses `condense run`
  copied after its boundary keep their old `usage`, which the client does not go by
  (measured: a session over the threshold, condensed, resumes without compacting):
  condense skips them too.
- **Records it no longer applies.** A `system/microcompact_boundary` (older clients
  cleared old tool results in the request and recorded which) is passed over: the
  results are sent in full. A `content-replacement` record (a tool result the client
  swapped for a shorter one) is not applied either, unless the client's own
  server-side flag turns that feature on. Both are notes for `check`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from condense_cli.core.events import Problem
from condense_cli.core.jsonlines import as_dict
from condense_cli.core.text import plural
from condense_cli.dialects.base import Threshold

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.dialects.claude_code.events import ClaudeEvent
    from condense_cli.dialects.claude_code.lines import Line

CLIENT = "Claude Code 2.1.330"
RESUME_MARGIN = 23_000  # window less this is where the client compacts on resume
# Before 2.1.330 (2.1.112 and 2.1.121 in the corpus) the margin was the published
# 13,000-token buffer plus 20,000 reserved for the answer: 167,000 for 200k.
OLD_MARGIN = 33_000
MARGIN_SINCE = (2, 1, 330)
RESUME_ADDS = 10_000  # what the client adds to the last response's context on resume, at most
WINDOW = 200_000
LONG_WINDOW = 1_000_000
# The model families the client gives a 1M window by default (and any `[1m]` name).
LONG_WINDOW_MODELS = ("claude-opus-5", "claude-sonnet-5", "claude-fable-5")
OFF_SWITCHES = ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT")
SYNTHETIC_MODEL = "<synthetic>"  # the model of the replies the client writes itself
MICROCOMPACT = "microcompact_boundary"
REPLACEMENT = "content-replacement"
# The settings a `settings.json` may lower the threshold with (read off 2.1.330).
AUTO_WINDOW = "autoCompactWindow"
MIN_AUTO_WINDOW = 100_000
WINDOW_VARIABLE = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
PCT_VARIABLE = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
ANSWER_ROOM = 20_000  # the window less this is what the percent applies to


def model_window(model: str) -> int:
    """The context window the client gives `model` by default."""
    if "[1m]" in model or model.startswith(LONG_WINDOW_MODELS):
        return LONG_WINDOW
    return WINDOW


def usage_tokens(usage: Mapping[str, Any]) -> int:
    """The context a response's `usage` says it took, as the client adds it up."""
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    total = sum(v for k in keys if isinstance(v := usage.get(k), int))
    output = usage.get("output_tokens")
    return total + (output if isinstance(output, int) else 0)


@dataclass(frozen=True)
class ResumeCompaction:
    """Where the session stands against the client's auto-compact threshold."""

    line: int | None  # the last response's line
    model: str
    context_tokens: int
    window: int
    threshold: int | None  # None: auto-compaction is off in this environment
    off_by: str | None = None  # the variable that turned it off

    @property
    def over(self) -> bool:
        """The client compacts as soon as it resumes."""
        return self.threshold is not None and self.context_tokens >= self.threshold

    @property
    def near(self) -> bool:
        """The client may compact as soon as it resumes (what it adds may tip it over)."""
        return self.threshold is not None and self.context_tokens >= self.threshold - RESUME_ADDS

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "model": self.model,
            "context_tokens": self.context_tokens,
            "window": self.window,
            "threshold": self.threshold,
            "compacts_on_resume": self.over,
            "may_compact_on_resume": self.near,
            "says": self.describe(),
        }

    def describe(self) -> str:
        """One sentence for people."""
        where = f"the last response (line {self.line}, {self.model})"
        if self.threshold is None:
            return (
                f"{where} used {self.context_tokens:,} tokens of context; auto-compaction "
                f"is off here ({self.off_by} is set)"
            )
        rule = f"{self.window:,}-token window less {RESUME_MARGIN:,}"
        if self.over:
            return (
                f"{where} used {self.context_tokens:,} tokens of context, "
                f"{self.context_tokens - self.threshold:,} over the point (about "
                f"{self.threshold:,}) where {CLIENT} compacts ({rule}): the client will "
                "compact the session as soon as it resumes, before anything else is sent"
            )
        away = f"{self.threshold - self.context_tokens:,} below the point ({self.threshold:,})"
        if self.near:
            return (
                f"{where} used {self.context_tokens:,} tokens of context, {away} where "
                f"{CLIENT} compacts ({rule}): what the client adds on resume (its prompt and "
                f"reminders, up to about {RESUME_ADDS:,}) may make it compact the session "
                "before anything else is sent"
            )
        used = f"{where} used {self.context_tokens:,} tokens of context"
        return f"{used}, {away} where {CLIENT} compacts ({rule})"


def margin_for(version: Any) -> int:
    """The window less this is where a client of `version` compacts."""
    try:
        parts = tuple(int(p) for p in str(version).split(".")[:3])
    except ValueError:
        return RESUME_MARGIN
    return RESUME_MARGIN if parts >= MARGIN_SINCE else OLD_MARGIN


def last_model(lines: list[Line]) -> str | None:
    """The model that wrote the last of the messages of `lines` that a model wrote (None
    if none did); only the assistant lines from the end to that one are parsed."""
    return next(
        (
            str(m.get("model"))
            for x in reversed(lines)
            if x.type == "assistant"
            and (m := as_dict(x.parse().get("message"))).get("model") not in (None, SYNTHETIC_MODEL)
        ),
        None,
    )


def compaction_threshold(
    meta: dict[str, Any],
    version: Any,
    model: str | None,
    client: ClientConfig | None = None,
) -> Threshold | None:
    """A compaction against the client's threshold: its `preTokens` against the
    window of `model` (the one that answered last before it), less the margin of the
    client version that wrote it, or as the settings file `client` sets it; a `/compact`
    (`trigger: manual`) has none."""
    pre = meta.get("preTokens")
    if not isinstance(pre, int) or isinstance(pre, bool):
        return None
    if model is None:
        return None
    window, margin = model_window(model), margin_for(version)
    threshold = window - margin
    source = f"the {window:,}-token window of {model} less {margin:,} (Claude Code {version})"
    if client is not None:
        threshold, source = configured(client, model, window, margin)
    manual = meta.get("trigger") == "manual"
    return Threshold("tokens", pre, threshold, source, RESUME_ADDS, manual)


def configured(client: ClientConfig, model: str, window: int, margin: int) -> tuple[int, str]:
    """The threshold a settings file gives `model` (default `window` less `margin`):
    its `autoCompactWindow` (per model in `modelSettings`, else the top-level one, or
    `CLAUDE_CODE_AUTO_COMPACT_WINDOW` in its `env`) lowers the window, and
    `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` compacts at that percent of the window less the
    answer's room, when that is lower."""
    env = client.table("env")
    per_model = next(
        (
            as_dict(v).get(AUTO_WINDOW)
            for k, v in client.table("modelSettings").items()
            if model.startswith(k) and as_dict(v).get(AUTO_WINDOW) != "auto"
        ),
        None,
    )
    asked = per_model if per_model is not None else client.data.get(AUTO_WINDOW)
    if asked == "auto":
        asked = None
    asked = client.number(asked, AUTO_WINDOW, least=MIN_AUTO_WINDOW)
    if asked is None:
        asked = client.number(env.get(WINDOW_VARIABLE), WINDOW_VARIABLE)
    said = []
    if asked is not None and asked < window:
        window = asked
        said.append(f"{AUTO_WINDOW} {asked:,}")
    threshold = window - margin
    try:  # the client goes by a number in (0, 100] and ignores anything else
        percent = float(str(env.get(PCT_VARIABLE, "")))
    except ValueError:
        percent = 0.0
    if 0 < percent <= 100:
        threshold = min(threshold, int((window - ANSWER_ROOM) * percent / 100))
        said.append(f"{PCT_VARIABLE}={env[PCT_VARIABLE]}")
    how = ", ".join(said) if said else "no compaction setting"
    return threshold, f"{client.path} ({how}): {window:,}-token window of {model}"


def resume_compaction(
    events: Iterable[ClaudeEvent], environ: Mapping[str, str] | None = None
) -> ResumeCompaction | None:
    """The client's auto-compaction check on resume, for the view `events` (None
    when no response in the view says what context it took)."""
    environ = os.environ if environ is None else environ
    last: ClaudeEvent | None = None
    for event in reversed(list(events)):  # the newest first: only the last ones are parsed
        line = event.read_from
        if (line.type if line is not None else event.data.get("type")) != "assistant":
            continue
        if event.is_summary or event.copy_of:
            continue  # (a copy `condense run` wrote carries a usage from before it)
        message = as_dict(event.data.get("message"))
        if message.get("model") != SYNTHETIC_MODEL and isinstance(message.get("usage"), dict):
            last = event
            break
    if last is None:
        return None
    message = as_dict(last.data.get("message"))
    model = str(message.get("model") or "")
    tokens = usage_tokens(as_dict(message.get("usage")))
    window = model_window(model)
    off = next((name for name in OFF_SWITCHES if _truthy(environ.get(name))), None)
    threshold = None if off else window - RESUME_MARGIN
    return ResumeCompaction(last.line, model, tokens, window, threshold, off)


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Microcompaction:
    """A `microcompact_boundary` an older client wrote: old tool results it cleared."""

    line: int
    trigger: str | None
    pre_tokens: int | None
    tokens_saved: int | None
    tool_ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "tokens_saved": self.tokens_saved,
            "tool_results": len(self.tool_ids),
        }


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def microcompactions(lines: Iterable[Line]) -> list[Microcompaction]:
    """The session's microcompaction records, in order."""
    found = []
    for line in lines:
        data = line.parse() if line.type == "system" else None
        if data is None or data.get("subtype") != MICROCOMPACT:
            continue
        meta = as_dict(data.get("microcompactMetadata"))
        ids = meta.get("compactedToolIds")
        trigger = meta.get("trigger")
        found.append(
            Microcompaction(
                line.number,
                trigger if isinstance(trigger, str) else None,
                _int(meta.get("preTokens")),
                _int(meta.get("tokensSaved")),
                tuple(str(x) for x in ids) if isinstance(ids, list) else (),
            )
        )
    return found


def client_figures(lines: Iterable[Line], events: list[ClaudeEvent]) -> dict[str, Any]:
    """`stats`' figures on what the client does beyond the view."""
    compaction = resume_compaction(events)
    return {
        "microcompactions": [m.to_json() for m in microcompactions(lines)],
        "resume_compaction": compaction.to_json() if compaction is not None else None,
    }


def resume_notes(lines: Iterable[Line], events: list[ClaudeEvent]) -> list[Problem]:
    """`check`'s notes and warnings on what the client does when it resumes."""
    problems: list[Problem] = []
    lines = list(lines)
    for micro in microcompactions(lines):
        cleared = plural(len(micro.tool_ids), "tool result")
        problems.append(
            Problem(
                micro.line,
                f"microcompaction ({cleared} cleared from the requests then): {CLIENT} does "
                "not clear them again when it resumes; the view has them in full",
                "note",
            )
        )
    for line in lines:
        if line.type == REPLACEMENT:
            count = len(line.data.get("replacements") or [])
            problems.append(
                Problem(
                    line.number,
                    f"content replacement of {plural(count, 'tool result')}: {CLIENT} does not "
                    "apply it when it resumes (unless its server-side flag turns that on); "
                    "the view keeps the original results",
                    "note",
                )
            )
    compaction = resume_compaction(events)
    if compaction is not None and compaction.near:
        problems.append(Problem(compaction.line, compaction.describe(), "warning"))
    return problems
