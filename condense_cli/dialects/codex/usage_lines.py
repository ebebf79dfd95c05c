"""The lines of a rollout that `usage.Calls` must parse, told from each line's head
without parsing the rest of it (`cost` reads a rollout's calls this way, so that it
parses a fifth of the lines, not all of them).

Codex writes every line as `{"timestamp":"…","type":"…","payload":{"type":"…",…}}`,
in that order. Where a line starts so, its two types are read from its first bytes:
a response item, or an event that is neither a token count nor the thread's
settings, is passed over unparsed. A line that says something of the calls (a turn
context, a token count or record, a compaction, the settings), and any line of
another shape (another key first, spaces, a type written with an escape), is parsed,
so the calls are those the replay finds. A valid line with such a head holds those
types, as the timestamp's string can only end at its first quote; the one line told
otherwise than a parse tells it names a type twice (a key repeated, which no JSON
writer writes), and is read by its first."""

from __future__ import annotations

HEAD = b'{"timestamp":"'
TYPE = b'","type":"'  # from the timestamp's closing quote
ITEM = TYPE + b'response_item"'
EVENT = TYPE + b'event_msg","payload":{"type":"'
# the events `Calls` reads: a token count, the thread's settings (its service tier)
CALL_EVENTS = (b'token_count"', b'thread_settings_applied"')
# the other types of lines `Calls` reads
TAKEN = frozenset({b"turn_context", b"token_usage_record", b"compacted"})


def call_spans(block: bytes) -> tuple[list[tuple[int, int, int]], int]:
    """Each line of `block` (whole lines) to parse, as its index in the block and
    where its bytes start and end (before its newline); and how many lines the block
    holds."""
    found = []
    find, starts = block.find, block.startswith
    head, item, event = HEAD, ITEM, EVENT  # (locals: they are read for every line)
    time_at, count_at, kind_at = len(HEAD), len(EVENT), len(TYPE)
    start = index = 0
    size = len(block)
    while start < size:
        end = find(b"\n", start)
        if end < 0:
            end = size
        if not starts(head, start):
            found.append((index, start, end))
        else:
            close = find(b'"', start + time_at, end)  # the timestamp's closing quote
            if close < 0 or starts(item, close):  # (none: not JSON, as a parse finds)
                pass
            elif starts(event, close):
                at = close + count_at
                if starts(CALL_EVENTS, at) or _escaped(block, at, end):
                    found.append((index, start, end))
            elif starts(TYPE, close):
                at = close + kind_at
                if block[at : max(at, find(b'"', at, end))] in TAKEN or _escaped(block, at, end):
                    found.append((index, start, end))
            else:
                found.append((index, start, end))
        start = end + 1
        index += 1
    return found, index


def _escaped(block: bytes, at: int, end: int) -> bool:
    """Whether the string that starts at `at` holds an escape (or never ends)."""
    close = block.find(b'"', at, end)
    return close < 0 or block.find(b"\\", at, close) >= 0
