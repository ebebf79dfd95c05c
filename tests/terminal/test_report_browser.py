"""`condense report` in a real browser: Debian's headless Chromium, driven by Playwright,
opens the page from disk with every request off the disk refused, runs its script with
no error, expands a condensation, finds a forgotten event, loads a long session's chunks
as they are needed, and leaves hostile text inert. Screenshots go to the test's folder."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.report import LAUNCH
from bench.report import chromium as installed_chromium
from condense_cli.dialects import read_log
from tests import stories
from tests.conftest import msg, run_action, run_obs
from tests.terminal.test_report import HOSTILE, SHARED, corpus_folders

pytestmark = pytest.mark.slow


def _needed(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, and CI is set, so the browser tests must run", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's Chromium (`make test` installs it), started once for the module."""
    executable = installed_chromium()
    if executable is None:
        _needed("no chromium on this machine (`make browser` installs Debian's, as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _needed("Playwright for Python is not installed (`pip install -e '.[test]'`)")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=LAUNCH)
        yield browser
        browser.close()


class Tab:
    """A page opened from disk: what it logged, what it asked of the network."""

    def __init__(
        self, browser: Any, path: Path, width: int = 1280, height: int = 800, fragment: str = ""
    ) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.refused: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", self._dialog)
        self.page.goto(path.resolve().as_uri() + fragment)

    def _route(self, route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.refused.append(route.request.url)
            route.abort()

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(message.text)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def top(self, selector: str) -> float:
        """Where an element is from the top of the window, in CSS pixels."""
        return float(self.page.eval_on_selector(selector, "e => e.getBoundingClientRect().top"))

    def count(self, selector: str) -> int:
        return int(self.page.evaluate(f"document.querySelectorAll({selector!r}).length"))

    def close(self) -> None:
        assert self.errors == [], self.errors
        assert self.refused == [], self.refused
        assert self.dialogs == [], self.dialogs
        self.context.close()


def report(cli: Any, out: Path, *logs: Path | str, options: tuple[str, ...] = ()) -> Path:
    result = cli("report", *logs, "-o", out, *options)
    assert result.exit_code == 0, result.output
    return out


def forgotten_text(log: Path) -> str:
    """A line of an event the first condensation of `log` forgot, found nowhere else."""
    with read_log(str(log)) as replay:
        step = next(replay.condensation_steps())
        others = "\n".join(e.text for e in replay.history() if e is not None and e.text)
        for event in step.forgotten:
            if event.tool_call is not None:
                continue  # its text is its call's arguments, which the page shows as JSON
            for line in event.text.splitlines():
                line = line.strip()
                if 30 <= len(line) <= 80 and others.count(line) == 1 and "\\" not in line:
                    return line
    raise AssertionError("no line to look for")


def test_a_corpus_page_in_chromium(chromium: Any, tmp_path: Path, cli) -> None:
    """A real V1 conversation (7 condensations) and a real Claude Code session (1)."""
    folders = corpus_folders()
    v1 = SHARED / "openhands-v1" / "0535c419f44a4e248c72e40c77a06a32"
    claude = folders[0] / "posthog-impact-dashboard.claude-session.jsonl"
    out = report(cli, tmp_path / "page.html", v1, claude)
    tab = Tab(chromium, out)
    page = tab.page
    assert page.title() == "condense report"
    tab.page.screenshot(path=tmp_path / "laptop.png")
    # a band opens on a click and shows its summary
    assert page.get_attribute("#l0-c1", "open") is None
    page.click("#l0-c1 > summary")
    assert page.get_attribute("#l0-c1", "open") == ""
    assert page.is_visible("#l0-c1 pre.summary")
    assert "USER_CONTEXT" in page.inner_text("#l0-c1 pre.summary")
    # n and p go from one condensation to the next, in order, under the sticky bar
    page.evaluate("window.scrollTo(0, 0)")
    page.keyboard.press("n")
    assert 0 <= tab.top("#l0-c1") <= 120
    page.keyboard.press("n")
    assert 0 <= tab.top("#l0-c2") <= 120
    page.keyboard.press("p")
    assert 0 <= tab.top("#l0-c1") <= 120
    # find: a line only a forgotten event holds
    needle = forgotten_text(v1)
    page.click("#find")
    page.keyboard.type(needle)
    page.keyboard.press("Enter")
    page.wait_for_selector(".hit")
    hit = page.query_selector(".hit")
    assert hit is not None
    assert "gone" in (hit.get_attribute("class") or "")
    assert needle.lower() in hit.inner_text().lower()
    assert 0 <= tab.top(".hit") <= 800
    assert page.inner_text("#found").endswith("of 1")
    # the toggle hides what was forgotten; the second log's index row leads to it
    page.check("#only-view")
    assert not hit.is_visible()
    page.evaluate("window.scrollTo(0, 0)")
    page.click('.index a[href="#l1"]')
    assert 0 <= tab.top("#l1") <= 120
    tab.close()
    phone = Tab(chromium, out, 390, 844)
    phone.page.screenshot(path=tmp_path / "phone.png")
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing wider than the phone
    phone.close()
    for name in ("laptop.png", "phone.png"):
        assert (tmp_path / name).stat().st_size > 10_000


def test_a_long_session_loads_its_chunks_when_needed(
    chromium: Any, tmp_path: Path, cli, make_log
) -> None:
    events = [msg(1, "start")]
    for i in range(2, 5000, 2):
        events += [run_action(i), run_obs(i + 1, i, content=f"output number {i}")]
    events.append(msg(5001, "the needle at the end"))
    out = report(cli, tmp_path / "page.html", make_log(events), options=("--no-tokens",))
    tab = Tab(chromium, out)
    page = tab.page
    assert tab.count("section.event") == 2000
    page.click("#find")
    page.keyboard.type("needle at the end")
    page.keyboard.press("Enter")
    page.wait_for_selector(".hit")
    assert page.inner_text(".hit").count("the needle at the end") == 1
    assert tab.count("section.event") == 2000 + 1000  # the last chunk alone
    # scrolling to the end of what is shown brings the next chunk in
    page.evaluate("document.querySelector('#l0-e1999').scrollIntoView()")
    page.wait_for_function("() => document.querySelectorAll('section.event').length > 3000")
    assert tab.count("section.event") == 4000
    assert page.is_visible("#l0-e2000")  # the chunk after the first, in its place
    tab.close()


def test_hostile_text_stays_inert_in_chromium(chromium: Any, tmp_path: Path, cli, make_log) -> None:
    events = [msg(1, HOSTILE[0])]
    for i, text in enumerate(HOSTILE[1:], start=2):
        events += [run_action(2 * i), run_obs(2 * i + 1, 2 * i, content=text)]
    out = report(cli, tmp_path / "page.html", make_log(events, name="<i>x<|i>.jsonl"))
    tab = Tab(chromium, out)
    page = tab.page
    assert page.title() == "condense report: " + str(out.parent / "<i>x<|i>.jsonl")
    assert tab.count("img, iframe, textarea, svg[onload]") == 0
    assert "<script>document.title='owned'</script>" in page.inner_text("#l0-e0")
    for link in page.query_selector_all("a"):
        assert (link.get_attribute("href") or "#").startswith("#")
    tab.close()


def test_an_address_that_does_not_decode_opens_the_page(
    chromium: Any, tmp_path: Path, cli, make_log
) -> None:
    """A fragment cut short (`#%E0%A4%A`) threw "URI malformed" in the page's script
    (issue 55, item 17): it is taken as it is, and the page works on."""
    events = [msg(i, f"message {i}") for i in range(1, 81)]
    out = report(cli, tmp_path / "page.html", make_log(events))
    tab = Tab(chromium, out, fragment="#%E0%A4%A")
    tab.page.evaluate("location.hash = '#%E0%A4'")
    tab.page.evaluate("location.hash = '#l0-e60'")  # and the page still goes where asked
    for _ in range(100):
        if 0 <= tab.top("#l0-e60") <= 120:
            break
        time.sleep(0.05)
    assert 0 <= tab.top("#l0-e60") <= 120
    tab.close()  # no page errors


def test_every_dialect_story_opens_without_errors(chromium: Any, tmp_path: Path, cli) -> None:
    logs = [
        stories.write(d, tmp_path / f"{d}.jsonl")
        for d in stories.able("audits", "simulates", condensed=True)
    ]
    out = report(cli, tmp_path / "page.html", *logs)
    tab = Tab(chromium, out)
    assert tab.count("details.band") == len(logs)
    tab.page.keyboard.press("n")
    assert tab.page.get_attribute("#l0-c1", "open") == ""
    tab.close()
