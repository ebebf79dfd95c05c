"""What Claude Code does with a session when it resumes it, beyond the active chain
(measured against the real client, 2.1.330; the repairs of unanswered calls are in
`claude_code.messages`).

- **Auto-compaction on resume.** The client resumes on the model the session last
  ran on, counts the context of the last response (its `usage`: input, cache read and
  written, and output tokens), adds what it puts in on resume (the new prompt and its
  own reminders), and when that reaches the model's window less `RESUME_MARGIN` it
  compacts the session before it sends anything else. The window is the one the
  client's model catalog gives (`WINDOWS`, read off 2.1.330: 1M for the models that
  have it natively, such as `claude-opus-4-7`; 200k for the rest, which a user may
  raise to 1M with a `[1m]` model name that the session does not record). The log's
  evidence beats that default: a response in the view that used more than 200k
  tokens without a compaction proves the session ran with the 1M window. A model
  the catalog does not name has no known window: condense says "unknown" and makes
  no claim. Measured: 177,000 for a 200k window (`claude-sonnet-4-6`), 977,000 for
  1M (`claude-opus-5-5`, `claude-opus-4-7`, `claude-sonnet-4-6` resumed as
  `claude-sonnet-4-6[1m]`); what it adds was up to `RESUME_ADDS` (a session with a
  tool call compacted from 967,000), so below the threshold by less than that the
  client may compact. The user's settings move the threshold: `DISABLE_AUTO_COMPACT`
  or `DISABLE_COMPACT` turns it off, `CLAUDE_CODE_AUTO_COMPACT_WINDOW` or
  `autoCompactWindow` lowers the window, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` compacts
  at a percent of it, `CLAUDE_CODE_DISABLE_1M_CONTEXT` holds a `[1m]` choice to
  200k; each is read from the environment and from the settings file given with
  `--client-config` (its `env` table). The responses `condense run` copied after its
  boundary keep their old `usage`, which the client does not go by (measured: a
  session over the threshold, condensed, resumes without compacting): condense
  skips them too.
- **Records it no longer applies.** A `system/microcompact_boundary` (older clients
  cleared old tool results in the request and recorded which) is passed over: the
  results are sent in full. A `content-replacement` record (a tool result the client
  swapped for a shorter one) is not applied either, unless the client's own
  server-side flag turns that feature on. Both are notes for `check`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from condense_cli.core.clientconfig import whole_number
from condense_cli.core.events import Problem
from condense_cli.core.jsonlines import as_dict
from condense_cli.core.text import plural
from condense_cli.dialects.reports import Threshold

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.dialects.claude_code.events import ClaudeEvent
    from condense_cli.dialects.claude_code.lines import Line

CLIENT = "Claude Code 2.1.332"  # its catalog and margin are 2.1.330's
RESUME_MARGIN = 23_000  # window less this is where the client compacts on resume
# Before 2.1.330 (2.1.112 and 2.1.121 in the corpus) the margin was the published
# 13,000-token buffer plus 20,000 reserved for the answer: 167,000 for 200k.
OLD_MARGIN = 33_000
MARGIN_SINCE = (2, 1, 330)
RESUME_ADDS = 10_000  # what the client adds to the last response's context on resume, at most
WINDOW = 200_000
LONG_WINDOW = 1_000_000
# The client's model catalog (2.1.332, read off its binary; 2.1.330's gave the older
# Opus and Haiku models no `[1m]`): each model family, its default window and the
# largest a user may choose for it (`[1m]`). A model it does not name it gives
# `LONG_WINDOW` (tried with the real client: it compacts such a model's session on
# resume where it compacts a 1M model's). Dated and provider forms
# (`claude-sonnet-4-5-20250929`, `us.anthropic.claude-sonnet-4-6`, `...@2025`) are
# matched by the family they name.
WINDOWS: dict[str, tuple[int, int]] = {
    "claude-3-5-haiku": (WINDOW, WINDOW),
    "claude-3-5-sonnet": (WINDOW, WINDOW),
    "claude-3-7-sonnet": (WINDOW, LONG_WINDOW),
    "claude-haiku-4-5": (WINDOW, LONG_WINDOW),
    "claude-haiku-5-5": (LONG_WINDOW, LONG_WINDOW),
    "claude-opus-4-0": (WINDOW, LONG_WINDOW),
    "claude-opus-4-1": (WINDOW, LONG_WINDOW),
    "claude-opus-4-5": (WINDOW, LONG_WINDOW),
    "claude-opus-4-6": (WINDOW, LONG_WINDOW),
    "claude-opus-4-7": (LONG_WINDOW, LONG_WINDOW),
    "claude-opus-4-8": (LONG_WINDOW, LONG_WINDOW),
    "claude-opus-5": (LONG_WINDOW, LONG_WINDOW),
    "claude-sonnet-4-0": (WINDOW, LONG_WINDOW),
    "claude-sonnet-4-5": (WINDOW, LONG_WINDOW),
    "claude-sonnet-4-6": (WINDOW, LONG_WINDOW),
    "claude-sonnet-5": (LONG_WINDOW, LONG_WINDOW),
    "claude-fable-5": (LONG_WINDOW, LONG_WINDOW),
    "claude-mythos-5": (LONG_WINDOW, LONG_WINDOW),
    # the short names the API also answers to
    "claude-opus-4": (WINDOW, LONG_WINDOW),
    "claude-sonnet-4": (WINDOW, LONG_WINDOW),
    # the family names 2.1.332 gives the older models (`haiku-3-5` -> `claude-haiku-3-5`)
    "claude-haiku-3-5": (WINDOW, WINDOW),
    "claude-sonnet-3-7": (WINDOW, LONG_WINDOW),
}
FAMILY = re.compile(r"claude-[a-z]+(?:-\d+)*|claude-\d+(?:-\d+)*-[a-z]+")
# The models that had the 1M window by default before `MARGIN_SINCE`.
OLD_LONG_WINDOW_MODELS = ("claude-opus-5", "claude-sonnet-5", "claude-fable-5")
OFF_SWITCHES = ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT")
NO_LONG_WINDOW = "CLAUDE_CODE_DISABLE_1M_CONTEXT"
SYNTHETIC_MODEL = "<synthetic>"  # the model of the replies the client writes itself
MICROCOMPACT = "microcompact_boundary"
REPLACEMENT = "content-replacement"
# The settings a `settings.json` may lower the threshold with (read off 2.1.330).
AUTO_WINDOW = "autoCompactWindow"
AUTO_COMPACT = "autoCompactEnabled"  # false: no auto-compaction (tried with the client)
MIN_AUTO_WINDOW = 100_000
WINDOW_VARIABLE = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
PCT_VARIABLE = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
ANSWER_ROOM = 20_000  # the window less this is what the percent applies to


@dataclass(frozen=True)
class Window:
    """The context window the client gives a session's model, and why (`size` None:
    the model is not one condense knows, so no claim is made)."""

    size: int | None
    why: str
    # The model's default window, when `size` is a larger one the session ran with
    # (`[1m]`, which a plain resume does not choose again)
    default: int | None = None


def catalog_windows(model: str, version: Any = None) -> tuple[int, int] | None:
    """The default and the largest window the client's catalog gives `model` (None:
    not a model it names). Clients before `MARGIN_SINCE` (`version`) gave the 1M window
    by default only to `OLD_LONG_WINDOW_MODELS` (the corpus: 2.1.112 compacted
    `claude-opus-4-7` at 167,766 tokens, its 200k threshold then)."""
    name = model.lower()
    best: str | None = None
    for found in FAMILY.finditer(name):
        words = found.group(0).split("-")
        for end in range(len(words), 1, -1):  # the longest family the name starts with
            family = "-".join(words[:end])
            if family in WINDOWS:
                best = family if best is None or len(family) > len(best) else best
                break
    if best is None:
        return None
    default, largest = WINDOWS[best]
    if version is not None and _older(version) and not best.startswith(OLD_LONG_WINDOW_MODELS):
        return WINDOW, largest
    return default, largest


def _older(version: Any) -> bool:
    """Whether a client `version` is older than the one measured (`MARGIN_SINCE`)."""
    return margin_for(version) == OLD_MARGIN


def model_window(
    model: str,
    evidence: int = 0,
    settings: Mapping[str, str] | None = None,
    version: Any = None,
) -> Window:
    """The window the client resumes `model` with: its catalog's default, or the
    larger one a `[1m]` name or the log's `evidence` (a context of that many tokens
    used without a compaction) proves; `settings` may hold the client to 200k;
    `version`: the client's, when it is not the one that resumes."""
    known = catalog_windows(model, version)
    held = _truthy((settings or {}).get(NO_LONG_WINDOW))
    if known is None and model and (version is None or not _older(version)):
        known = (LONG_WINDOW, LONG_WINDOW)
        named = f"window {CLIENT} gives {model}, a model not in its catalog"
    elif known is None:
        return Window(None, f"{model or 'the model'} is not in {CLIENT}'s model catalog")
    else:
        named = f"window of {model}"
    default, largest = known
    if held and default > WINDOW:  # (tried with the real client: a 1M model held to 200k)
        return Window(WINDOW, f"the {WINDOW:,}-token window {NO_LONG_WINDOW} holds {model} to")
    if "[1m]" in model.lower() and largest > default and not held:
        return Window(largest, f"the {largest:,}-token window of {model}")
    if evidence > default and not held:
        if evidence <= largest:
            return Window(
                largest,
                f"the {largest:,}-token window {model} ran with here (a response used "
                f"{evidence:,} tokens of context without a compaction; {CLIENT} gives it "
                f"{default:,} unless the model is chosen as `[1m]`)",
                default,
            )
        return Window(
            None,
            f"a response used {evidence:,} tokens of context, more than any window "
            f"{CLIENT} gives {model}",
        )
    return Window(default, f"the {default:,}-token {named}")


