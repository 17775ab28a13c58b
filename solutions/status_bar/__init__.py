"""Chapter 08: the agent status bar (the answers).

    status   the pure step function                         update_status, replay
    render   the <agent_status> block, byte-stable          render_status
    place    a user message at the end, replace or append   place_status, stamp
    events   events from the agent's own call log           events_from_messages
    monitor  the bar's accuracy against ground truth        status_accuracy, field_errors

They build on lab 08's givens, re-exported here: the status dict (`new_status`,
EVENT_TYPES), the block's tags and `parse_status`, and `StatusMessage`, the mark of a placed bar
(`course.givens.status_bar`, which holds no answer). The replayed run and the system-prompt
placement the lesson measures against are lesson support (`lesson_support.status_bar`).
"""
from course.givens.status_bar import (CLOSE, EVENT_TYPES, OPEN, StatusMessage, new_status,
                                      parse_status)
from solutions.status_bar.events import SKIPPED, events_from_messages
from solutions.status_bar.monitor import field_errors, status_accuracy
from solutions.status_bar.place import (is_status_message, latest_status, open_calls, place_status,
                                        stamp)
from solutions.status_bar.render import render_status, status_fields
from solutions.status_bar.status import replay, update_status
from solutions.status_bar.self_test import self_test

__all__ = [
    "CLOSE", "EVENT_TYPES", "OPEN", "SKIPPED", "StatusMessage", "events_from_messages",
    "field_errors", "is_status_message", "latest_status", "new_status", "open_calls",
    "parse_status", "place_status", "render_status", "replay", "self_test", "stamp",
    "status_accuracy", "status_fields", "update_status",
]
