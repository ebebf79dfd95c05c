"""A user's message as clauses, each a fact: what an instruction-level audit checks.

A message is first reflowed (`blocks`): the lines of a paragraph that was wrapped by
hand are joined, each list item is whole on its own, and what the user pasted
rather than wrote (fenced code, `<tag>...</tag>` blocks such as an issue
description, indented code and pasted logs) is left out: it is material, not
instruction. Each block is cut into sentences (at `.`, `!`, `?` and `;`, not
inside `i.e.` and its like) and each sentence into its coordinated clauses (at
`and`, `but`, `then`); a piece with fewer than two content words stays with its
neighbour, so "tests and docs" stays one object, and a sentence of fewer than two
(a heading, "Phase 2.") gives no clause.

A clause that states a constraint (`CONSTRAINT_MARKERS`: don't, never, must, only,
always, keep, without, instead, use, avoid, ...) is a constraint. A text carries a
clause when it holds the clause as written, or, in other words (a summary):
- an instruction: at least `INSTRUCTION_SHARE` of its content words;
- a constraint: at least `OBJECT_SHARE` of its object (the content words of its
  main part, before any purpose such as "to ensure ...", less its paths and the
  markers and verbs that only say it is a constraint), and, for a negative one (not, never, no,
  without, avoid), a negation in a sentence of the text that holds that object:
  "do not modify str.py" is not carried by "modified str.py".
A summary in another language than the clause carries it only where it quotes it:
no word list can see a translation, and a clause wrongly called lost costs a user
less than a constraint wrongly called kept.

Content words are the words of three letters or more, any script, less a short
list of English function words, compared by a crude stem (case-folded, a final
`s`, `es`, `ed`, `ing` or `ly` cut, then a final `e`, and a final `y` made `i`);
text in Chinese, Japanese or Korean, written without spaces, counts by its pairs
of neighbouring characters, and has its own markers (不要, 必須, 只, 禁止, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache, lru_cache

INSTRUCTION_SHARE = 0.6
OBJECT_SHARE = 0.8
MIN_WORDS = 2  # a piece with fewer content words belongs to the clause before it

PASTED = re.compile(r"```.*?(?:```|\Z)|<([A-Za-z][\w-]*)(?:\s[^>]*)?>.*?</\1>", re.S)
# (a sentence also ends after the full stops of Chinese and Japanese text)
SENTENCE = re.compile(r"(?<=[.!?;])\s+|(?<=[\u3002\uff01\uff1f\uff1b])|\n+")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
# What makes a clause written in Chinese or Japanese a constraint, and a negative one.
CJK_MARKERS = (
    "不要",
    "不准",
    "不能",
    "不用",
    "別",
    "请勿",
    "請勿",
    "禁止",
    "必須",
    "必须",
    "一定要",
    "只",
    "保持",
    "應該",
    "应该",
    "避免",
)
CJK_NEGATIONS = ("不", "沒", "没", "別", "别", "勿", "禁止", "無", "无", "避免")
COORDINATION = re.compile(r"(,?\s+(?:and|but|then)\s+|,\s+so\s+)", re.I)
PURPOSE = re.compile(r"\s(?:to ensure|to make sure|so that|in order to)\s", re.I)
ABBREVIATIONS = re.compile(r"\b(?:i\.e\.|e\.g\.|etc\.|vs\.|cf\.)", re.I)
KEPT_DOT = "\ue000"  # an abbreviation's dot while sentences are cut: put back after
TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
NEGATIONS = frozenset(
    {"not", "never", "no", "without", "avoid", "nor", "neither", "forbidden", "prohibited"}
    | {"disallowed", "refrain", "instead"}
)
# Words that make a clause a constraint; they are its force, not its object.
CONSTRAINT_MARKERS = frozenset(
    {
        "don't",
        "dont",
        "doesn't",
        "shouldn't",
        "mustn't",
        "can't",
        "cannot",
        "won't",
        "not",
        "never",
        "must",
        "only",
        "always",
        "keep",
        "without",
        "instead",
        "use",
        "avoid",
        "ensure",
        "preserve",
        "should",
        "required",
        "require",
        "need",
        "needs",
        "stay",
        "remain",
        "leave",
        "unchanged",
    }
)
NOT_OBJECTS = CONSTRAINT_MARKERS | {"make", "sure", "any", "way", "all", "every", "please", "task"}
PATH = re.compile(r"\S*/\S*")  # a word with a slash: a path, as far as objects go
STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "are",
        "but",
        "not",
        "you",
        "your",
        "yours",
        "our",
        "ours",
        "with",
        "this",
        "that",
        "these",
        "those",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "then",
        "than",
        "there",
        "their",
        "them",
        "they",
        "its",
        "it's",
        "was",
        "were",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "can",
        "could",
        "shall",
        "may",
        "might",
        "just",
        "also",
        "very",
        "too",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "each",
        "some",
        "such",
        "only",
        "own",
        "same",
        "other",
        "more",
        "most",
        "much",
        "many",
        "few",
        "let",
        "lets",
        "let's",
        "please",
        "now",
        "out",
        "off",
        "about",
        "above",
        "below",
        "again",
        "once",
        "both",
        "between",
        "while",
        "because",
        "until",
        "upon",
        "per",
        "via",
        "etc",
        "i'm",
        "i've",
        "we're",
        "we've",
    ]
)


@lru_cache(maxsize=1 << 16)  # an audit stems the same words again and again
def stem(word: str) -> str:
    """A word as compared: case-folded, a common English ending cut."""
    word = word.casefold().replace("'", "")
    for ending in ("ing", "ed", "es", "ly", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            break
    if word.endswith("e") and len(word) > 4:  # rename, renamed: renam
        word = word[:-1]
    return word[:-1] + "i" if word.endswith("y") else word


def words(text: str) -> list[str]:
    """The words of `text`, case-folded, outside Chinese, Japanese and Korean runs."""
    return [w.casefold() for w in TOKEN.findall(CJK.sub(" ", text))]


def bigrams(text: str) -> set[str]:
    """The pairs of neighbouring characters in the Chinese, Japanese and Korean runs
    of `text`: their content units (they are not written with spaces)."""
    return {run[i : i + 2] for run in CJK.findall(text) for i in range(len(run) - 1)}


def content(text: str) -> set[str]:
    """The content units of `text`: stems of its words, bigrams of its CJK runs."""
    found = {stem(w) for w in words(text) if len(w) >= 3 and not w.isdigit() and w not in STOP}
    return found | bigrams(text)


def is_constraint(clause: str) -> bool:
    return any(w in CONSTRAINT_MARKERS for w in words(clause)) or any(
        m in clause for m in CJK_MARKERS
    )


def main_part(clause: str) -> str:
    """The clause without its purpose ("... to ensure you haven't broken anything")."""
    return PURPOSE.split(clause, maxsplit=1)[0]


def is_negative(clause: str) -> bool:
    """Whether the clause (not its purpose) says what must not be done."""
    main = main_part(clause)
    return any(w in NEGATIONS or w.endswith("n't") for w in words(main)) or any(
        m in main for m in CJK_NEGATIONS
    )


def object_of(clause: str) -> set[str]:
    """What a constraint is about: the content words of its main part less its force
    and less its paths (a path is a fact of its own; a summary names the place a
    constraint applies to far more often than the constraint)."""
    force = _force()
    main = PATH.sub(" ", main_part(clause))
    return {w for w in content(main) if w not in force}


@cache
def _force() -> set[str]:
    """What a constraint says of its force, not its object: its markers' stems."""
    return {stem(w) for w in NOT_OBJECTS} | bigrams(" ".join(CJK_MARKERS + CJK_NEGATIONS))