def usage_tokens(usage: Mapping[str, Any], output: bool = True) -> int:
    """The context a response's `usage` says it took, as the client adds it up (with
    `output` False: its prompt alone, what a compaction's `preTokens` records)."""
    keys: tuple[str, ...] = (
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    keys += ("output_tokens",) if output else ()
    return sum(v for k in keys if isinstance(v := usage.get(k), int))


@dataclass(frozen=True)
class ResumeCompaction:
    """Where the session stands against the client's auto-compact threshold."""

    line: int | None  # the last response's line
    model: str
    context_tokens: int
    window: int | None  # None: the model's window is not known
    threshold: int | None  # None: auto-compaction is off, or the window is not known
    off_by: str | None = None  # the variable that turned it off
    why: str = ""  # where the window and the threshold come from
    # where the client compacts when a plain resume gives the model its default window
    # again (the session ran as `[1m]`), and that window
    plain_threshold: int | None = None
    plain_window: int | None = None

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
            "compacts_on_a_plain_resume": self.plain_over,
        }

    @property
    def plain_over(self) -> bool:
        """The session ran as `[1m]`, and a resume on the model's default window (no
        `[1m]` chosen again) compacts it at once."""
        plain = self.plain_threshold
        return plain is not None and not self.near and self.context_tokens >= plain

    def plain_note(self) -> str:
        """What a plain resume does to a session that ran as `[1m]` (`plain_over`)."""
        assert self.plain_threshold is not None and self.plain_window is not None
        return (
            f"the session ran as `{self.model}[1m]` here ({self.why}): resumed the same way "
            f"(`--model {self.model}[1m]`, or that model in the settings file) {CLIENT} does "
            f"not compact it, but resumed on {self.model} as the session names it, it gets "
            f"the {self.plain_window:,}-token window and compacts the session at once "
            f"({self.context_tokens:,} tokens, past {self.plain_threshold:,})"
        )

    def describe(self) -> str:
        """One sentence for people."""
        where = f"the last response (line {self.line}, {self.model})"
        used = f"{where} used {self.context_tokens:,} tokens of context (as its usage records)"
        if self.off_by is not None:
            return (
                f"{used}; auto-compaction is off here ({self.off_by}): the client does not "
                "compact on resume, and near the model's window it refuses the prompt as "
                "too long"
            )
        if self.threshold is None:
            return (
                f"{used}; its window is unknown ({self.why}): condense makes no claim "
                f"on when {CLIENT} compacts"
            )
        if self.over:
            return (
                f"{used}, {self.context_tokens - self.threshold:,} over the point "
                f"({self.threshold:,}) where {CLIENT} compacts ({self.why}): the client will "
                "compact the session as soon as it resumes on this model, before anything else "
                "is sent"
            )
        away = f"{self.threshold - self.context_tokens:,} below the point ({self.threshold:,})"
        if self.near:
            return (
                f"{used}, {away} where {CLIENT} compacts ({self.why}): what the client adds on "
                f"resume (its prompt and reminders, up to about {RESUME_ADDS:,}) may make it "
                "compact the session before anything else is sent"
            )
        return f"{used}, {away} where {CLIENT} compacts ({self.why})"


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
    window of `model` (the one that answered last before it; a `preTokens` past its
    default window proves the larger one), less the margin of the client version that
    wrote it, as the settings file `client` sets it; a `/compact` (`trigger: manual`)
    has none. None when the model's window is not known, or when condense wrote the
    compaction (`condense run`: the client's threshold had no part in it)."""
    pre = meta.get("preTokens")
    if "condense" in meta:
        return None
    if not isinstance(pre, int) or isinstance(pre, bool) or model is None:
        return None
    settings = ClaudeSettings.of(client, {})
    window = model_window(model, pre, settings.env, version)
    if window.size is None:
        return None
    threshold, why = settings.threshold(model, window, margin_for(version))
    manual = meta.get("trigger") == "manual"
    return Threshold(
        "tokens", pre, threshold, f"{why} (Claude Code {version})", RESUME_ADDS, manual
    )


@dataclass(frozen=True)
class ClaudeSettings:
    """What of the user's Claude Code settings moves its compaction threshold: the
    environment (the process's, then a settings file's `env` over it) and the
    settings file's own keys."""

    env: Mapping[str, str]
    data: Mapping[str, Any]
    client: ClientConfig | None = None

    @classmethod
    def of(cls, client: ClientConfig | None, environ: Mapping[str, str]) -> ClaudeSettings:
        env = dict(environ)
        if client is not None:
            env |= {k: str(v) for k, v in client.table("env").items()}
        return cls(env, client.data if client is not None else {}, client)

    def where(self, variable: str) -> str:
        """Where a variable of `env` was set: the settings file, or the environment."""
        if self.client is not None and variable in self.client.table("env"):
            return self.client.path
        return "the environment"

    def off_by(self) -> str | None:
        """The variable or setting that turns auto-compaction off, if one does (the
        settings file's `autoCompactEnabled: false`, which `/config` writes)."""
        if self.data.get(AUTO_COMPACT) is False and self.client is not None:
            return f"{AUTO_COMPACT} is false in {self.client.path}"
        return next(
            (f"{name} is set" for name in OFF_SWITCHES if _truthy(self.env.get(name))), None
        )

    def threshold(self, model: str, window: Window, margin: int) -> tuple[int, str]:
        """Where the client compacts `model` in `window` (known), and why: the window
        less `margin`, unless `autoCompactWindow` (per model in `modelSettings`, else
        the top-level one) or `CLAUDE_CODE_AUTO_COMPACT_WINDOW` lowers the window, or
        `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` compacts at that percent of the window less
        the answer's room, when that is lower."""
        assert window.size is not None
        size = window.size
        per_model = next(
            (
                as_dict(v).get(AUTO_WINDOW)
                for k, v in as_dict(self.data.get("modelSettings")).items()
                if model.startswith(k) and as_dict(v).get(AUTO_WINDOW) != "auto"
            ),
            None,
        )
        asked = per_model if per_model is not None else self.data.get(AUTO_WINDOW)
        if asked == "auto":
            asked = None
        said = []
        number = self.client.number if self.client is not None else _number
        asked = number(asked, AUTO_WINDOW, least=MIN_AUTO_WINDOW)
        name = f"{AUTO_WINDOW} in {self.client.path if self.client else 'the settings'}"
        given = self.env.get(WINDOW_VARIABLE)
        if given not in (None, ""):  # the client takes the variable over the settings
            tokens, note = env_window(str(given))
            where = f"{WINDOW_VARIABLE}={given!r} in {self.where(WINDOW_VARIABLE)}"
            if note:
                said.append(f"{where} {note}")
            if tokens is not None:
                asked, name = tokens, f"{WINDOW_VARIABLE} in {self.where(WINDOW_VARIABLE)}"
        if asked is not None and asked < size:
            size = asked
            said.append(f"lowered to {asked:,} by {name}")
        threshold = size - margin
        rule = f"{window.why} less {margin:,}"
        given = self.env.get(PCT_VARIABLE)
        try:  # the client goes by a number in (0, 100] and ignores anything else
            percent = float(str(given))
        except ValueError:
            percent = 0.0
        if given not in (None, "") and not 0 < percent <= 100:
            said.append(
                f"{PCT_VARIABLE}={given!r} in {self.where(PCT_VARIABLE)} ignored, as the "
                "client ignores it (it takes a percent above 0, up to 100)"
            )
        elif 0 < percent <= 100 and int((size - ANSWER_ROOM) * percent / 100) < threshold:
            threshold = int((size - ANSWER_ROOM) * percent / 100)
            said.append(
                f"at {percent:g}% of it less {ANSWER_ROOM:,} by {PCT_VARIABLE} in "
                f"{self.where(PCT_VARIABLE)}"
            )
        if said:
            rule = f"{window.why}, {', '.join(said)}"
        return threshold, rule


def env_window(text: str) -> tuple[int | None, str]:
    """`CLAUDE_CODE_AUTO_COMPACT_WINDOW` as the client reads it: tokens, or thousands or
    millions with `k` or `m` (`200k`, `1.5m`); below 100,000 it is read as 100,000, and
    what is no size is ignored. The tokens (None: ignored), and a note when the client
    does not take it as written."""
    import math
    import re

    text = text.strip()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower())
    if scale is None:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
    else:
        lead = re.match(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text)
        value = float(lead.group()) * scale if lead else math.nan
    if not math.isfinite(value) or round(value) < 1 or round(value) > 2**53 - 1:
        return None, "ignored, as the client ignores what is no size"
    if value < MIN_AUTO_WINDOW:
        return MIN_AUTO_WINDOW, f"read as the {MIN_AUTO_WINDOW:,} minimum, as the client does"
    return round(value), ""


