"""OpenHands V0 event logs.

Kept empty: importing the package must stay cheap (see `detect`).
"""
