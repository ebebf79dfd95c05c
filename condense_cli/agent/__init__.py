"""Inside the running agent: what its hooks and MCP server say, read from the
session it is running in (see cli/hook.py)."""
