"""Chapter 19's answers: the capstone's context manager and the techniques it assembles.

    layers.py     each chapter's technique on the capstone's requests: cap_results, fence,
                  remember, slide_stably (the lab's exercises), and slide, clear_old_results,
                  summarise (the baselines' other techniques)
    manager.py    next_request: the lab's manager, the four techniques assembled
    self_test.py  the lab's self-test answers

Lab 19's exercises are `cap_results`, `fence`, `remember`, `slide_stably`, `next_request` and
`self_test`. The world, loop and judge are givens (course/givens/capstone.py); the baseline
managers are lesson support (lesson_support/capstone/).
"""
from solutions.capstone.layers import cap_results, fence, remember, slide_stably
from solutions.capstone.manager import next_request
from solutions.capstone.self_test import self_test

__all__ = ["cap_results", "fence", "next_request", "remember", "self_test", "slide_stably"]
