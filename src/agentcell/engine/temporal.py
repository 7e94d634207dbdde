"""The run's reference time: what "today" and "next Tuesday" mean for its temporal slots.

A run fixes one reference instant when it starts (`RunOptions.now`, else the kernel's clock in its
own time zone) and keeps it in `RunResult.reference_time`; a resumed run keeps its first one. Every
`date`/`datetime`/`time`/`duration`/`date_rule` slot is told it in its instructions, so relative
phrases resolve against the same instant however long the run takes, and a replay reads the same
recorded answers.
"""

from __future__ import annotations

from datetime import datetime


def reference_time(now: datetime | None = None) -> datetime:
    """`now` made time-zone aware (a naive one is read as local time), or the current local time."""
    if now is None:
        return datetime.now().astimezone()
    return now if now.tzinfo is not None else now.astimezone()


def reference_note(now: datetime) -> str:
    """The instruction a temporal slot gets."""
    zone = now.tzname() or "local time"
    return (
        f"The current date and time is {now.strftime('%A')} {now.isoformat(timespec='seconds')} ({zone}). "
        "Resolve relative dates and times (today, next Tuesday, in two hours) against it, and give times "
        "in this time zone unless the text says otherwise."
    )
