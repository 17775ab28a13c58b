"""Chapter 08: the agent status bar (the answers).

    status   the status dict and the pure step function    new_status, update_status, replay
    render   the <agent_status> block, byte-stable          render_status, parse_status
    place    a user message at the end, replace or append   place_status, StatusMessage, stamp
    events   events from the agent's own call log           events_from_messages
    monitor  the bar's accuracy against ground truth        status_accuracy, field_errors

The replayed run and the system-prompt placement the lesson measures against are lesson
support (`lesson_support.status_bar`).
"""
from solutions.status_bar.events import (CHANGE_DIR, SKIPPED, TODO_REWRITE, TODO_UPDATE,
                                         events_from_messages)
from solutions.status_bar.monitor import field_errors, status_accuracy
from solutions.status_bar.place import (MODES, StatusMessage, is_status_message, latest_status,
                                        open_calls, place_status, stamp)
from solutions.status_bar.render import (CLOSE, OPEN, TODO_MARK, parse_status, render_fields,
                                         render_status, status_fields)
from solutions.status_bar.status import (EVENT_TYPES, TODO_STATUSES, counter_keys, limit_for,
                                         new_status, replay, update_status)
from solutions.status_bar.self_test import self_test
