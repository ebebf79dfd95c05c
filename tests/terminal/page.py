"""A report page read back with the standard library's HTML parser, for the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"meta", "input", "br", "img", "hr", "link", "wbr", "source", "col", "area", "base"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    log: str | None  # the id of the <article> it is in
    text: list[str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    @property
    def content(self) -> str:
        return "".join(self.text)


class Page(HTMLParser):
    """Every element in order, with its attributes, its log, and the text inside it
    (kept for an element with an id, but an article, and for titles, lines, the footer)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.open: list[Element] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        log = next((e.attrs.get("id") for e in reversed(self.open) if e.tag == "article"), None)
        element = Element(tag, {k: v or "" for k, v in attrs}, log)
        self.elements.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        log = next((e.attrs.get("id") for e in reversed(self.open) if e.tag == "article"), None)
        self.elements.append(Element(tag, {k: v or "" for k, v in attrs}, log))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.open) - 1, -1, -1):
            if self.open[depth].tag == tag:
                del self.open[depth:]
                return

    def handle_data(self, data: str) -> None:
        for element in self.open:
            if element.tag in ("h1", "footer", "polyline") or (
                "id" in element.attrs and element.tag != "article"
            ):
                element.text.append(data)

    def having(self, tag: str, cls: str, log: str | None = None) -> list[Element]:
        """The elements `<tag class="... cls ...">` (of one log's article)."""
        return [
            e
            for e in self.elements
            if e.tag == tag and cls in e.classes and (log is None or e.log == log)
        ]

    def by_id(self, id: str) -> Element:
        return next(e for e in self.elements if e.attrs.get("id") == id)

    @property
    def ids(self) -> set[str]:
        return {e.attrs["id"] for e in self.elements if "id" in e.attrs}
