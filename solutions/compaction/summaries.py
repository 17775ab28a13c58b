"""Summaries: what replaces the old turns when a history is compacted (Chapter 04).

A summary is one user message that starts with `SUMMARY_HEADER`, holds the summary text and,
when the transcript was backed up first, a list of the backups under `BACKUPS_HEADING`.
Two ways to write the text:

    rule_based_summary   the study guide's rule: every call made and every error, verbatim
    ModelSummarizer      a model writes it, from a request that reuses the cached prefix

No exercise of lab 04 is defined here, so the lab imports `rule_based_summary` from this module.
"""
from __future__ import annotations

import json

from solutions.compaction.pairing import text_of

SUMMARY_HEADER = "[Compacted history: this message replaces earlier turns of the conversation]"
BACKUPS_HEADING = ("Full transcripts saved before compacting (JSONL, one message per line; "
                   "open them with read_file):")
RULE_TITLE = "Earlier progress:"

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



def is_summary(message: dict) -> bool:
    """True for the user message a compaction left in place of earlier turns."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    content = message.get("content")
    return isinstance(content, str) and content.startswith(SUMMARY_HEADER)


def summary_parts(content: str) -> tuple[str, list[str]]:
    """(body, backup lines) of a summary message's content."""
    text = content[len(SUMMARY_HEADER):] if content.startswith(SUMMARY_HEADER) else content
    body, _, backups = text.partition(BACKUPS_HEADING)
    return body.strip("\n"), [line for line in backups.splitlines() if line.startswith("- ")]


def summary_message(text: str, backups: list[str]) -> dict:
    content = f"{SUMMARY_HEADER}\n{text.strip()}"
    if backups:
        content += "\n\n" + BACKUPS_HEADING + "\n" + "\n".join(backups)
    return {"role": "user", "content": content}


def _error_of(content) -> str | None:
    """The `error` field of a JSON tool result, verbatim (what the study guide's rule keeps)."""
    content = text_of(content)  # other agents send results as a list of text parts
    if content is None or "error" not in content:
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if isinstance(data, dict) and "error" in data:
        return str(data["error"])
    return None


def rule_based_summary(messages: list[dict]) -> str:
    """The study guide's rule: record every call made and every error verbatim. Nothing else.

    Earlier summaries found among `messages` are carried forward first, so chained compactions
    keep what the first one recorded. It never records *why*: conclusions are lost.
    """
    carried: list[str] = []
    facts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                fn = call.get("function") if isinstance(call, dict) else None
                fn = fn if isinstance(fn, dict) else {}  # a malformed call is still recorded
                facts.append(f"called {fn.get('name')} {fn.get('arguments')}")
        elif role == "tool":
            error = _error_of(message.get("content"))
            if error is not None:
                facts.append(error)
        elif is_summary(message):
            body, _ = summary_parts(message["content"])
            body = body.removeprefix(RULE_TITLE).strip("\n")
            if body:
                carried.append(body)
    lines = carried + [f"- {fact}" for fact in facts]
    return RULE_TITLE + ("\n" + "\n".join(lines) if lines else " (no calls or errors yet)")


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
