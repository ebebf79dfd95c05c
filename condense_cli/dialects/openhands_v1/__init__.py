"""OpenHands V1 (software-agent-sdk) conversations.

Kept empty: importing the package must stay cheap (see `detect`).
"""
