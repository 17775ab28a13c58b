"""The capstone's reference manager, as lab 19 asks for it: the four techniques of the lab
assembled behind the course's one interface, `next_request(history, task) -> {"messages": [...]}`
(course.givens.capstone says what `history` and `task` hold). A student composes their own; the
graded worker cannot read this module (course.givens.capstone.WORKER_ANSWERS). The course's
assembled baseline (lesson_support.capstone) also clears earlier turns' results, which costs less
and scores the same on the development set."""
from __future__ import annotations

from solutions.capstone.layers import cap_results, fence, remember, slide_stably


def next_request(history: list[dict], task: dict) -> dict:
    """Results capped (what fills the window), the customer's facts written into a call-back
    (what a window forgets), results fenced (what may steer the desk), and a window whose cut
    moves in chunks (what the cache reuses)."""
    system, fenced = fence(task["system"], remember(cap_results(history), task))
    return {"messages": slide_stably([{"role": "system", "content": system}], fenced, task)}
