"""Compaction itself: head + one summary of the old turns + the last turns, whole; and the
naive sliding window it replaces, for contrast."""
from __future__ import annotations

from typing import Callable

from solutions.compaction.pairing import check_pairing
from solutions.compaction.summaries import (is_summary, rule_based_summary, summary_message,
                                            summary_parts)
from solutions.compaction.transcripts import backup_transcript
from solutions.compaction.turns import recent_start, split_head
from solutions.truncation import Workspace


def compact(messages: list[dict], keep_turns: int = 2,
            summarize: Callable[[list[dict]], str] = rule_based_summary,
            workspace: Workspace | None = None) -> list[dict]:
    """Head + one summary of the old turns + the last `keep_turns` turns, whole.

    `summarize` receives the conversation prefix that is being replaced (head + old turns,
    unchanged) and returns the summary text. With a `workspace`, the full transcript is backed
    up there first and the summary points to the backup. Returns a new list; `messages` is not
    modified, and a transcript that is already broken is refused rather than compacted.
    """
    if not isinstance(keep_turns, int) or keep_turns < 0:
        raise ValueError(f"keep_turns must be a non-negative integer, got {keep_turns!r}")
    verdict = check_pairing(messages)
    if not verdict:
        raise ValueError(f"refusing to compact a transcript whose pairing is already broken: {verdict}")
    head, rest = split_head(messages)
    start = recent_start(rest, keep_turns)  # whole turns only: never between a call and its result
    old, recent = rest[:start], rest[start:]
    earlier = [m for m in old if is_summary(m)]
    if len(earlier) == len(old):  # nothing new to fold in
        return list(messages)
    backups = [line for m in earlier for line in summary_parts(m["content"])[1]]
    if workspace is not None:
        path = backup_transcript(messages, workspace)
        backups.append(f"- {path} ({len(messages)} messages)")
    text = summarize(head + old)
    return head + [summary_message(text, backups)] + recent


def drop_oldest_messages(messages: list[dict], keep_messages: int) -> list[dict]:
    """The naive sliding window, for contrast: head + the last N *messages*, cut anywhere.

    It often keeps a tool result whose call was dropped; check_pairing (and the provider)
    reject the result.
    """
    head, rest = split_head(messages)
    return head + rest[max(len(rest) - keep_messages, 0):]
