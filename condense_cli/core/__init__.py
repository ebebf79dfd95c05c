"""The bottom layer: events, views and condensations, log files, errors, text and secrets.

Nothing here knows a log format, a model or a terminal.
"""
