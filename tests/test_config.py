"""Configuration: lookup order, overrides, effective TOML, and every mistake as exit 2."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from condense_cli.config import LLMTables, build_condenser, load_condenser, load_settings
from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test in an empty directory with no $CONDENSE_CONFIG."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_no_file_means_noop() -> None:
    assert load_condenser(load_settings()).name == "noop"


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "config.toml", '[condenser]\ntype = "recent"\n')
    assert load_condenser(load_settings()).name == "recent_events"
    env = write(tmp_path / "env.toml", '[condenser]\ntype = "amortized"\n')
    monkeypatch.setenv("CONDENSE_CONFIG", str(env))
    assert load_condenser(load_settings()).name == "amortized_forgetting"
    explicit = write(tmp_path / "explicit.toml", '[condenser]\ntype = "browser_output"\n')
    assert load_condenser(load_settings(str(explicit))).name == "browser_output"


def test_type_and_set_override_the_file(tmp_path: Path) -> None:
    write(tmp_path / "config.toml", '[condenser]\ntype = "amortized"\nmax_size = 50\n')
    condenser = load_condenser(load_settings(sets=["max_size=20", "condenser.keep_first=0"]))
    assert (condenser.config.max_size, condenser.config.keep_first) == (20, 0)
    other = load_settings(type_override="observation_masking")
    assert other.notes == [
        "--type observation_masking: ignoring [condenser] keys of the configured type: max_size"
    ]
    assert load_condenser(other).config.attention_window == 5


def test_set_llm_keys_by_dotted_path() -> None:
    settings = load_settings(sets=["llm.model=other-model", "llm.fast.model=m2", "llm.timeout=5"])
    assert settings.llm == {"model": "other-model", "fast": {"model": "m2"}, "timeout": 5}


def test_config_command_prints_effective_toml(cli, tmp_path: Path) -> None:
    write(
        tmp_path / "c.toml",
        '[condenser]\ntype = "pipeline"\n[[condenser.condensers]]\ntype = "browser_output"\n'
        '[[condenser.condensers]]\ntype = "amortized"\nmax_size = 80\n'
        '[llm]\nmodel = "m"\napi_key = "sk-secret-123"\n[llm.fast]\nmodel = "f"\n',
    )
    result = cli("config", "--config", tmp_path / "c.toml")
    assert result.exit_code == 0
    assert "sk-secret-123" not in result.stdout
    data = tomllib.loads(result.stdout)
    assert data["condenser"] == {
        "type": "pipeline",
        "condensers": [
            {"type": "browser_output", "attention_window": 1},
            {"type": "amortized_forgetting", "max_size": 80, "keep_first": 1},
        ],
    }
    assert data["llm"]["api_key"] == "***"
    assert data["llm"]["fast"]["api_key"] == "***"
    assert data["llm"]["fast"]["model"] == "f"
    assert data["llm"]["timeout"] == 60


def test_example_config_loads_and_every_commented_type_is_valid(cli) -> None:
    example = ROOT / "config.example.toml"
    assert cli("config", "--config", example).exit_code == 0
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in example.read_text().splitlines():
        if line == "# [condenser]":
            current = ["[condenser]"]
            blocks.append(current)
        elif current is not None and line.startswith("# ") and not line.startswith("# ---"):
            current.append(line[2:])
        else:
            current = None
    llms = LLMTables(tomllib.loads(example.read_text())["llm"])
    types = set()
    for block in blocks:
        table = tomllib.loads("\n".join(block))["condenser"]
        types.add(build_condenser(table, llms).name)
    assert types == {
        "observation_masking",
        "browser_output",
        "recent_events",
        "conversation_window",
        "noop",
        "pipeline",
        "llm",
        "structured_summary",
        "llm_attention",
    }


MISTAKES = {
    "unknown type": (
        '[condenser]\ntype = "lmm"\n',
        "[condenser] type 'lmm' is not a condenser type; choose one of: noop, ",
    ),
    "unknown key": (
        '[condenser]\ntype = "amortized"\nmax_sise = 3\n',
        "[condenser] unknown key 'max_sise' for type 'amortized_forgetting'; "
        "valid keys: max_size, keep_first",
    ),
    "wrong type": (
        '[condenser]\ntype = "amortized"\nmax_size = "100"\n',
        "[condenser] max_size must be an integer, not a string",
    ),
    "boolean for integer": (
        '[condenser]\ntype = "recent"\nmax_events = true\n',
        "[condenser] max_events must be an integer, not a boolean",
    ),
    "bad value": (
        '[condenser]\ntype = "amortized"\nmax_size = 4\nkeep_first = 2\n',
        "[condenser] keep_first (2) must be less than max_size // 2 (2)",
    ),
    "not TOML": ("[condenser\ntype = 1\n", "not valid TOML: Expected ']' at the end of a table"),
    "duplicate key": (
        '[condenser]\ntype = "noop"\ntype = "recent"\n',
        "not valid TOML: Cannot overwrite a value (at line 3, column 16)",
    ),
    "unknown llm key": ('[llm]\nmodle = "x"\n', "[llm] unknown key 'modle'; valid keys: model, "),
    "wrong llm type": ('[llm]\ntimeout = "slow"\n', "[llm] timeout must be a number, not a string"),
    "condenser not a table": ('condenser = "llm"\n', "[condenser] must be a table, not str"),
}


@pytest.mark.parametrize("case", MISTAKES, ids=list(MISTAKES))
def test_mistakes_exit_2_with_the_key_named(case: str, cli, tmp_path: Path) -> None:
    text, message = MISTAKES[case]
    config = write(tmp_path / "bad.toml", text)
    for args in (["config"], ["run", ROOT / "sample_sessions" / "coding_session.jsonl"]):
        result = cli(*args, "--config", config)
        assert result.exit_code == 2, result.output
        assert message in result.stderr
        assert result.stderr.startswith(f"Error: {config}: ")
        assert "Traceback" not in result.stderr


def test_missing_config_file_is_exit_2(cli, tmp_path: Path) -> None:
    result = cli("config", "--config", tmp_path / "nope.toml")
    assert result.exit_code == 2
    assert result.stderr == f"Error: --config names {tmp_path / 'nope.toml'}, which is not a file\n"


def test_bad_type_on_the_command_line(cli) -> None:
    result = cli("config", "--type", "nope")
    assert result.exit_code == 2
    assert "type 'nope' is not a condenser type" in result.stderr


def test_bad_set_syntax(cli) -> None:
    result = cli("config", "--set", "max_size")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --set 'max_size': expected KEY=VALUE")


def test_set_value_parsed_as_toml(cli) -> None:
    result = cli("config", "-t", "amortized", "-s", "max_size=30", "-s", "keep_first=2")
    data = tomllib.loads(result.stdout)
    assert data["condenser"] == {"type": "amortized_forgetting", "max_size": 30, "keep_first": 2}


def test_named_llm_table_key_source_replaces_the_default(tmp_path: Path) -> None:
    config = write(
        tmp_path / "c.toml",
        '[llm]\nmodel = "m"\napi_key_env = "SOME_KEY"\ntimeout = 9\n'
        '[llm.local]\nmodel = "openai/x"\napi_key = "k"\n',
    )
    tables = LLMTables(load_settings(str(config)).llm)
    local = tables.resolve("local", "condenser")
    assert (local.model, local.api_key, local.api_key_env, local.timeout) == (
        "openai/x",
        "k",
        None,
        9,
    )
    assert tables.resolve(None, "condenser").api_key_env == "SOME_KEY"
