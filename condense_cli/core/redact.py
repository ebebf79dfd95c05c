"""Secrets never reach output: one rule for what a secret is, one way to mask it.

A secret (SPEC section 4) is the string value of a key whose name contains `key`,
`secret`, `token` or `password` (`api_key`, `aws_secret_access_key`, ...), every
value of an `extra_headers` table, and the user-info part of a URL
(`http://user:pw@host` -> `http://***@host`). Keys ending in `_env` hold the *name*
of an environment variable, not a secret, and are shown.

`mask_table` masks a configuration table for `condense config`; it also remembers
every secret it meets, so that `mask` can take them out of any message, error or
`--debug` traceback afterwards.
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
_remembered: set[str] = set()


def is_secret_key(name: str) -> bool:
    """Whether a string under this key is a secret."""
    lowered = name.lower()
    return not lowered.endswith("_env") and any(word in lowered for word in SECRET_WORDS)


def mask_urls(text: str) -> str:
    """Replace the user-info part of every URL in `text` by `***`."""
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
    return mask_urls(text)


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
