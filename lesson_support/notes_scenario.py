"""Chapter 06's three-day scenario: replay data/notes/*.json into a notes folder.

A fixture loader for the lesson and the tests, not an answer: it drives `NoteTool` through
the scenario's steps with a clock set to each step's time.
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Union

from course.paths import DATA_DIR
from solutions.gssc import as_datetime
from solutions.notes import NoteError, NoteTool, utc_now

SCENARIO = DATA_DIR / "notes" / "libpng_scenario.json"


def _time(value, what: str) -> datetime:
    try:
        return as_datetime(value)
    except (ValueError, TypeError) as exc:
        raise NoteError(f"{what}: {exc}") from None


def replay_scenario(path: Union[str, Path], folder: Union[str, Path],
                    until: Union[datetime, str, None] = None) -> NoteTool:
    """Replay a scenario file (data/notes/*.json) into `folder`: each step runs one action at
    the time given in its "at" field; with `until`, only the steps up to that time. Returns the
    tool, its clock left at the last step replayed."""
    scenario = json.loads(Path(path).read_text(encoding="utf-8"))
    limit = _time(until, "until") if until is not None else None
    moments: list[datetime] = []
    tool = NoteTool(folder, clock=lambda: moments[-1] if moments else limit or utc_now())
    for step in scenario["steps"]:
        step = dict(step)
        at = _time(step.pop("at"), "step time")
        if moments and at < moments[-1]:
            raise NoteError(f"scenario steps must be in time order: {at.isoformat()} comes after "
                            f"{moments[-1].isoformat()}")
        if limit is not None and at > limit:
            break
        moments.append(at)
        result = tool.run(step)
        if not result["ok"]:
            raise NoteError(f"scenario step {step} failed: {result['error']}")
    return tool
