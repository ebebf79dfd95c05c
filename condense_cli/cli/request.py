"""`condense request`: append a condensation request, in the log's own dialect.

No `from __future__ import annotations` (see `options`).
"""

from condense_cli.cli.guard import guarded
from condense_cli.cli.options import DialectOpt, LockOpt, LogArg
from condense_cli.cli.output import reading
from condense_cli.condensers.runner import Feedback, append_request
from condense_cli.terminal.output import say


@guarded
def request(log: LogArg, lock_timeout: LockOpt = 10.0, dialect: DialectOpt = None) -> None:
    """Append a condensation_request event to the log."""

    feedback = Feedback(reading=reading("reading"))
    event_id = append_request(log, lock_timeout, feedback, dialect)
    say(f"appended condensation request {event_id} to {log}")
