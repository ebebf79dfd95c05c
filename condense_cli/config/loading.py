"""config.toml in (tomllib), effective configuration out (tomli-w).

One place resolves the configuration: the file (`--config`, else
`$CONDENSE_CONFIG`, else `./config.toml`), then `--type` and `--set`
overrides. Every mistake is a ConfigError naming the key and the choices.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from condense_cli.config.openhands import drop_ignored_llm_keys
from condense_cli.core.errors import ConfigError
from condense_cli.core.redact import mask_table
from condense_cli.core.tables import describe_value, parse_table, settings_table
from condense_cli.core.text import clip, quote
from condense_cli.llm.settings import LLM_TABLE_KEYS, LLMSettings

if TYPE_CHECKING:
    from condense_cli.condensers.base import Condenser
    from condense_cli.llm.tokens import Tokenizer

T = TypeVar("T")

ENV_VAR = "CONDENSE_CONFIG"
MAX_DEPTH = 32  # tables and arrays inside each other; a pipeline level takes two
DEFAULT_FILE = "config.toml"


@dataclass
class Settings:
    """The configuration as read, with overrides applied (not yet validated)."""

    path: Path | None
    condenser: dict[str, Any]
    llm: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    pins: list[str] = field(default_factory=list)  # [condenser] pins, for every type


class LLMTables:
    """Resolves `llm_config` references to validated LLMSettings."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.defaults = {k: v for k, v in table.items() if not _is_named_model(k, v)}
        self.named = {k: v for k, v in table.items() if _is_named_model(k, v)}
        self.default = parse_table(LLMSettings, self.defaults, "llm")
        for name, named in self.named.items():
            parse_table(LLMSettings, self._merged(named), f"llm.{clip(name)}")

    def _merged(self, own: dict[str, Any]) -> dict[str, Any]:
        """A named table over the [llm] defaults; its own key source replaces theirs."""
        merged = {**self.defaults, **own}
        for key, other in (("api_key", "api_key_env"), ("api_key_env", "api_key")):
            if key in own and other not in own:
                merged.pop(other, None)
        return merged

    def resolve(self, ref: str | dict[str, Any] | None, where: str) -> LLMSettings:
        """`None`: the [llm] table; a name: [llm.NAME]; a table: inline settings."""
        if ref is None:
            return self.default
        if isinstance(ref, dict):
            return parse_table(LLMSettings, self._merged(ref), f"{where}.llm_config")
        if ref not in self.named:
            defined = ", ".join(f"[llm.{n}]" for n in self.named) or "none"
            raise ConfigError(
                f"[{where}] llm_config = {quote(ref)} names a missing [llm.{clip(ref)}] table; "
                f"defined: {clip(defined, 300)}",
                hint=f"add an [llm.{clip(ref)}] table, or remove llm_config to use [llm]",
            )
        return parse_table(LLMSettings, self._merged(self.named[ref]), f"llm.{clip(ref)}")

    def describe(self) -> dict[str, Any]:
        """Every table with defaults filled in and secrets masked."""
        out = settings_table(self.default)
        for name, named in self.named.items():
            out[name] = settings_table(parse_table(LLMSettings, self._merged(named), clip(name)))
        return out


def _is_named_model(key: str, value: Any) -> bool:
    """A table inside [llm] is a named model, unless it is a table-valued setting."""
    return isinstance(value, dict) and key not in LLM_TABLE_KEYS


def load_settings(
    config: str | None = None,
    type_override: str | None = None,
    sets: list[str] | None = None,
) -> Settings:
    """Read the config file (if any) and apply `--type` and `--set`."""
    path = find_config_file(config)
    data = read_toml(path) if path is not None else {}
    condenser = data.get("condenser", {})
    llm = data.get("llm", {})
    for key, value in (("condenser", condenser), ("llm", llm)):
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: [{key}] must be a table, not {type(value).__name__}")
    settings = Settings(path, dict(condenser), dict(llm))
    settings.pins = _pins(settings.condenser.pop("pins", []), path)
    if type_override is not None:
        _apply_type(settings, type_override)
    for item in sets or []:
        _apply_set(settings, item)
    settings.pins += _pins(settings.condenser.pop("pins", []), path)
    try:
        check_limits({"condenser": settings.condenser, "llm": settings.llm})
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc.message}" if path else exc.message, exc.hint) from None
    note = drop_ignored_llm_keys(settings.llm, settings.condenser)
    if note is not None:
        settings.notes.append(note)
    mask_table({"condenser": settings.condenser, "llm": settings.llm})  # remember its secrets
    return settings


def _pins(value: Any, path: Path | None) -> list[str]:
    """`pins = [...]` of [condenser]: texts every condensation must carry."""
    from condense_cli.core.pins import check_pin

    where = f"{path}: " if path else ""
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise ConfigError(f'{where}[condenser] pins must be a list of texts, like pins = ["..."]')
    try:
        return [check_pin(p) for p in value]
    except ConfigError as exc:
        raise ConfigError(f"{where}[condenser] pins: {exc.message}") from None


