"""Secrets stay out of output: API keys masked, log lines never echoed whole."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import lines_of, msg

KEY = "sk-live-9f8e7d6c5b4a39281706"


def test_config_masks_every_api_key(cli, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[llm]\napi_key = "{KEY}"\n[llm.other]\napi_key = "{KEY}-2"\n')
    result = cli("config", "-c", config, "-s", f'llm.third.api_key="{KEY}-3"')
    assert result.exit_code == 0
    assert KEY not in result.stdout
    assert result.stdout.count('api_key = "***"') == 3


def test_config_errors_do_not_echo_values(cli, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[llm]\napi_key = "{KEY}"\napi_key_env = "X"\n')
    result = cli("config", "-c", config)
    assert result.exit_code == 2
    assert KEY not in result.stderr
    assert "set api_key or api_key_env, not both" in result.stderr


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
