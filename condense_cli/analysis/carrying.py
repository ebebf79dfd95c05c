"""Whether texts still carry facts: a text scanned once for the paths, URLs and words
facts are looked up by (`Scanned`), and the facts of a set looked up in it (`Memory`),
by the rules `facts` states.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from functools import cached_property, lru_cache
from typing import Any

from condense_cli.analysis.clauses import OBJECT_SHARE, SENTENCE, carried, content, sentences_of
from condense_cli.analysis.facts import (
    PATH_CHARS,
    SAID,
    TROUBLE_WORDS,
    URL,
    Fact,
    components,
    normal_path,
    normal_url,
    paths_in,
    squash,
)
from condense_cli.core.events import Event


class Scanned:
    """What a memory takes of one text: the text squashed, and, when first asked, the
    paths it names (as components) and its URLs, in the order they come. Most texts
    of a view are never asked: a path or a URL is looked for only in the texts that
    hold its name."""

    __slots__ = ("_paths", "_urls", "squashed", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.squashed = squash(text)
        self._paths: tuple[tuple[str, ...], ...] | None = None
        self._urls: tuple[str, ...] | None = None

    @property
    def paths(self) -> tuple[tuple[str, ...], ...]:
        if self._paths is None:
            found = []
            for raw in paths_in(self.text):
                path = normal_path(raw)
                if path is not None and (parts := components(path)):
                    found.append(parts)
            self._paths = tuple(found)
        return self._paths

    @property
    def urls(self) -> tuple[str, ...]:
        if self._urls is None:
            self._urls = tuple(normal_url(u) for u in URL.findall(self.text))
        return self._urls


class Scans:
    """The texts of the last view scanned, by text: the next view holds most of them
    again (the events a condensation keeps), and they are not scanned twice."""

    def __init__(self) -> None:
        self.last: dict[str, Scanned] = {}

    def memory(self, texts: Iterable[str]) -> Memory:
        """`Memory.of(texts)`, scanning only the texts the last view did not hold."""
        last = self.last
        now: dict[str, Scanned] = {}
        found = []
        for text in texts:
            if not text:
                continue
            scan = now.get(text)
            if scan is None:
                scan = now[text] = last.get(text) or Scanned(text)
            found.append(scan)
        self.last = now
        return Memory(found)


# A memory about to be asked for this many facts indexes its words first: the index
# costs about 100 scans of its texts, and spares about half the scans after it.
INDEX_MIN_FACTS = 400


class Memory:
    """Texts (a summary, or the events a view holds) made ready to look facts up in.

    A path is looked for only in the texts that hold its file name (any path whose
    components end so names it), a URL only when the texts hold it case-folded: the
    texts are not all scanned for paths and URLs. A memory about to be asked for many
    facts indexes its words (`index_words`), and is then not scanned for a text one
    of whose words it lacks (`holds`)."""

    def __init__(self, scans: list[Scanned], loose: bool = False) -> None:
        self.scans = scans
        self.flat = "\n".join(s.squashed for s in scans)
        self.loose = loose  # a summary: a clause may be carried in other words
        self._words: set[str] | None = None  # once `index_words` made them
        self._starts: list[int] = []  # where each text starts in `flat`
        at = 0
        for scan in scans:
            self._starts.append(at)
            at += len(scan.squashed) + 1

    @classmethod
    def of(cls, texts: Iterable[str], loose: bool = False) -> Memory:
        """`loose` for a summary, which may carry an instruction in its own words."""
        return cls([Scanned(t) for t in texts if t], loose)

    # What a summary is read for when it does not hold a fact as written, made when
    # first asked (most facts are paths, or held as written).

    @cached_property
    def stems(self) -> set[str]:
        """(A summary's) content words."""
        return content(self.flat)

    @cached_property
    def sentences(self) -> list[set[str]]:
        """(A summary's) content words, sentence by sentence."""
        return [s for scan in self.scans for s in sentences_of(scan.text)]

    @cached_property
    def said(self) -> list[str]:
        """(A summary's) sentences, squashed."""
        return [squash(x) for scan in self.scans for x in SENTENCE.split(scan.text) if x.strip()]

    def holding(self, name: str) -> Iterator[Scanned]:
        """The texts that may name a path with a component `name`, each once, in
        order: those whose squashed text holds it (case-folded; such a component is
        made of `PATH_CHARS`, none of them white space)."""
        if not PATH_CHARS.fullmatch(name):
            return
        flat, starts, scans, folded = self.flat, self._starts, self.scans, name.lower()
        at = flat.find(folded)
        while at >= 0:
            index = bisect_right(starts, at) - 1
            yield scans[index]
            if index + 1 == len(starts):
                break
            at = flat.find(folded, starts[index + 1])

    def paths_named(self, name: str) -> list[tuple[str, ...]]:
        """The paths (as components) of the texts whose file name is `name`."""
        return [p for scan in self.holding(name) for p in scan.paths if p[-1] == name]

    @cached_property
    def urls(self) -> set[str]:
        """Every URL of the texts (normalised)."""
        return {u for scan in self.scans for u in scan.urls}

    def carries(self, fact: Fact, unique_names: set[str] | frozenset[str] = frozenset()) -> bool:
        """Whether this memory still holds `fact`; `unique_names` are the file names
        that only one path of the audited set has (a bare mention of one counts)."""
        if fact.kind == "paths":
            return self._has_path(fact.key, unique_names)
        if fact.kind == "urls":
            key = fact.key
            if key.casefold() not in self.flat and not key.endswith("://"):
                return False  # a URL a text names is in its squashed text (but one cut to
                # its scheme, `http:///` read as `http:://`): its URLs need no scan
            return key in self.flat or key in self.urls
        if any(self.holds(key) for key in fact.keys):
            return True
        if not self.loose:
            return False
        if fact.kind in SAID:
            return carried(fact.key, self.stems, lambda: self.sentences)
        if fact.kind == "tasks":  # in other words: its title's words but the verb
            wanted = content(fact.key.split(" ", 1)[-1])
            return bool(wanted) and len(wanted & self.stems) >= OBJECT_SHARE * len(wanted)
        if fact.names and all(self._names(n, unique_names) for n in fact.names):
            return True
        return bool(fact.topics) and self._reports(fact.topics, fact.package)

    def index_words(self) -> None:
        """Index the words of the texts, for `holds`. Making the index costs about
        what 100 scans of the texts do."""
        self._words = set(self.flat.replace("\n", " ").split(" "))

    def holds(self, key: str) -> bool:
        """`key in self.flat`, for a squashed text. With the words indexed, a key is
        not looked for when a word inside it (with a space on both sides) is no word
        of the texts: a match would have that word whole between two spaces."""
        words = self._words
        if words is not None and "\n" not in key:
            inside = key.split(" ")[1:-1]
            if any(word not in words for word in inside):
                return False
        return key in self.flat

    def _names(self, name: str, unique_names: set[str] | frozenset[str]) -> bool:
        """Whether a summary names `name` (see `Fact.names`)."""
        for one in name.split("|"):
            if " " not in one and ("/" in one or one.endswith(".py")):
                path = normal_path(one)
                if path is not None and self._has_path(path, unique_names):
                    return True
            elif _holds_word(self.flat, one):
                return True
        return False

    def _reports(self, topics: tuple[str, ...], package: str) -> bool:
        """Whether a sentence reports trouble with one of `topics`, naming `package`
        when there is one."""
        named = _word(package) if package else None
        return any(
            any(w in sentence for w in topics)
            and any(w in sentence for w in TROUBLE_WORDS)
            and (named is None or named.search(sentence) is not None)
            for sentence in self.said
        )

    def _has_path(self, path: str, unique_names: set[str] | frozenset[str]) -> bool:
        parts = components(path)
        if not parts:
            return False
        for other in self.paths_named(parts[-1]):
            short, long = (parts, other) if len(parts) <= len(other) else (other, parts)
            if long[len(long) - len(short) :] != short:
                continue
            if len(short) >= 2 or len(parts) == 1 or parts[-1] in unique_names:
                return True
        return "." not in parts[-1] and self._names_under(parts)

    def _names_under(self, folder: tuple[str, ...]) -> bool:
        """Whether a path under `folder` is named (by the folder's last two names, or
        its one name when it has only one): a directory is carried by its files."""
        tail = folder[-2:]
        return any(
            other[i : i + len(tail)] == tail
            for scan in self.holding(tail[-1])
            for other in scan.paths
            for i in range(len(other) - len(tail))
        )


def _holds_word(text: str, name: str) -> bool:
    """Whether a squashed text holds `name` as a word (see `_word`); the pattern is
    tried only where the text holds its letters."""
    return squash(name.rstrip("*")) in text and _word(name).search(text) is not None


@lru_cache(maxsize=1 << 12)  # an audit looks for the same names in each summary
def _word(name: str) -> re.Pattern[str]:
    """`name` as a word of a squashed text (`install*`: any word that starts so)."""
    stem = name.endswith("*")
    body = re.escape(squash(name.rstrip("*")))
    return re.compile(rf"(?<![\w-]){body}" + ("" if stem else r"(?![\w-])"))


def unique_names(facts: Iterable[Fact]) -> set[str]:
    """File names that one file of the path facts has (a file written two ways,
    `/repo/src/app.py` and `src/app.py`, is one file)."""
    by_name: dict[str, list[tuple[str, ...]]] = {}
    for fact in facts:
        if fact.kind == "paths":
            parts = components(fact.key)
            if parts:
                by_name.setdefault(parts[-1], []).append(parts)
    return {name for name, paths in by_name.items() if _one_file(paths)}


def _one_file(paths: list[tuple[str, ...]]) -> bool:
    """Whether every path is a tail of the longest one."""
    longest = max(paths, key=len)
    return all(longest[len(longest) - len(p) :] == p for p in paths)


def event_texts(event: Event) -> Iterator[str]:
    """What a memory reads of an event: its text, thought, and its tool's string
    arguments as they are (a JSON text escapes quotes and new lines)."""
    yield event.text
    if event.thought:
        yield event.thought
    call = event.tool_call
    if call is not None:
        yield from _strings(call[1])


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
