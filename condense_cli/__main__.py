"""Allow ``python -m condense_cli``."""

from condense_cli.entry import main

main()
