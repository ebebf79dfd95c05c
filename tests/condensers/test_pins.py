"""Pins: facts every condensation must carry, events it must never forget."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from condense_cli.core.pins import add_pin, pins_path, read_pins
from tests.conftest import lines_of, msg
from tests.fake_llm import FakeLLM

PIN = "keep the API stable"


def session(path: Path) -> Path:
    """Two user messages (the second holds the pin), then eighteen agent steps."""
    events = [msg(0, "Fix the parser"), msg(1, f"Also {PIN}")]
    events += [msg(i, f"step {i}", source="agent") for i in range(2, 20)]
    path.write_bytes(lines_of(events))
    return path


def test_pins_are_kept_beside_the_log_once_each(tmp_path: Path, cli) -> None:
    log = session(tmp_path / "s.jsonl")
    before = log.read_bytes()
    assert cli("pin", log, PIN).exit_code == 0
    assert add_pin(str(log), PIN) is False  # once
    assert read_pins(str(log)) == [PIN]
    assert cli("pin", log, "--list").stdout == f"{PIN}\n"
    assert orjson.loads(pins_path(str(log)).read_bytes()) == {"pins": [PIN]}
    assert log.read_bytes() == before  # never in the log
    assert cli("pin", log, " ").exit_code == 2


def test_a_condensation_that_drops_a_pin_is_refused(tmp_path: Path, cli) -> None:
    log = session(tmp_path / "s.jsonl")
    cli("pin", log, PIN)
    before = log.read_bytes()
    refused = cli("run", log, "-t", "amortized", "-s", "max_size=8")
    assert refused.exit_code == 3
    assert (
        f"the condensation would drop the pin '{PIN}', held by event #1: nothing appended"
        in refused.stderr
    )
    assert "Hint: keep it with `--pin-event 1`" in refused.stderr
    assert log.read_bytes() == before
    # pinning the event that holds it, as the hint says, keeps it (and the run goes on)
    done = cli("run", log, "-t", "amortized", "-s", "max_size=8", "--pin-event", "1")
    assert done.exit_code == 0, done.stderr
    view = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert 1 in [e["id"] for e in view["events"]]
    assert cli("check", "--strict", log).exit_code == 0
    assert cli("run", log, "--pin-event", "404", "-t", "amortized").exit_code == 2


def test_a_pin_from_the_config_is_carried_verbatim_by_the_summary(
    tmp_path: Path, cli, config: Path, fake: FakeLLM
) -> None:
    log = session(tmp_path / "s.jsonl")
    config.write_text(config.read_text() + f'\n[condenser]\ntype = "llm"\npins = ["{PIN}"]\n')
    fake.text("The user wants the parser fixed.").text(f"The user wants the parser fixed; {PIN}.")
    done = cli("run", log, "-c", config, "-s", "max_size=8")
    assert done.exit_code == 0, done.stderr
    assert f"- pins: {PIN}" in fake.prompt(0)
    assert PIN in fake.prompt(1) and "lost these facts" in fake.prompt(1)
    view = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert PIN in view["summary"]


def test_the_configs_and_the_logs_pins_reach_the_summariser_once_each_in_a_pipeline(
    tmp_path: Path, cli, config: Path, fake: FakeLLM
) -> None:
    """Pins are one value handed to the condensation on its view: a pipeline's
    summarising stage names the config's pin and the log's, each once, and the
    condenser keeps no pins of its own between runs."""
    from condense_cli.config.loading import configured_condenser

    log = session(tmp_path / "s.jsonl")
    cli("pin", log, "Fix the parser")
    config.write_text(
        config.read_text()
        + f'\n[condenser]\ntype = "pipeline"\npins = ["{PIN}", "Fix the parser"]\n'
        + '[[condenser.condensers]]\ntype = "llm"\nmax_size = 8\n'
    )
    fake.text(f"Fix the parser; {PIN}.")
    done = cli("run", log, "-c", config)
    assert done.exit_code == 0, done.stderr
    prompt = fake.prompt(0)
    assert prompt.count(f"- pins: {PIN}") == 1 and prompt.count("- pins: Fix the parser") == 1
    condenser = configured_condenser(str(config), None, None).condenser
    assert not hasattr(condenser, "pins") and not hasattr(condenser, "set_pins")


def test_a_summary_that_never_carries_the_pin_is_refused(
    tmp_path: Path, cli, config: Path, fake: FakeLLM
) -> None:
    log = session(tmp_path / "s.jsonl")
    config.write_text(config.read_text() + f'\n[condenser]\ntype = "llm"\npins = ["{PIN}"]\n')
    fake.text("The parser.").text("The parser, again.")
    before = log.read_bytes()
    refused = cli("run", log, "-c", config, "-s", "max_size=8")
    assert refused.exit_code == 3 and "would drop the pin" in refused.stderr
    assert log.read_bytes() == before


def test_audit_and_check_report_the_pins_a_compaction_dropped(tmp_path: Path, cli) -> None:
    log = session(tmp_path / "s.jsonl")
    assert cli("run", log, "-t", "amortized", "-s", "max_size=8").exit_code == 0  # no pin yet
    cli("pin", log, PIN)
    checked = cli("check", log)
    assert f"{log}:21: warning: this compaction dropped the pin '{PIN}'" in checked.stdout
    data = orjson.loads(cli("audit", log, "-f", "json").stdout_bytes)
    [condensation] = data["condensations"]
    assert condensation["lost"][0] == {"kind": "pins", "fact": PIN}


@pytest.mark.parametrize("bad", ['"one"', "[1, 2]"])
def test_config_pins_must_be_a_list_of_texts(bad: str, tmp_path: Path, cli) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f"[condenser]\npins = {bad}\n")
    result = cli("config", "-c", config)
    assert result.exit_code == 2
    assert "[condenser] pins must be a list of texts" in result.stderr


# --- on every dialect's real logs ----------------------------------------------------

SHARED = Path(__file__).resolve().parents[3] / "shared" / "corpus"
CORPUS_LOGS = {
    "openhands-v0": "openhands/ponylang-ponyc-4588.jsonl",
    "openhands-v1": "openhands-v1/0535c419f44a4e248c72e40c77a06a32",
    "claude-code": "claude-code/FundWise.claude-session.jsonl",
    "codex": "codex/FundWise.codex-session.jsonl",
}
RULE_CONDENSERS = ["amortized_forgetting", "conversation_window", "recent_events"]


def corpus_copy(dialect: str, tmp_path: Path) -> Path:
    from tests.conftest import require_corpus

    source = SHARED / CORPUS_LOGS[dialect]
    require_corpus(source.parent)
    target = tmp_path / source.name
    if source.is_dir():
        import shutil

        shutil.copytree(source, target)
    else:
        target.write_bytes(source.read_bytes())
    return target


def first_words(cli, log: Path) -> str:
    """A pin the view holds: the first words of its first user message."""
    view = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    from condense_cli.dialects import read_log

    with read_log(str(log)) as replay:
        said = next(e.text for e in replay.view() if e.is_instruction and len(e.text) > 20)
    assert view["events"]
    return " ".join(said.split()[:6])


@pytest.mark.parametrize("condenser", RULE_CONDENSERS)
@pytest.mark.parametrize("dialect", list(CORPUS_LOGS))
def test_a_pin_survives_every_run_or_the_run_is_refused(
    dialect: str, condenser: str, tmp_path: Path, cli
) -> None:
    log = corpus_copy(dialect, tmp_path)
    pin = first_words(cli, log)
    assert cli("pin", log, pin).exit_code == 0
    size = {"conversation_window": [], "recent_events": ["-s", "max_events=12"]}.get(
        condenser, ["-s", "max_size=12"]
    )
    before = sorted(p.stat().st_size for p in log.rglob("*")) if log.is_dir() else log.read_bytes()
    done = cli("run", log, "-t", condenser, *size, "--force")
    if done.exit_code == 3:
        assert "would drop the pin" in done.stderr
        after = (
            sorted(p.stat().st_size for p in log.rglob("*")) if log.is_dir() else log.read_bytes()
        )
        assert after == before
        return
    assert done.exit_code == 0, done.stderr
    from condense_cli.core.pins import carried
    from condense_cli.dialects import read_log

    with read_log(str(log)) as replay:
        assert carried([pin], list(replay.view())) == {pin}


LLM_CONDENSERS = ["llm", "structured_summary", "llm_attention", "pipeline"]


def script(fake: FakeLLM, condenser: str, pin: str) -> None:
    """What the scripted model answers every request with: a summary that carries
    the pin (in a section for structured summaries), or no ids to keep."""
    from condense_cli.condensers.summarizing import STATE_FIELDS

    if condenser == "structured_summary":
        said = dict.fromkeys(STATE_FIELDS, "") | {"user_context": f"The user said: {pin}."}
        fake.tool_call("create_state_summary", said).forever()
    elif condenser == "llm_attention":
        fake.json({"ids": []}).forever()
    else:
        fake.text(f"Work so far on the task. The user said: {pin}.").forever()


@pytest.mark.parametrize("condenser", LLM_CONDENSERS)
@pytest.mark.parametrize("dialect", list(CORPUS_LOGS))
def test_a_pin_survives_every_llm_run_or_the_run_is_refused(
    dialect: str, condenser: str, tmp_path: Path, cli, config: Path, fake: FakeLLM
) -> None:
    """The summarising condensers carry the pin verbatim; attention keeps events,
    and when it would forget the one holding the pin the run is refused, until that
    event is pinned."""
    log = corpus_copy(dialect, tmp_path)
    pin = first_words(cli, log)
    assert cli("pin", log, pin).exit_code == 0
    table = f'type = "{condenser}"\nmax_size = 12\nkeep_first = 1\n'
    if condenser == "pipeline":
        table = (
            'type = "pipeline"\n[[condenser.condensers]]\ntype = "observation_masking"\n'
            'attention_window = 4\n[[condenser.condensers]]\ntype = "llm"\nmax_size = 12\n'
        )
    config.write_text(config.read_text() + "\n[condenser]\n" + table)
    script(fake, condenser, pin)
    before = sorted(p.stat().st_size for p in log.rglob("*")) if log.is_dir() else log.read_bytes()
    done = cli("run", log, "-c", config, "--force")
    from condense_cli.core.pins import carried
    from condense_cli.dialects import read_log

    if done.exit_code == 3:  # attention forgot the message that holds the pin
        assert condenser == "llm_attention" and "would drop the pin" in done.stderr
        after = (
            sorted(p.stat().st_size for p in log.rglob("*")) if log.is_dir() else log.read_bytes()
        )
        assert after == before
        # the event that holds it, pinned, is kept: the run goes on and the pin survives
        with read_log(str(log)) as replay:
            holder = next(e for e in replay.view() if carried([pin], [e]))
        fake.json({"ids": []}).forever()
        done = cli("run", log, "-c", config, "--force", "--pin-event", str(holder.id))
    assert done.exit_code == 0, done.output
    assert fake.requests, "the model was asked"
    assert any(f"- pins: {pin}" in fake.prompt(i) for i in range(len(fake.requests))) or (
        condenser == "llm_attention"
    )
    with read_log(str(log)) as replay:
        view = list(replay.view())
        assert carried([pin], view) == {pin}
        if condenser != "llm_attention":  # the new summary carries it verbatim
            assert pin in next(e.text for e in view if e.is_summary)
    assert cli("check", log).exit_code == 0


def test_pin_and_a_refused_run_through_real_processes(tmp_path: Path, proc) -> None:
    log = session(tmp_path / "s.jsonl")
    pinned = proc("pin", log, PIN)
    assert pinned.returncode == 0 and pinned.stderr.decode().startswith("held by event #1\n")
    assert "pinned in " in pinned.stderr.decode()
    before = log.read_bytes()
    refused = proc("run", log, "-t", "amortized", "-s", "max_size=8")
    assert refused.returncode == 3
    assert b"would drop the pin" in refused.stderr and b"Traceback" not in refused.stderr
    assert log.read_bytes() == before
    assert proc("pin", log, "--list").stdout == f"{PIN}\n".encode()


def test_audit_says_where_each_compaction_fired(cli) -> None:
    from tests.dialects.openhands_v1.test_replay import corpus as v1_corpus

    folder = v1_corpus("0535c419f44a4e248c72e40c77a06a32")
    data = orjson.loads(cli("audit", folder, "-f", "json").stdout_bytes)
    assert [c["threshold"]["fired"] for c in data["condensations"]] == ["at"] * 7
    assert "; fired at (82 against 81 events)" in cli("audit", folder).stdout


def test_audit_lists_the_pins_the_corpus_compaction_lost(tmp_path: Path, cli) -> None:
    """The posthog compaction (Claude Code's own) quoted the user's points but cut
    one sentence short: a pin on the part it cut is reported lost, one on a part it
    quoted is kept."""
    from tests.conftest import require_corpus

    posthog = (
        require_corpus(SHARED / "claude-code") / "posthog-impact-dashboard.claude-session.jsonl"
    )
    log = tmp_path / posthog.name
    log.write_bytes(posthog.read_bytes())
    kept, lost = "Bot 排除不要只靠「已知名單」", "survival rate 可能普遍接近 100%"
    cli("pin", log, kept)
    cli("pin", log, lost)
    data = orjson.loads(cli("audit", log, "-f", "json").stdout_bytes)
    [condensation] = data["condensations"]
    assert condensation["kinds"]["pins"]["facts"] == 2
    assert condensation["lost"][0] == {"kind": "pins", "fact": lost}
    assert f"this compaction dropped the pin '{lost}'" in cli("check", log).stdout


def test_a_pin_no_event_holds_is_warned_about(tmp_path: Path, proc) -> None:
    """A pin in no event of the log is taken (it may be a fact the summary must state
    from now on) but said to be in none: a typo would otherwise go unseen."""
    log = session(tmp_path / "s.jsonl")
    said = proc("pin", log, "I choose Render with SQLite")
    assert said.returncode == 0
    assert said.stderr.decode().startswith(
        f"Warning: no event of {log} holds 'I choose Render with SQLite'"
    )
    assert read_pins(str(log)) == ["I choose Render with SQLite"]
    held = proc("pin", log, "  KEEP the api   stable ")  # spaces and case aside
    assert held.stderr.decode().startswith("held by event #1\n"), held.stderr


def test_a_pins_file_is_read_as_it_is_and_kept_so(tmp_path: Path, proc) -> None:
    """Issue 55, item 15: '{"pins": "abc"}' was read as three pins; extra keys were
    dropped on a rewrite; a FIFO in its place hung."""
    import os

    log = session(tmp_path / "s.jsonl")
    side = pins_path(str(log))
    side.write_text('{"pins": "abc"}')
    bad = proc("pin", log, "--list")
    assert bad.returncode == 1 and b"is not a pins file" in bad.stderr
    side.write_text('{"pins": ["one"], "note": "kept by hand"}')
    assert proc("pin", log, PIN).returncode == 0
    assert orjson.loads(side.read_bytes()) == {"pins": ["one", PIN], "note": "kept by hand"}
    side.unlink()
    os.mkfifo(side)
    fifo = proc("pin", log, "--list")  # (a hang fails at its time-out)
    assert fifo.returncode == 1 and b"not a regular file" in fifo.stderr