# A line that starts a list item, a heading or a quote: it starts a block of its own.
ITEM = re.compile(
    r"\s{0,3}(?:[-*\u2022+]\s|\d{1,3}(?:[.)]|(?:\.\d{1,3})+\.?)\s|[a-zA-Z][.)]\s|#{1,6}\s)"
)
MARKDOWN_HEADING = re.compile(r"\s{0,3}#{1,6}\s")
QUOTE = re.compile(r"\s*>\s?")  # a line of a quotation: its lines join as prose does
# A pasted line of a log or a traceback, not prose (a time stamp or a log level first,
# a traceback's own lines, a shell or REPL prompt).
LOG_LINE = re.compile(
    r"\s*(?:\[?\d{4}-\d\d-\d\d[T ]\d|\[?\d\d:\d\d:\d\d|(?:DEBUG|INFO|WARN(?:ING)?|ERROR"
    r"|FATAL|TRACE)\b[:\] ]|Traceback \(most recent|File \".*\", line \d|at \S+\(.*:\d+\)"
    r"|\$ |>>> |\w+(?:\.\w+)*(?:Error|Exception):)"
)


def blocks(message: str) -> list[str]:
    """The prose of `message` reflowed: each paragraph and each list item on one line
    (the lines a hard wrap cut are joined), pasted material (fenced code, tagged
    blocks, indented code, log and traceback lines) left out."""
    found: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            found.append(" ".join(current))
            current.clear()

    code = False  # inside indented code (after a blank line)
    blank = True
    quoting = False  # the lines so far are a quotation's
    for line in PASTED.sub("\n\n", message).splitlines():
        quote = QUOTE.match(line)
        if quote is not None:
            if not quoting:
                close()  # a quotation starts a block of its own
            line = line[quote.end() :]
        elif quoting:
            close()
        quoting = quote is not None
        stripped = line.strip()
        if not stripped:
            close()
            blank = True
            continue
        indented = line.startswith(("    ", "\t"))
        if (indented and (blank or code)) or LOG_LINE.match(line):
            close()
            code, blank = True, False
            continue
        code = False
        if ITEM.match(line) or (
            current and (CJK.match(stripped[0]) or CJK.search(current[-1][-1]))
        ):
            close()  # (text in Chinese or Japanese is not wrapped by hand: a line ends it)
        current.append(stripped)
        blank = False
        if MARKDOWN_HEADING.match(line):
            close()  # a heading's line is all of it
    close()
    return found


