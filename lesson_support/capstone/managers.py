"""The capstone's reference managers: next_request(history, task) -> {"messages": [...]}.

    naive         everything, then a sliding window of whole turns when it no longer fits
    compaction    chapter 04 alone: old turns summarised, the rest slid
    caching       chapter 05 alone: the window's cut moves in chunks, so the prefix is reused
    notes         chapter 06 alone: what the customer said before is written into the request
    fencing       chapter 10 alone: tool results are fenced data
    clearing      chapter 11 alone: results capped and, from earlier turns, cleared
    assembled     chapter 15: all of them, in that order of concerns
"""
from __future__ import annotations

from solutions.capstone.layers import (cap_results, clear_old_results, fence, remember, slide,
                                       slide_stably, summarise)

SUMMARY_KEEP = 6   # turns compaction keeps as they are


def _system(text: str) -> list[dict]:
    return [{"role": "system", "content": text}]


def naive(history, task):
    return {"messages": slide(_system(task["system"]), history, task)}


def compaction(history, task):
    return {"messages": slide(_system(task["system"]), summarise(history, SUMMARY_KEEP), task)}


def caching(history, task):
    return {"messages": slide_stably(_system(task["system"]), history, task)}


def notes(history, task):
    return {"messages": slide(_system(task["system"]), remember(history, task), task)}


def fencing(history, task):
    system, fenced = fence(task["system"], history)
    return {"messages": slide(_system(system), fenced, task)}


def clearing(history, task):
    return {"messages": slide(_system(task["system"]), clear_old_results(cap_results(history)), task)}


def assembled(history, task):
    """Results capped and old ones cleared (what fills the window), fenced (what may steer the
    desk), the customer's facts written into the request (what a window forgets), and a window
    whose cut moves in chunks (what the cache reuses)."""
    kept = remember(clear_old_results(cap_results(history)), task)
    system, fenced = fence(task["system"], kept)
    return {"messages": slide_stably(_system(system), fenced, task)}


MANAGERS = {"naive": naive, "compaction": compaction, "caching": caching, "notes": notes,
            "fencing": fencing, "clearing": clearing, "assembled": assembled}
