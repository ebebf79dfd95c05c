"""condense: replay, check and condense the event logs of AI coding agents."""

__version__ = "0.1.0"