def check_limits(data: dict[str, Any]) -> None:
    """Refuse what no key can mean: numbers that are not finite (`nan`, `inf`: a
    timeout of nan waits forever) and nesting deeper than MAX_DEPTH (a pipeline
    nested hundreds deep). Walks without recursion, so any depth is safe to check."""
    stack: list[tuple[str, str, Any, int]] = [("", name, value, 1) for name, value in data.items()]
    while stack:
        table, key, value, depth = stack.pop()
        where = f"[{clip(table, 100)}] {clip(key)}" if table else f"[{clip(key)}]"
        if depth > MAX_DEPTH:
            raise ConfigError(
                f"{where} is nested more than {MAX_DEPTH} tables or arrays deep",
                hint="a pipeline inside a pipeline gains nothing; list its condensers in one",
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{where} must be a finite number, not {value}")
        path = f"{table}.{key}" if table else key
        if isinstance(value, dict):
            stack.extend((path, k, v, depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((table, f"{key}[{i}]", v, depth + 1) for i, v in enumerate(value))


def load_condenser(settings: Settings) -> Condenser:
    """Validate the whole configuration and build the configured condenser."""
    return build_condenser(settings.condenser, LLMTables(settings.llm))


def build_condenser(table: Any, llms: LLMTables, where: str = "condenser") -> Condenser:
    """Build one condenser from its table: type (or alias) plus its own keys."""
    from condense_cli.condensers import REGISTRY, canonical_type, type_choices

    if not isinstance(table, dict):
        raise ConfigError(f"[{where}] must be a table, not {describe_value(table)}")
    name = table.get("type", "noop")
    canonical = canonical_type(name) if isinstance(name, str) else None
    if canonical is None:
        raise ConfigError(
            f"[{where}] type {quote(name)} is not a condenser type; choose one of: {type_choices()}"
        )
    cls = REGISTRY[canonical]
    own = {k: v for k, v in table.items() if k != "type"}
    config: Any = parse_table(cls.config_class, own, where, label=f" for type {canonical!r}")
    return cls.from_config(config, llms, lambda nested, at: build_condenser(nested, llms, where=at))


def effective_config(settings: Settings) -> dict[str, Any]:
    """The configuration in force, defaults filled in and secrets masked."""
    llms = LLMTables(settings.llm)
    condenser = build_condenser(settings.condenser, llms)
    described = condenser.describe() | ({"pins": settings.pins} if settings.pins else {})
    return mask_table({"condenser": described, "llm": llms.describe()})


def find_config_file(explicit: str | None) -> Path | None:
    """`--config`, else `$CONDENSE_CONFIG`, else `./config.toml`, else none."""
    for value, origin in ((explicit, "--config"), (os.environ.get(ENV_VAR), f"${ENV_VAR}")):
        if value:
            path = Path(value)
            if not path.is_file():
                raise ConfigError(f"{origin} names {clip(value, 200)}, which is not a file")
            return path
    default = Path(DEFAULT_FILE)
    return default if default.is_file() else None


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; any defect is a ConfigError with the file's name."""
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {clip(str(exc), 200)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: tables or arrays nested too deeply to read") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid TOML: the file is not UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _apply_type(settings: Settings, name: str) -> None:
    from condense_cli.condensers import REGISTRY, canonical_type

    new = canonical_type(name)
    old = canonical_type(str(settings.condenser.get("type", "noop")))
    settings.condenser["type"] = name
    if new is None or new == old:
        return
    known = {f.name for f in fields(REGISTRY[new].config_class)}
    dropped = sorted(k for k in settings.condenser if k != "type" and k not in known)
    for key in dropped:
        del settings.condenser[key]
    if dropped:
        settings.notes.append(
            f"--type {clip(name)}: ignoring [condenser] keys of the configured type: "
            + clip(", ".join(dropped), 300)
        )


def _apply_set(settings: Settings, item: str) -> None:
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set {quote(item)}: expected KEY=VALUE, e.g. --set max_size=80")
    value = parse_value(raw.strip())
    path = key.split(".")
    if path[0] not in ("condenser", "llm"):
        path = ["condenser", *path]
    root = {"condenser": settings.condenser, "llm": settings.llm}
    table = root[path[0]]
    for part in path[1:-1]:
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            raise ConfigError(f"--set {clip(key)}: {clip(part)} is not a table")
    if len(path) == 1:
        raise ConfigError(f"--set {clip(key)}: name a key inside [{clip(key)}]")
    table[path[-1]] = value


def parse_value(raw: str) -> Any:
    """A `--set` value as TOML (`80`, `true`, `"x"`, `[1, 2]`); a bare word is a string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    except RecursionError:
        raise ConfigError(f"--set value nested too deeply: {quote(raw)}") from None


def naming_source(path: Path | None, build: Callable[[], T]) -> T:
    """`build()`, with the config file named in the configuration errors it raises."""
    try:
        return build()
    except ConfigError as exc:
        if path is None:
            raise
        raise ConfigError(f"{path}: {exc.message}", exc.hint) from None


@dataclass(frozen=True)
class Configured:
    """What `--config`, `--type` and `--set` describe: the condenser, the pins of
    [condenser] (texts every condensation must carry) and the notes to show."""

    condenser: Condenser
    pins: tuple[str, ...]
    notes: list[str]


def configured_condenser(
    config: str | None, type: str | None, sets: list[str] | None
) -> Configured:
    """The condenser `--config`, `--type` and `--set` describe, its pins and notes."""
    settings = load_settings(config, type, sets)
    condenser = naming_source(settings.path, lambda: load_condenser(settings))
    return Configured(condenser, tuple(settings.pins), settings.notes)


# What `stats` counts with when no model is named: its tokenizer (o200k_base), not a call.


def configured_model(config: str | None) -> str | None:
    """The [llm] model `config` names (None: none)."""
    settings = load_settings(config)
    return naming_source(settings.path, lambda: LLMTables(settings.llm).default.model)


def configured_tokenizer(config: str | None) -> Tokenizer:
    """The tokenizer of the [llm] model of `config` (as `stats` counts)."""
    from condense_cli.llm.tokens import COUNTING_MODEL, tokenizer_for

    return tokenizer_for(configured_model(config) or COUNTING_MODEL)
