"""`condense report`: the page's structure on every dialect's real logs, what it says of
each condensation, hostile text kept inert, secrets masked, and the command's errors."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.dialects import read_log
from tests import stories
from tests.conftest import (
    ONE_OF_EACH,
    ROOT,
    condensation,
    corpus_copy,
    msg,
    require_corpus,
    run_action,
    run_obs,
)
from tests.terminal.page import Page

SHARED = ROOT.parent / "shared" / "corpus"


def corpus_folders() -> list[Path]:
    """Every dialect's folder of real logs."""
    require_corpus(SHARED)
    return [SHARED / folder for folder in ("claude-code", "codex", "openhands", "openhands-v1")]


def expected(log: str) -> tuple[int, int]:
    """Events of the history and of them in the view now, from the dialect's replay."""
    with read_log(log) as replay:
        history = [e for e in replay.history() if e is not None]
        keys = {e.key for e in history}
        in_view = sum(1 for e in replay.view() if e.key in keys)
    return len(history), in_view


def test_every_corpus_log_of_every_dialect_is_one_article_with_every_event(
    tmp_path: Path, proc, cli
) -> None:
    """One page for the whole corpus: an index row and an article per log; in each, a
    section per event of its history, a band per condensation, the events each band
    forgot, the events in view, as `stats` counts them."""
    folders = corpus_folders()
    out = tmp_path / "corpus.html"
    done = proc("report", *folders, "-o", out, "--no-tokens")
    assert done.returncode == 0, done.stderr.decode()
    page = Page(out.read_text())
    stats = orjson.loads(proc("stats", *folders, "--no-tokens", "-f", "json").stdout)["logs"]
    articles = [e for e in page.elements if e.tag == "article"]
    assert len(articles) == len(stats) == 39
    rows = [e for e in page.elements if e.tag == "a" and e.attrs.get("href", "").startswith("#l")]
    assert [r.attrs["href"] for r in rows[: len(stats)]] == [f"#{a.attrs['id']}" for a in articles]
    for article, report in zip(articles, stats, strict=True):
        log = article.attrs["id"]
        title = next(e for e in page.elements if e.log == log and e.tag == "h1")
        assert title.content == report["log"]
        sections = page.having("section", "event", log)
        gone = page.having("section", "gone", log)
        bands = page.having("details", "band", log)
        history, in_view = expected(report["log"])
        assert len(sections) == history, report["log"]
        assert len(sections) - len(gone) == in_view
        assert len(gone) == report["forgotten"]
        assert len(bands) == report["condensations"]
        if not bands:
            continue
        one = orjson.loads(cli("stats", report["log"], "--no-tokens", "-f", "json").stdout)
        for band, row in zip(bands, one["condensations"], strict=True):
            assert forgotten_by_band(page, log)[band.attrs["id"]] == row["forgotten_events"]
    # the real condensations: 7 in the longest V1 conversation, 1 in a Claude Code session
    counts = {r["log"].rstrip("/").rsplit("/", 1)[-1]: r["condensations"] for r in stats}
    assert counts["0535c419f44a4e248c72e40c77a06a32"] == 7


def forgotten_by_band(page: Page, log: str | None = None) -> dict[str, int]:
    """Each band's id -> the events listed as forgotten in it."""
    counts: dict[str, int] = {}
    band = ""
    for element in page.elements:
        if element.tag == "details" and "band" in element.classes:
            band = element.attrs["id"]
            counts[band] = 0
        elif element.tag == "li" and "forgot" in element.classes and element.log == log:
            counts[band] += 1
    return counts


