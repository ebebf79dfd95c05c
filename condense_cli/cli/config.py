"""`condense config`: print the effective configuration as TOML.

No `from __future__ import annotations` (see `options`).
"""

import typer

from condense_cli.cli.guard import guarded
from condense_cli.cli.options import ConfigOpt, SetOpt, TypeOpt
from condense_cli.cli.output import print_notes
from condense_cli.config.loading import effective_config, load_settings, naming_source
from condense_cli.terminal.output import say


@guarded
def show_config(config: ConfigOpt = None, type: TypeOpt = None, set: SetOpt = None) -> None:
    """Print the effective configuration as TOML.

    Defaults are filled in and secrets are printed as "***". The output reads back
    unchanged with --config.
    """
    import tomli_w

    settings = load_settings(config, type, set)
    print_notes(settings.notes)
    table = naming_source(settings.path, lambda: effective_config(settings))
    if settings.path is not None:
        say(f"configuration read from {settings.path}")
    typer.echo(tomli_w.dumps(table), nl=False)
