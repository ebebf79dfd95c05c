"""Allow ``python -m condense_cli``."""

from condense_cli.cli import main

main()
