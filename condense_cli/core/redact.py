"""Secrets never reach output: one rule for what a secret is, one way to mask it.

A secret (SPEC section 4) is the string value of a key whose name contains `key`,
`secret`, `token` or `password` (`api_key`, `aws_secret_access_key`, ...), every
value of an `extra_headers` table, and the user-info part of a URL
(`http://user:pw@host` -> `http://***@host`). Keys ending in `_env` hold the *name*
of an environment variable, not a secret, and are shown.

`mask_table` masks a configuration table for `condense config`; it also remembers
every secret it meets, so that `mask` can take them out of any message, error or
`--debug` traceback afterwards. In text from a session (the report, the hooks'
briefings, MCP's answers, errors) `mask` also takes out what looks like a secret
whoever wrote it: the common providers' keys (`PROVIDER_KEYS`: OpenAI's and
Anthropic's `sk-...`, AWS's `AKIA...`, GitHub's `ghp_...`, Slack's `xox.-...`,
Google's `AIza...`) and the value of a `password`, `secret`, `token` or `api_key` field
written as JSON, TOML or an environment assignment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

SECRET = "***"
SECRET_WORDS = ("key", "secret", "token", "password")
HEADER_TABLES = frozenset({"extra_headers"})
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words in messages

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s]+@")
PROVIDER_KEYS = re.compile(
    r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bAIza[0-9A-Za-z_-]{35}"
)
# what every provider key and every secret field's name holds, found by a plain search
# (far faster than the patterns) before the patterns are tried
KEY_MARKS = (
    "sk-",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "AIza",
)
FIELD_MARKS = ("passw", "secret", "token", "api", "access")  # (in the text case-folded)
# (bounded: a long run of word characters must not make a search quadratic)
_FIELD = r"[\w.-]{0,40}?(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\w.-]{0,40}"
_WORDS = r"passw|secret|token|api[_-]?key|access[_-]?key"
_FIELD_WORDS = re.compile(_WORDS)  # (in the text case-folded: three times as fast)
_FIELD_WORDS_ANY_CASE = re.compile(rf"(?i){_WORDS}")
# what must follow such a word for a field's pattern to match there: the rest of the
# key (up to the longest a key can be), maybe a quote, then `:` or `=`
_THEN_SEPARATOR = re.compile(r"[\w.-]{0,90}[\"']?\s*[:=]")
# `"api_key": "..."`, `password = '...'` (the key kept, its value masked)
_QUOTED_FIELD = re.compile(
    rf"(?i)(?P<key>[\"']?{_FIELD}[\"']?\s*[:=]\s*)(?P<q>[\"'])(?P<value>[^\"'\n]{{4,}})(?P=q)"
)
# `API_TOKEN=...` in a shell or an .env file
_ASSIGNED = re.compile(rf"(?i)(?P<key>\b{_FIELD}=)(?P<value>[^\s\"']{{4,}})")
_remembered: set[str] = set()


def is_secret_key(name: str) -> bool:
    """Whether a string under this key is a secret."""
    lowered = name.lower()
    return not lowered.endswith("_env") and any(word in lowered for word in SECRET_WORDS)


def mask_urls(text: str) -> str:
    """Replace the user-info part of every URL in `text` by `***`."""
    if "://" not in text or "@" not in text:
        return text  # (a search for these is far faster than the pattern's)
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}{SECRET}@", text)


def remember(values: Iterable[str | None]) -> None:
    """Mask these values wherever they appear in later output."""
    _remembered.update(v for v in values if v and len(v) >= MIN_SECRET_CHARS)


def mask(text: str, extra: Iterable[str | None] = ()) -> str:
    """`text` with every remembered secret (and `extra`) and URL user-info masked."""
    secrets = _remembered.union(v for v in extra if v and len(v) >= MIN_SECRET_CHARS)
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, SECRET)
    return mask_found(mask_urls(text))


def mask_found(text: str) -> str:
    """`text` with what looks like a secret masked: a provider's key, the value of a
    secret field."""
    if any(mark in text for mark in KEY_MARKS):
        text = PROVIDER_KEYS.sub(SECRET, text)
    folded = text.casefold()
    if not any(mark in folded for mark in FIELD_MARKS):
        return text
    # The field patterns are slow on long text: they are tried only around each word
    # that can name a secret field and is followed by a separator, from the longest
    # key before it to the end of the line after its own (a value may follow its key
    # on the next line). The words are found in the case-folded text where it is as
    # long as the text (each character folded to one: the places are the same).
    words = (
        _FIELD_WORDS.finditer(folded)
        if len(folded) == len(text)
        else _FIELD_WORDS_ANY_CASE.finditer(text)
    )
    parts, done = [], 0
    for hit in words:
        if hit.start() < done or not _THEN_SEPARATOR.match(text, hit.end()):
            continue
        start = max(done, hit.start() - FIELD_REACH)
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else text.find("\n", end + 1)
        end = len(text) if end < 0 else end
        parts += [text[done:start], _masked_fields(text[start:end])]
        done = end
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


FIELD_REACH = 42  # characters of a field's key before the word that names it


def _masked_fields(text: str) -> str:
    text = _QUOTED_FIELD.sub(
        lambda m: f"{m.group('key')}{m.group('q')}{SECRET}{m.group('q')}", text
    )
    return _ASSIGNED.sub(lambda m: f"{m.group('key')}{SECRET}", text)


def mask_table(table: dict[str, Any]) -> dict[str, Any]:
    """A copy of a configuration table with every secret masked (and remembered)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key in HEADER_TABLES and isinstance(value, dict):
            remember(v for v in value.values() if isinstance(v, str))
            out[key] = {name: SECRET for name in value}
        elif isinstance(value, str) and is_secret_key(key):
            remember([value])
            out[key] = SECRET
        else:
            out[key] = _mask_value(value)
    return out


def _mask_value(value: Any) -> Any:
    if isinstance(value, dict):
        return mask_table(value)
    if isinstance(value, list):
        return [_mask_value(item) for item in value]
    if isinstance(value, str):
        masked = mask_urls(value)
        if masked != value:
            remember(m.group()[len(m.group("scheme")) : -1] for m in _USERINFO.finditer(value))
        return masked
    return value
