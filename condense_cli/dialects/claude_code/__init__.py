"""Claude Code sessions.

Kept empty: importing the package must stay cheap (see `detect`).
"""
