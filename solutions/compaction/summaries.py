"""Summaries: what replaces the old turns when a history is compacted (Chapter 04).

The summary message's format and the study guide's rule live in `course.givens.compaction`
(lab 04 gives them to the student; this module re-exports them). Two ways to write the text:

    rule_based_summary   the study guide's rule: every call made and every error, verbatim
    ModelSummarizer      a model writes it, from a request that reuses the cached prefix
"""
from __future__ import annotations

from course.givens.compaction import (BACKUPS_HEADING, RULE_TITLE, SUMMARY_HEADER, is_summary,
                                      rule_based_summary, summary_message, summary_parts)

__all__ = ["BACKUPS_HEADING", "COMPACTION_INSTRUCTION", "RULE_TITLE", "SUMMARY_HEADER",
           "ModelSummarizer", "is_summary", "rule_based_summary", "summary_message",
           "summary_parts"]

COMPACTION_INSTRUCTION = """\
Compact the conversation above: write a summary that will replace it, so that work can \
continue from the summary alone. Do not call tools. Use these sections, in this order:

1. Goal and constraints: the task and every constraint, as stated.
2. Confirmed facts: what has been established, and how.
3. Changes made: which files were changed or created, and how.
4. Failed attempts and why: what was tried, what failed, the error text verbatim.
5. Progress and open items: what is done, what is in progress, what is left.

Copy identifiers exactly as they appear: file paths, ids, hashes, URLs, version numbers, \
commands and error messages. Leave out the full output of commands that succeeded, the text \
of errors that were fixed since, and exploratory reads that led nowhere."""


class ModelSummarizer:
    """A summary written by a model, requested cache-safely.

    The request is the conversation prefix exactly as it was sent before (same messages, same
    tools) with the compaction instruction appended as one more user message. The provider has
    that prefix cached from the agent's last step, so the summary request is mostly cache hits
    (`course.usage.read_usage(last_usage).cached` shows how many, where the provider reports
    it). `tool_choice="none"` keeps the tools in the prefix without letting the model call them.
    `max_tokens` is sent as `max_completion_tokens`, the name every current provider accepts
    (OpenAI's reasoning models refuse `max_tokens`).
    """

    def __init__(self, client, model: str, tools: list[dict] | None = None,
                 instruction: str = COMPACTION_INSTRUCTION, max_tokens: int | None = None):
        self.client, self.model, self.tools = client, model, tools
        self.instruction, self.max_tokens = instruction, max_tokens
        self.last_usage = None

    def request(self, prefix: list[dict]) -> dict:
        """The keyword arguments for chat.completions.create (inspectable without a model)."""
        kwargs = {"model": self.model,
                  "messages": list(prefix) + [{"role": "user", "content": self.instruction}]}
        if self.tools:
            kwargs["tools"], kwargs["tool_choice"] = self.tools, "none"
        if self.max_tokens:
            kwargs["max_completion_tokens"] = self.max_tokens
        return kwargs

    def __call__(self, prefix: list[dict]) -> str:
        response = self.client.chat.completions.create(**self.request(prefix))
        self.last_usage = response.usage
        choice = response.choices[0]
        text = (choice.message.content or "").strip()
        if choice.finish_reason == "length":
            raise RuntimeError(f"the summary was cut off at max_tokens={self.max_tokens}; raise "
                               f"it (nothing was compacted)")
        if not text:
            raise RuntimeError("the model returned an empty summary (nothing was compacted)")
        return text