@pytest.mark.parametrize("dialect", stories.DIALECTS)
def test_a_dialect_that_only_shows_its_view_gets_a_page_that_says_so(
    dialect: str, tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No refusal for a dialect that can neither step through its condensations nor
    read back its history: the page shows the view, without bands, and says what it
    cannot know."""
    from condense_cli.dialects import dialect_named

    chosen = type(dialect_named(dialect))
    read = chosen.replay_file

    def replay_file(self, source, **kwargs):  # type: ignore[no-untyped-def]
        replay = read(self, source, **kwargs)
        replay.__class__ = type("Viewing", (type(replay),), {"audits": False, "simulates": False})
        return replay

    monkeypatch.setattr(chosen, "replay_file", replay_file)
    log = stories.write(dialect, tmp_path / f"{dialect}.jsonl")
    out = tmp_path / "view.html"
    result = cli("report", log, "-o", out, "--no-tokens", "--dialect", dialect)
    assert result.exit_code == 0, result.output
    html = out.read_text()
    page = Page(html)
    assert not page.having("details", "band") and not page.having("section", "gone")
    assert "not audited for this dialect" in html and "(the view: no history)" in html
    assert stories.DONE in html and stories.FIRST not in html  # the view, nothing forgotten


@pytest.mark.parametrize("dialect", stories.able("audits", "simulates", condensed=True))
def test_a_condensation_band_shows_its_summary_what_it_forgot_and_what_it_lost(
    dialect: str, tmp_path: Path, cli
) -> None:
    log = stories.write(dialect, tmp_path / f"{dialect}.jsonl")
    out = tmp_path / "story.html"
    result = cli("report", log, "-o", out)
    assert result.exit_code == 0, result.output
    page = Page(out.read_text())
    (band,) = page.having("details", "band")
    assert stories.SUMMARY in band.content
    assert "Condensation 1" in band.content
    gone = page.having("section", "gone")
    assert forgotten_by_band(page, "l0") == {"l0-c1": len(gone)}
    assert len(gone) > 0
    # every event it forgot is marked so, linked to the band
    for section in gone:
        assert "forgotten by condensation 1" in section.content
    # what it lost: the failing command's output is in no summary; each lost fact links
    # to an event of the page
    lost = [e for e in page.elements if e.tag == "ul" and "lost" in e.classes]
    assert lost
    links = [e.attrs["href"][1:] for e in page.having("a", "seen")]
    assert links and set(links) <= page.ids
    # the summary covers links to the first and last event it forgot
    covers = re.findall(r'It covers <a href="#([^"]+)">', out.read_text())
    assert covers and covers[0] in page.ids
    # the user's first instruction is on the page, marked as said by the user
    said = page.having("section", "said")
    assert any(stories.FIRST in s.content for s in said)


HOSTILE = [
    "<script>document.title='owned'</script>",
    "</textarea><img src=x onerror=alert(1)>",
    '[click](javascript:alert(1)) <a href="javascript:alert(2)">here</a>',
    "bidi \u202etxt.exe\u202c and \u2066isolate\u2069",
    "--></style></svg><svg onload=alert(3)>",
]


def test_hostile_text_in_events_and_names_stays_inert(tmp_path: Path, make_log, cli) -> None:
    events = [msg(1, HOSTILE[0])]
    for i, text in enumerate(HOSTILE[1:], start=2):
        events += [run_action(2 * i), run_obs(2 * i + 1, 2 * i, content=text)]
    events.append(condensation(20, ids=[4, 5], summary=HOSTILE[1], offset=1))
    events.append(msg(21, HOSTILE[4]))
    name = "<b onmouseover=alert(4)>\u202elog.jsonl"
    log = make_log(events, name=name)
    out = tmp_path / "page.html"
    result = cli("report", log, "-o", out)
    assert result.exit_code == 0, result.output
    html = out.read_text()
    page = Page(html)
    scripts = [e for e in page.elements if e.tag == "script"]
    assert len(scripts) == 1 and "owned" not in scripts[0].content
    for element in page.elements:
        assert not [a for a in element.attrs if a.startswith("on")], element
        href = element.attrs.get("href")
        assert href is None or href.startswith("#"), element
        assert element.tag not in ("img", "textarea", "iframe", "object", "embed")
    assert "\u202e" not in html and "\u2066" not in html
    assert "\\u202e" in html  # shown as an escape, where it was
    # the text is all there, as text
    for text in HOSTILE[:2]:
        assert text in "".join(e.content for e in page.having("section", "event"))
    # the log's name (a file name may hold markup) is text in the title
    title = next(e for e in page.elements if e.tag == "h1")
    assert title.content.endswith("<b onmouseover=alert(4)>\\u202elog.jsonl")
    # no script runs but the page's own: its hash is the only one the policy allows
    policy = next(
        e for e in page.elements if e.attrs.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in policy.attrs["content"]
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'$", policy.attrs["content"])


def test_secrets_are_masked(tmp_path: Path, make_log, cli) -> None:
    log = make_log(
        [
            msg(1, "clone https://alice:hunter2secret@git.example.com/repo.git"),
            run_action(2),
            run_obs(3, 2, content="fetched https://bob:pa55word99@mirror.example.org/x"),
        ]
    )
    out = tmp_path / "page.html"
    assert cli("report", log, "-o", out).exit_code == 0
    html = out.read_text()
    assert "hunter2secret" not in html and "pa55word99" not in html
    assert "https://***@git.example.com/repo.git" in html


def test_the_page_says_its_version_and_command(tmp_path: Path, make_log, proc) -> None:
    log = make_log([msg(1, "hello")])
    out = tmp_path / "page.html"
    done = proc("report", log, "-o", out, "--no-tokens")
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stderr.decode()
    html = out.read_text()
    assert '<meta name="generator" content="condense 0.1.0">' in html
    footer = next(e for e in Page(html).elements if e.tag == "footer")
    assert footer.content == f"Made by condense 0.1.0: condense report {log} -o {out} --no-tokens"


def test_to_stdout(make_log, proc) -> None:
    log = make_log([msg(1, "hello there")])
    done = proc("report", log, "-o", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"<!DOCTYPE html>")
    assert b"hello there" in done.stdout


def test_a_bad_log_is_one_message_and_no_page(tmp_path: Path, make_log, proc) -> None:
    log = make_log(b'{"id": 1, "source": "user", "action": "message", "args": {}}\n{oops\n')
    out = tmp_path / "page.html"
    done = proc("report", log, "-o", out)
    assert done.returncode == 1, done.stderr
    err = done.stderr.decode()
    assert err.startswith(f"Error: {log}:2: invalid JSON") and "Traceback" not in err
    assert not out.exists()


def test_among_many_logs_a_bad_one_is_said_and_the_page_has_the_others(
    tmp_path: Path, make_log, proc
) -> None:
    good = make_log([msg(1, "first log")])
    bad = make_log(b"{oops\n", name="bad.jsonl")
    other = make_log([msg(1, "second log")])
    out = tmp_path / "page.html"
    done = proc("report", good, bad, other, "-o", out)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert "bad.jsonl" in err and "1 of 3 logs could not be read" in err
    page = Page(out.read_text())
    assert len([e for e in page.elements if e.tag == "article"]) == 2
    assert "2 logs" in out.read_text()


def test_when_no_log_can_be_read_no_page_is_written(tmp_path: Path, make_log, proc) -> None:
    bad = make_log(b"{oops\n", name="bad.jsonl")
    worse = make_log(b'{"id": 1}\n[\n', name="worse.jsonl")
    out = tmp_path / "page.html"
    done = proc("report", bad, worse, "-o", out)
    assert done.returncode == 1
    assert "2 of 2 logs could not be read" in done.stderr.decode()
    assert not out.exists()


def test_no_log_found(tmp_path: Path, cli) -> None:
    (tmp_path / "empty").mkdir()
    result = cli("report", tmp_path / "empty", "-o", tmp_path / "page.html")
    assert result.exit_code == 2
    assert "no log found" in result.output


def test_each_config_is_a_simulated_line_on_the_charts(tmp_path: Path, make_log, cli) -> None:
    events = [msg(1, "start")]
    for i in range(2, 60, 2):
        events += [run_action(i), run_obs(i + 1, i, content="x" * 200)]
    log = make_log(events)
    config = tmp_path / "window.toml"
    config.write_text('[condenser]\ntype = "amortized"\nmax_size = 20\nkeep_first = 1\n')
    out = tmp_path / "page.html"
    result = cli("report", log, "-o", out, "--config", config)
    assert result.exit_code == 0, result.output
    page = Page(out.read_text())
    lines = [e for e in page.elements if e.tag == "polyline"]
    assert len(lines) == 4  # this session and the config, on both charts
    assert "window.toml" in out.read_text()
    # the simulated view never grows past max_size events
    events_chart = [e for e in lines if e.content.strip() == "window.toml"][1]
    ys = [float(p.split(",")[1]) for p in events_chart.attrs["points"].split()]
    session = [e for e in lines if e.content.strip() == "this session"][1]
    session_ys = [float(p.split(",")[1]) for p in session.attrs["points"].split()]
    assert min(ys) > min(session_ys)  # lower on the page: fewer events


def test_a_long_session_waits_in_chunks(tmp_path: Path, make_log, cli) -> None:
    events = [msg(1, "start")]
    for i in range(2, 5000, 2):
        events += [run_action(i), run_obs(i + 1, i, content=f"output number {i}")]
    events.append(condensation(6000, start=2, end=2500, summary="the first half", offset=1))
    events.append(msg(6001, "the needle at the end"))
    log = make_log(events)
    out = tmp_path / "page.html"
    assert cli("report", log, "-o", out, "--no-tokens").exit_code == 0
    page = Page(out.read_text())
    templates = [e for e in page.elements if e.tag == "template"]
    assert len(templates) == 3  # 2,000 at once, then chunks of 1,000
    sections = page.having("section", "event")
    assert len(sections) == 5000
    assert "the needle at the end" in sections[-1].content
    assert len(page.having("details", "band")) == 1


def test_open_hands_the_page_to_the_browser(tmp_path: Path, make_log, proc) -> None:
    """`--open` asks the user's browser ($BROWSER, as Python's webbrowser reads it)."""
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    log = make_log([msg(1, "hello")])
    out = tmp_path / "page.html"
    env = {**os.environ, "BROWSER": f"{browser} %s"}
    done = proc("report", log, "-o", out, "--open", "--no-tokens", env=env)
    assert done.returncode == 0, done.stderr
    assert opened.read_text().strip() == out.resolve().as_uri()


@pytest.mark.parametrize("dialect", stories.able("audits", "simulates", condensed=True))
def test_a_log_read_by_the_fast_path_gives_the_page_of_the_exact_path(
    dialect: str, tmp_path: Path, proc
) -> None:
    """The page is laid out while the log is open: the events of a history read their
    texts from the log then (a big Claude Code session failed: "I/O operation on closed
    file"). The fast path's threshold moves for V0; the other dialects' histories read
    back on both (their big logs: `fast_paths.reported_alike`)."""
    log = stories.write(dialect, tmp_path / f"{dialect}.jsonl")
    pages, out = [], tmp_path / "story.html"
    for threshold in ("0", str(1 << 60)):  # the fast path for any size, then for none
        env = {**os.environ, "CONDENSE_FAST_MIN_BYTES": threshold}
        done = proc("report", log, "-o", out, "--no-tokens", env=env)
        assert done.returncode == 0, done.stderr.decode()
        pages.append(out.read_bytes())
    assert pages[0] == pages[1]
    assert stories.FIRST.encode() in pages[0]


def test_a_clients_threshold_says_it_is_the_clients_count(tmp_path: Path, proc) -> None:
    """The chart counts the view with condense's tokenizer; the client's threshold is in
    the tokens its usage records: the line says so."""
    from tests.dialects.claude_code.test_replay import POSTHOG

    require_corpus(POSTHOG.parent)
    out = tmp_path / "page.html"
    assert proc("report", POSTHOG, "-o", out).returncode == 0
    assert (
        "less 33,000 (Claude Code 2.1.112): 167,000 tokens as the client counts them (its "
        "usage), not as the chart does"
    ) in out.read_text()


def test_each_event_is_on_the_page_once_and_the_page_stays_near_the_sessions_size(
    tmp_path: Path, make_log, cli
) -> None:
    """A band listed the text of each event it forgot again, and a record may list
    events forgotten before: the page grew with condensations times events (81 MB to
    258 MB, issue 55, item 7). Each event's text is on the page once now."""
    events: list[dict[str, Any]] = [msg(0, "Fix the bug. Do not touch the tests.")]
    for k in range(400):
        i = len(events)
        events += [run_action(i), run_obs(i + 1, i, content="ok " * 40)]
        if k % 20 == 19:  # each condensation lists everything from the start again
            events.append(
                condensation(len(events), start=1, end=len(events) - 5, summary="S", offset=1)
            )
    log = make_log(events)
    out = tmp_path / "page.html"
    assert cli("report", log, "-o", out).exit_code == 0
    html = out.read_text()
    assert html.count("ok " * 40) == 400  # each output once, not once per band
    # (an event this small, 140 bytes, is outweighed by its markup: sessions as they
    # are stay well within twice their size)
    for dialect in ONE_OF_EACH:
        session = corpus_copy(dialect, tmp_path / dialect)
        page = tmp_path / f"{dialect}.html"
        assert cli("report", session, "-o", page).exit_code == 0
        size = sum(p.stat().st_size for p in session.rglob("*")) if session.is_dir() else None
        assert page.stat().st_size < 2 * (size or session.stat().st_size)


def test_a_lost_path_links_to_the_later_session_that_names_it_again(tmp_path: Path, proc) -> None:
    """The posthog session's compaction lost `.streamlit/config.toml`; a later session
    of the same project reads that file: the band's lost fact says so, with the
    command that shows the event. An earlier session naming it is not linked, and
    `--no-later` looks for nothing."""
    from tests.dialects.claude_code.test_replay import Builder

    require_corpus(SHARED)
    project = tmp_path / "project"
    project.mkdir()
    earlier = project / "posthog.jsonl"
    earlier.write_bytes(
        (SHARED / "claude-code" / "posthog-impact-dashboard.claude-session.jsonl").read_bytes()
    )
    lost = "/Users/linhungfan/personal_project/weave/.streamlit/config.toml"
    for name, day in (("later", "2026-12-01"), ("before", "2020-01-01")):
        b = Builder("claude-sonnet-4-5")
        b.user("Tidy the app.", timestamp=f"{day}T10:00:00Z")
        b.use("toolu_cat", "m1")
        b.result("toolu_cat", f"cat {lost}\n[theme]\nbase = 'dark'")
        b.lines[-1]["timestamp"] = f"{day}T10:00:06Z"
        for line in b.lines[1:]:  # (run where the posthog session was, as the client records)
            line["cwd"] = "/Users/linhungfan"
        b.write(project / f"{name}.jsonl")
    env = dict(os.environ, HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = proc("report", earlier, "-o", tmp_path / "page.html", env=env)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "page.html").read_text()
    later = project / "later.jsonl"
    assert f"this came up again in session <code>{later}</code> #4 (2026-12-01 10:00)" in page
    assert f"condense view {later} --upto 4" in page
    assert "before.jsonl" not in page
    done = proc("report", earlier, "--no-later", "-o", tmp_path / "plain.html", env=env)
    assert "this came up again" not in (tmp_path / "plain.html").read_text()
