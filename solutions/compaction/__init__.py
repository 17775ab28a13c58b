"""Compaction: keep a long agent run inside its window without separating calls from results.

Truncation shortens one message; compaction shortens the history. The shape after compacting:

    head      the system prompt and the original task, kept verbatim
    summary   one user message that replaces the old turns
    recent    the last `keep_turns` turns, kept whole

A *turn* here is one non-tool message plus the tool results that answer it (so an assistant
message with three parallel calls and its three results is one turn). History is kept or
dropped a whole turn at a time, which is why a call never loses its result: a provider rejects
a request with an orphan result or an unanswered call (HTTP 400), and `check_pairing` finds
the same problems before the provider does.

Production pieces: a token-threshold trigger (`should_compact`, counting with Chapter 02's
`count_request_tokens`), a JSONL backup of the transcript before each compaction with a pointer
to it in the summary, a model-written summary requested cache-safely (`ModelSummarizer`), and
chained compactions that carry earlier summaries and backups forward (`replay` runs a recorded
transcript through them step by step).

Messages use the Chat Completions format: an assistant's `tool_calls` are
`{"id", "type": "function", "function": {"name", "arguments"}}`, answered by
`{"role": "tool", "tool_call_id", "content"}`.

The package, one concern per module (this module re-exports what is used through it):

    pairing      Pairing, check_pairing, unique_call_ids
    (and text_of, a given from course.givens.compaction, which the answers read content with)
    turns        split_turns, recent_start, split_head
    summaries    rule_based_summary, ModelSummarizer, the summary message
    transcripts  save_transcript, load_transcript, backup_transcript
    compacting   compact, drop_oldest_messages
    schedule     should_compact, replay, sawtooth_points
"""
from __future__ import annotations

from course.givens.compaction import text_of
from solutions.compaction.compacting import compact, drop_oldest_messages
from solutions.compaction.pairing import Pairing, check_pairing, unique_call_ids
from solutions.compaction.schedule import replay, sawtooth_points, should_compact
from solutions.compaction.summaries import (BACKUPS_HEADING, COMPACTION_INSTRUCTION,
                                            ModelSummarizer, is_summary, rule_based_summary,
                                            summary_message, summary_parts)
from solutions.compaction.transcripts import load_transcript, save_transcript
from solutions.compaction.turns import recent_start, split_head, split_turns
from solutions.compaction.self_test import self_test

__all__ = [
    "BACKUPS_HEADING", "COMPACTION_INSTRUCTION", "ModelSummarizer", "Pairing", "check_pairing",
    "compact", "drop_oldest_messages", "is_summary", "load_transcript", "recent_start", "replay",
    "rule_based_summary", "save_transcript", "sawtooth_points", "self_test", "should_compact",
    "split_head", "split_turns", "summary_message", "summary_parts", "text_of", "unique_call_ids",
]
