"""The capstone's reference managers (Chapter 19): the naive one, each chapter's technique alone,
and the assembled manager of chapter 15, all behind the capstone's one interface,
`next_request(history, task) -> {"messages": [...]}` (course.givens.capstone says what the
history and the task are). The baselines a student's manager is compared with.

    layers    the techniques as small functions on messages (each names its chapter)
    managers  MANAGERS: name -> next_request
"""
from lesson_support.capstone.managers import MANAGERS, naive

__all__ = ["MANAGERS", "naive"]