def sentences(message: str) -> Iterator[str]:
    """The whole sentences the user wrote in `message`, reflowed (`blocks`): each with
    at least `MIN_WORDS` content words. A heading (a short line with no end
    punctuation that more text follows) is not a sentence; a link alone on its line
    opens the sentence after it; an enumeration inside a line ("... first, 2. then
    ...") starts a sentence at each number."""
    found = blocks(message)
    link = ""
    for index, block in enumerate(found):
        if index + 1 < len(found) and _heading(block):
            continue
        written = ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", KEPT_DOT), block)
        for sentence in SENTENCE.split(ENUMERATION.sub("\n", written)):
            sentence = sentence.strip(" \t-*\u2022:>#,").replace(KEPT_DOT, ".")
            if LINK.fullmatch(sentence):
                link = f"{link}{sentence} "
                continue
            if len(content(sentence)) >= MIN_WORDS:
                yield f"{link}{sentence}"
                link = ""


# A number that starts an item of an enumeration inside a line ("..., 2. Do this").
ENUMERATION = re.compile(r"(?<=[\w).,;:])\s+(?=\d{1,2}[.)]\s+\S)")
LINK = re.compile(r"<?(?:https?://|www\.)\S+>?")
HEADING_WORDS = 8
HEADING_CHARS = 60
END = re.compile(r"[.!?;:)\u3002\uff01\uff1f\uff1b\uff1a\u300d]$")  # (and CJK's own)


def _heading(block: str) -> bool:
    """A short line that ends without punctuation (a title over the text after it;
    a numbered item is not one: it may be all a point says)."""
    text = block.strip(" \t-*\u2022>#")
    return (
        not ITEM.match(block)
        and len(text.split()) <= HEADING_WORDS
        and len(text) <= HEADING_CHARS
        and not END.search(text)
        and not LINK.fullmatch(text)
    )


def clauses(message: str) -> Iterator[str]:
    """The clauses the user wrote in `message` (see the module's docstring)."""
    for sentence in sentences(message):
        parts = COORDINATION.split(sentence)  # piece, joiner, piece, joiner, ...
        merged: list[str] = []
        for index in range(0, len(parts), 2):
            piece = parts[index].strip(" \t-*\u2022:>#")
            joiner = parts[index - 1] if index else ""
            if not piece:
                continue
            if merged and (len(content(piece)) < MIN_WORDS or len(content(merged[-1])) < MIN_WORDS):
                merged[-1] = f"{merged[-1]}{joiner}{piece}"
            else:
                merged.append(piece)
        for clause in merged:
            if len(content(clause)) >= MIN_WORDS:
                yield clause


def sentences_of(text: str) -> list[set[str]]:
    """The stems of each sentence of a text, its negations kept as `not`."""
    found = []
    for sentence in SENTENCE.split(text):
        stems = content(sentence)
        if is_negative(sentence):
            stems.add("not")
        if stems:
            found.append(stems)
    return found


def carried(clause: str, stems: set[str], sentences: Callable[[], Iterable[set[str]]]) -> bool:
    """Whether a text whose content stems are `stems` carries `clause` in other words
    (`sentences()` gives its sentences, see `sentences_of`: they are read only for a
    negative constraint)."""
    constraint = is_constraint(clause)
    wanted = (object_of(clause) if constraint else set()) or content(clause)
    share = OBJECT_SHARE if constraint else INSTRUCTION_SHARE
    if not wanted or len(wanted & stems) < share * len(wanted):
        return False
    if not constraint:
        return True
    if not is_negative(clause):
        return True
    # a negative constraint: the sentences that hold its object must say it negatively
    holding = [s for s in sentences() if len(wanted & s) >= max(1, len(wanted) // 2)]
    return any("not" in s for s in holding)
