"""Codex CLI rollouts.

Kept empty: importing the package must stay cheap (see `detect`).
"""
