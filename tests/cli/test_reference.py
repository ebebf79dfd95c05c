"""docs/cli.md is what `make docs` writes from the code: every command, every option."""

from __future__ import annotations

from tests.conftest import ROOT
from tools.cli_reference import OUT, page


def test_the_command_reference_is_the_codes_own_help() -> None:
    assert OUT == ROOT / "docs" / "cli.md"
    assert OUT.read_text() == page(), "docs/cli.md is stale: run `make docs`"


def test_the_reference_has_every_command_and_option() -> None:
    from condense_cli.cli.app import COMMANDS

    text = page()
    for entry in COMMANDS:
        assert f"\n## condense {entry.name}\n" in text
    for option in ("--lock-timeout SECONDS", "--jobs N", "--engine", "--deep", "--guard"):
        assert option in text
    assert "### condense mcp install" in text and "### condense hook post-compact" in text
