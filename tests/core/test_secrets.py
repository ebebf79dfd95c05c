"""Secrets stay out of output: config, errors, model errors and --debug, all masked
by one rule; log lines never echoed whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import lines_of, msg, run_action, run_obs

KEY = "sk-live-9f8e7d6c5b4a39281706"
HEADER = "Bearer hdr-5e1f0c2b9a77"
PASSWORD = "pw-4d3c2b1a"


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


def test_config_masks_every_api_key(cli, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[llm]\napi_key = "{KEY}"\n[llm.other]\napi_key = "{KEY}-2"\n')
    result = cli("config", "-c", config, "-s", f'llm.third.api_key="{KEY}-3"')
    assert result.exit_code == 0
    assert KEY not in result.stdout
    assert result.stdout.count('api_key = "***"') == 3


def test_config_masks_headers_and_url_passwords(cli, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[condenser]\ntype = "llm"\nllm_config = "proxy"\n'
        f'[llm]\nbase_url = "http://bob:{PASSWORD}@127.0.0.1:9/v1"\n'
        f'[llm.extra_headers]\nAuthorization = "{HEADER}"\n'
        f'[llm.proxy]\nmodel = "openai/m"\n'
        f'[llm.proxy.extra_headers]\nX-Api-Key = "{KEY}"\n'
    )
    result = cli("config", "-c", config)
    assert result.exit_code == 0, result.output
    for secret in (KEY, HEADER, PASSWORD, "bob"):
        assert secret not in result.stdout
    assert result.stdout.count('base_url = "http://***@127.0.0.1:9/v1"') == 2
    assert '[llm.extra_headers]\nAuthorization = "***"\n' in result.stdout
    assert '[llm.proxy.extra_headers]\nX-Api-Key = "***"\n' in result.stdout


def test_inline_model_tables_are_masked_too(cli) -> None:
    inline = f'llm_config={{model="m", api_key="{KEY}", extra_headers={{A="{HEADER}"}}}}'
    result = cli("config", "-t", "llm", "-s", inline)
    assert result.exit_code == 0, result.output
    assert KEY not in result.stdout and HEADER not in result.stdout
    assert '[condenser.llm_config]\nmodel = "m"\napi_key = "***"\n' in result.stdout
    assert '[condenser.llm_config.extra_headers]\nA = "***"\n' in result.stdout


def test_extra_headers_can_be_set_in_the_llm_table(cli) -> None:
    result = cli("config", "-s", 'llm.extra_headers={X-Team="a-team"}')
    assert result.exit_code == 0, result.output
    assert '[llm.extra_headers]\nX-Team = "***"\n' in result.stdout
    wrong = cli("config", "-s", "llm.extra_headers={X-Team=1}")
    assert wrong.exit_code == 2
    assert wrong.stderr == "Error: [llm] extra_headers must be a table of strings, not a table\n"


def test_the_rule_names_every_kind_of_secret() -> None:
    from condense_cli.core.redact import mask_table

    table = {
        "model": "m",
        "api_key": "k1",
        "aws_secret_access_key": "k2",
        "session_token": "k3",
        "db_password": "k4",
        "api_key_env": "OPENAI_API_KEY",
        "max_tokens": 100,
        "base_url": "https://u:p@h/v1",
        "extra_headers": {"Authorization": "Bearer x", "X-Trace": "t"},
        "nested": [{"auth_token": "k5"}],
    }
    assert mask_table(table) == {
        "model": "m",
        "api_key": "***",
        "aws_secret_access_key": "***",
        "session_token": "***",
        "db_password": "***",
        "api_key_env": "OPENAI_API_KEY",
        "max_tokens": 100,
        "base_url": "https://***@h/v1",
        "extra_headers": {"Authorization": "***", "X-Trace": "***"},
        "nested": [{"auth_token": "***"}],
    }


def test_config_errors_do_not_echo_values(cli, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[llm]\napi_key = "{KEY}"\napi_key_env = "X"\n')
    result = cli("config", "-c", config)
    assert result.exit_code == 2
    assert KEY not in result.stderr
    assert "set api_key or api_key_env, not both" in result.stderr


@pytest.mark.slow
def test_a_model_error_that_echoes_headers_is_masked(proc, fake, make_log, tmp_path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        f'[llm]\nmodel = "openai/m"\nbase_url = "{fake.base_url}"\napi_key = "{KEY}"\n'
        "num_retries = 0\ntimeout = 5\n"
        f'[llm.extra_headers]\nX-Proxy-Auth = "{HEADER}"\n'
    )
    fake.echo_headers(401, "Authorization", "X-Proxy-Auth")
    events = [msg(0), msg(1)] + [
        e for k in range(2, 30, 2) for e in (run_action(k), run_obs(k + 1, k))
    ]
    log = make_log(events)
    done = proc("run", log, "-c", config, "-t", "llm", "-s", "max_size=10")
    err = done.stderr.decode()
    assert done.returncode == 2, err  # a refused key is a configuration error
    assert fake.requests, "the model was called"
    assert KEY not in err and HEADER not in err
    assert "Authorization: Bearer ***, X-Proxy-Auth: ***" in err


def test_debug_tracebacks_are_masked(cli, make_log, tmp_path, monkeypatch) -> None:
    import condense_cli.cli.stats as command

    def leaky(*args, **kwargs):
        raise RuntimeError(f"request to http://bob:{PASSWORD}@host failed with key {KEY}")

    monkeypatch.setattr(command, "read_log", leaky)  # what `stats` reads a log with
    config = tmp_path / "c.toml"
    config.write_text(f'[llm]\napi_key = "{KEY}"\n')
    log = make_log([msg(0)])
    for args in (("--debug", "stats", log, "-c", config), ("stats", log, "-c", config)):
        result = cli(*args)
        assert result.exit_code == 1
        assert KEY not in result.stderr and PASSWORD not in result.stderr
        assert "request to http://***@host failed with key ***" in result.stderr
    assert "Traceback" in cli("--debug", "stats", log, "-c", config).stderr


def test_bad_lines_are_quoted_as_a_bounded_excerpt(cli, make_log) -> None:
    secret = "TOKEN-" + "s" * 5000
    log = make_log(
        lines_of([msg(0)])
        + b'{"id": 1, "action": "message", "args": {"content": "'
        + secret.encode()
        + b'"} oops\n'
    )
    result = cli("check", log)
    assert result.exit_code == 1
    assert secret not in result.stdout
    assert len(result.stdout) < len(str(log)) + 200


def test_view_text_shows_only_a_preview_of_long_content(cli, make_log) -> None:
    log = make_log([msg(0, "A" * 50_000)])
    out = cli("view", log).stdout
    assert "A" * 1000 not in out
    assert "[50,000 chars]" in out


# --- secrets a session holds, in every output (issue 55, item 8) -------------------

LEAKS = {
    "openai": "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e",
    "anthropic": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "field": '"password": "correct-horse-battery"',
    "env": "DB_PASSWORD=hunter2hunter2",
    # found under any case, the long s too (which the patterns' (?i) matches as an s)
    "upper field": '"PASSWORD": "correct-horse-battery"',
    "long s": '"pa\u017f\u017fword": "correct-horse-battery"',
    "slack": "xoxb-1234567890-abcdefghij",
    "google": "AIza" + "Sy0123456789abcdefghijklmnopqrstuvw",
    "github app": "ghs_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    # a key with words of its own before the one the field pattern takes
    "long key field": '"token_for_the_staging_cluster_deploy_password": "correct-horse-battery"',
    # in a text that case-folds longer (the words then found under any case in it)
    "field after \u00df": 'Stra\u00dfe "password": "correct-horse-battery"',
    # the value on the line after its key
    "next line field": '"api_key":\n  "correct-horse-battery"',
}


@pytest.mark.parametrize(("kind", "leak"), list(LEAKS.items()))
def test_a_secret_a_session_holds_is_masked_in_text_from_it(kind: str, leak: str) -> None:
    from condense_cli.core.redact import SECRET, mask

    masked = mask(f"the output said {leak} and went on")
    secret = leak.split('"')[-2] if "field" in kind or kind == "long s" else leak.split("=")[-1]
    assert secret and secret in leak
    assert secret not in masked and SECRET in masked, masked
    # ordinary words about secrets stay
    assert mask("the token was revoked; passwords need 12 characters") == (
        "the token was revoked; passwords need 12 characters"
    )


def test_hooks_mcp_and_the_report_never_show_a_sessions_secrets(tmp_path: Path, proc) -> None:
    import json

    from tests.dialects.claude_code.test_replay import Builder

    b = Builder("claude-sonnet-4-6")
    b.user("Deploy it. Do not print the keys.")
    b.use("c1", "m1")
    b.result("c1", "Error: " + " ".join(LEAKS.values()) + " rejected")
    b.say("done", "m2")
    log = b.write(tmp_path / "s.jsonl")
    said = json.dumps({"transcript_path": str(log), "trigger": "manual"}).encode()
    outputs = [proc("hook", "pre-compact", input=said).stdout]
    page = tmp_path / "page.html"
    assert proc("report", log, "-o", page, "--no-tokens").returncode == 0
    outputs.append(page.read_bytes())
    outputs.append(proc("view", log, "--no-pager").stdout)
    for leak in ("4f9a8b7c6d5e", "Zx9Yw8Vu7Ts6", "IOSFODNN7EXAMPLE", "abcdefghijklmnop", "hunter2"):
        for output in outputs:
            assert leak.encode() not in output
    assert b"***" in outputs[2]  # masked where it was, in the text view