def _number(value: Any, what: str, least: int = 1) -> int | None:
    """A setting from the environment as a whole number of at least `least`; None when
    absent or not one (the client ignores it then)."""
    number = whole_number(value)
    return number if number is not None and number >= least else None


def resume_compaction(
    events: Iterable[ClaudeEvent],
    environ: Mapping[str, str] | None = None,
    client: ClientConfig | None = None,
) -> ResumeCompaction | None:
    """The client's auto-compaction check on resume, for the view `events` (None
    when no response in the view says what context it took), under the user's
    settings: `environ` (the process's by default) and the settings file `client`."""
    settings = ClaudeSettings.of(client, os.environ if environ is None else environ)
    last: ClaudeEvent | None = None
    evidence = 0  # the most context a response of the view used (no compaction since)
    for event in reversed(list(events)):  # the newest first
        line = event.read_from
        if (line.type if line is not None else event.data.get("type")) != "assistant":
            continue
        if event.is_summary or event.copy_of:
            continue  # (a copy `condense run` wrote carries a usage from before it)
        message = as_dict(event.data.get("message"))
        if message.get("model") == SYNTHETIC_MODEL or not isinstance(message.get("usage"), dict):
            continue
        if last is None:
            last = event
        evidence = max(evidence, usage_tokens(message["usage"]))
    if last is None:
        return None
    message = as_dict(last.data.get("message"))
    model = str(message.get("model") or "")
    tokens = usage_tokens(as_dict(message.get("usage")))
    window = model_window(model, evidence, settings.env)
    off = settings.off_by()
    if off is not None or window.size is None:
        return ResumeCompaction(last.line, model, tokens, window.size, None, off, window.why)
    threshold, why = settings.threshold(model, window, RESUME_MARGIN)
    plain = None
    if window.default is not None:
        plain, _ = settings.threshold(model, Window(window.default, ""), RESUME_MARGIN)
    return ResumeCompaction(
        last.line, model, tokens, window.size, threshold, None, why, plain, window.default
    )


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
    elif compaction is not None and compaction.plain_over:
        problems.append(Problem(compaction.line, compaction.plain_note(), "note"))
    return problems
