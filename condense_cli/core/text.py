"""Text for people: untrusted strings made safe to print, plurals, short quotes.

Event text, file names and configuration values are untrusted: `sanitize` is the
one rule that makes them safe for a terminal. It shows as escapes (`\\x1b`, `\\u202e`)
the characters that could drive the terminal or lie about what is shown: C0/C1
controls (escape sequences, bells, backspaces), bidirectional overrides and
isolates (which reorder text: `user\\u202etxt.exe` would show as `userexe.txt`),
and zero-width characters (which hide text or make two names look alike).
"""

from __future__ import annotations

import re

_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 and C1 controls but newline and tab
    "\u061c\u180e"  # Arabic letter mark, Mongolian vowel separator
    "\u200b-\u200f"  # zero-width space/non-joiner/joiner, LTR/RTL marks
    "\u2028-\u202e"  # line/paragraph separators, bidi embeddings and overrides
    "\u2060-\u2069"  # word joiner, invisible operators, bidi isolates
    "\ufeff"  # zero-width no-break space
)
# (a carriage return before a newline is part of the line's end, not shown)
_MULTILINE = re.compile(f"(\r(?=\n))|[{_UNSAFE}]")
_ONE_LINE = re.compile(f"()[{_UNSAFE}\n\t]")
QUOTE_CHARS = 60


def _escape(match: re.Match[str]) -> str:
    if match.group(1):
        return ""
    return match.group().encode("unicode_escape").decode("ascii")


def sanitize(text: str, *, one_line: bool = False) -> str:
    """`text` with unsafe characters shown as escapes; newlines and tabs are kept (a
    Windows line end, CR LF, as a newline), unless `one_line` (for names and
    messages, which must stay one line)."""
    return (_ONE_LINE if one_line else _MULTILINE).sub(_escape, text)


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 event`, `2 events`, `1,204 events`."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text`, printable and cut to `limit` characters (`…` marks the cut)."""
    text = sanitize(text, one_line=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(value: object, limit: int = QUOTE_CHARS) -> str:
    """A short, printable quotation of a value for a message (never the whole of it)."""
    return clip(repr(value) if isinstance(value, str) else str(value), limit)
