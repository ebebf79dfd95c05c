"""Configuration: lookup order, overrides, effective TOML, and every mistake as exit 2."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from condense_cli.condensers import REGISTRY
from condense_cli.config.loading import LLMTables, build_condenser, load_condenser, load_settings
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
            {"type": "amortized_forgetting", "max_size": 80, "keep_first": 1, "keep_task": True},
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
    # every type but the one the example's own [condenser] table sets
    assert types | {"amortized_forgetting"} == set(REGISTRY)


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
    assert data["condenser"] == {
        "type": "amortized_forgetting",
        "max_size": 30,
        "keep_first": 2,
        "keep_task": True,
    }


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


# --- limits: numbers that are not finite, deep nesting, huge values ----------------------


@pytest.mark.parametrize("value", ["nan", "inf"])  # -inf is below the minimum, 0
def test_lock_timeout_must_be_finite(value: str, cli, proc, make_log, monkeypatch) -> None:
    log = make_log([{"id": 0, "source": "user", "action": "message", "args": {}}])
    before = log.read_bytes()
    expected = (
        "Error: Invalid value for '--lock-timeout' (env var: 'CONDENSE_LOCK_TIMEOUT'): "
        f"must be a finite number of seconds, not {float(value)}"
    )
    result = cli("request", log, "--lock-timeout", value)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == expected
    done = proc("run", log, "-t", "amortized", env={"CONDENSE_LOCK_TIMEOUT": value})
    assert done.returncode == 2
    assert done.stderr.decode().splitlines()[-1] == expected
    assert log.read_bytes() == before


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_config_numbers_must_be_finite(value: str, cli, tmp_path: Path) -> None:
    result = cli("config", "-s", f"llm.timeout={value}")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: [llm] timeout must be a finite number, not {float(value)}\n",
    )
    config = write(
        tmp_path / "c.toml",
        f'[condenser]\ntype = "llm"\n[llm.m]\nseed = 1\ntemperature = {value}\n',
    )
    result = cli("run", "-", "-c", config, input=b"")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {config}: [llm.m] temperature must be a finite number, not {float(value)}\n",
    )


def nested_pipelines(levels: int) -> str:
    inner = '{type = "noop"}'
    for _ in range(levels):
        inner = f'{{type = "pipeline", condensers = [{inner}]}}'
    return f'[condenser]\ntype = "pipeline"\ncondensers = [{inner}]\n'


def test_pipelines_nested_too_deep_are_a_configuration_error(cli, tmp_path: Path) -> None:
    ok = write(tmp_path / "ok.toml", nested_pipelines(14))
    assert cli("config", "-c", ok).exit_code == 0
    deep = write(tmp_path / "deep.toml", nested_pipelines(20))
    result = cli("config", "-c", deep)
    assert result.exit_code == 2
    first, hint = result.stderr.splitlines()
    assert first.startswith(f"Error: {deep}: [condenser.condensers[0].condensers[0]")
    assert first.endswith("] condensers[0] is nested more than 32 tables or arrays deep")
    assert hint == "Hint: a pipeline inside a pipeline gains nothing; list its condensers in one"
    deeper = write(tmp_path / "deeper.toml", nested_pipelines(400))
    result = cli("run", "-", "-c", deeper, input=b"")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {deeper}: tables or arrays nested too deeply to read\n",
    )
    result = cli("config", "-s", "x=" + "[" * 3000 + "]" * 3000)
    assert result.exit_code == 2
    assert result.stderr == f"Error: --set value nested too deeply: '{'[' * 58}…\n"


HUGE = "v" * 10_000_000


@pytest.mark.parametrize(
    ("text", "sets", "message"),
    [
        (f'[condenser]\ntype = "{HUGE}"\n', [], "[condenser] type 'vvvvvvvvv"),
        (f"[condenser]\n{HUGE} = 1\n", [], "[condenser] unknown key 'vvvvvvvvv"),
        (f'[condenser]\ntype = "llm"\nllm_config = "{HUGE}"\n', [], "llm_config = 'vvvvvvvvv"),
        ("", [HUGE], "--set 'vvvvvvvvv"),
        ("", [f"condenser.{HUGE}.x=1"], "[condenser] unknown key 'vvvvvvvvv"),
        (f"[llm.{HUGE}]\nmodel = 1\n", [], "[llm.vvvvvvvvv"),
    ],
)
def test_huge_values_are_quoted_short(
    text: str, sets: list[str], message: str, cli, tmp_path
) -> None:
    config = write(tmp_path / "c.toml", text)
    args = ["config", "-c", config] + [arg for item in sets for arg in ("-s", item)]
    result = cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr) < 1200


# --- condense config reads back ----------------------------------------------------------


def every_type() -> list[str]:
    from condense_cli.condensers import REGISTRY

    return list(REGISTRY)


@pytest.mark.parametrize("type_", every_type())
def test_config_output_reads_back_unchanged(type_: str, cli, tmp_path: Path) -> None:
    if type_ == "pipeline":
        source = write(
            tmp_path / "p.toml",
            '[condenser]\ntype = "pipeline"\n[[condenser.condensers]]\ntype = "browser_output"\n'
            '[[condenser.condensers]]\ntype = "llm"\nllm_config = "cheap"\n'
            '[llm]\napi_key = "sk-0123456789"\nbase_url = "http://u:p@127.0.0.1:9/v1"\n'
            '[llm.extra_headers]\nX-Key = "h-0123456789"\n[llm.cheap]\nmodel = "openai/m"\n',
        )
        first = cli("config", "-c", source)
    else:
        first = cli("config", "--type", type_)
    assert first.exit_code == 0, first.output
    printed = write(tmp_path / "printed.toml", first.stdout)
    again = cli("config", "--config", printed)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout
    assert again.stderr == f"configuration read from {printed}\n"
    assert tomllib.loads(first.stdout)["condenser"]["type"] == type_
