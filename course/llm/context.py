"""What the rules read: one request, seen the way the teaching model sees it.

`Context` wraps a validated request body. It knows the messages, the offered tools and the
`tool_choice` limits, the last user message (the request being worked on; a user message that
is only an <agent_status> block is the harness's status bar, not a request) and every tool call
and result still visible in the window, each with its message index. It also collects the
trace: every rule that looks at the request and finds something to say adds a step
`{"rule", "why", "evidence"}` (evidence: message indices). Nothing here is remembered between
requests. Its `sampler` (sampling.py) makes the request's scored choices, at its temperature,
and writes them into the same trace.

Rules answer through two helpers that apply the `tool_choice` limits in one place:
`ctx.call(...)` (refused when no call may be made; cut to one call when
`parallel_tool_calls` is false) and `ctx.answer(...)` (refused when a call is required).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property

from course.llm.answers import is_error_result, parse_arguments
from course.llm.context_editing import PLACEHOLDER
from course.llm.sampling import Sampler
from course.llm.template import content_text


STATUS_BLOCK = re.compile(r"<agent_status>.*?</agent_status>", re.S)


@dataclass(frozen=True)
class Call:
    index: int          # the assistant message that made it
    id: str
    name: str
    arguments: str      # exactly as sent
    args: dict          # parsed ({} if not a JSON object)


@dataclass(frozen=True)
class Result:
    index: int          # the tool message
    content: str
    error: bool


@dataclass
class Decision:
    content: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments JSON)


def canonical(args: dict) -> str:
    """Arguments compared the way the memory rule compares them: keys sorted, strings trimmed
    and lower-cased."""
    def norm(value):
        if isinstance(value, str):
            return " ".join(value.split()).lower()
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value
    return json.dumps(norm(args), sort_keys=True, ensure_ascii=False)


def show_call(name: str, args: dict | str) -> str:
    if isinstance(args, str):  # an arguments string made again verbatim
        return f"{name}({args})"
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{name}({inner})"


class Context:
    def __init__(self, body: dict, prompt_hash: str = ""):
        self.messages: list[dict] = body["messages"]
        self.tools: list[dict] = body.get("tools") or []
        self.tool_choice = body.get("tool_choice")
        self.parallel = body.get("parallel_tool_calls") is not False
        self.by_name = {tool["function"]["name"]: tool for tool in self.tools}
        self.forced = (self.tool_choice["function"]["name"]
                       if isinstance(self.tool_choice, dict) else None)
        self.calls_allowed = bool(self.tools) and self.tool_choice != "none"
        self.must_call = bool(self.tools) and self.tool_choice == "required"
        self.trace: list[dict] = []
        # temperature, top_p, seed (a seed derived from prompt_hash when sampling without one)
        self.sampler = Sampler.from_body(body, prompt_hash, self.trace)
        self.notes: list[str] = []  # sentences every reply carries (e.g. an ignored instruction)

    # ---------------------------------------------------------------- reading the window
    def text(self, i: int) -> str:
        return content_text(self.messages[i].get("content"))

    @cached_property
    def last_user(self) -> int:
        """The last user message a person wrote: a user message that holds nothing but an
        <agent_status> block is the harness's status bar, not a request."""
        for i in range(len(self.messages) - 1, -1, -1):
            if self.messages[i]["role"] == "user" and not self.is_status_bar(i):
                return i
        return -1

    def is_status_bar(self, i: int) -> bool:
        text = self.text(i).strip()
        return text.startswith("<agent_status>") and text.endswith("</agent_status>")

    @property
    def asked_now(self) -> bool:
        """The request was just made: nothing but status bars came after it."""
        return self.last_user >= 0 and all(
            self.messages[i]["role"] == "user" for i in range(self.last_user + 1, len(self.messages)))

    @cached_property
    def request(self) -> str:
        """The text of the last user message, without <agent_status> blocks: what the model is
        asked to do."""
        text = self.text(self.last_user) if self.last_user >= 0 else ""
        if "<agent_status>" in text:
            text = STATUS_BLOCK.sub("", text).strip()
        return text

    @property
    def last_role(self) -> str:
        return self.messages[-1]["role"]

    @cached_property
    def calls(self) -> list[Call]:
        """Every tool call still visible, in order."""
        found = []
        for i, message in enumerate(self.messages):
            if message["role"] == "assistant":
                for call in message.get("tool_calls") or ():
                    fn = call["function"]
                    found.append(Call(i, call["id"], fn["name"], fn["arguments"],
                                      parse_arguments(fn["arguments"])))
        return found

    @cached_property
    def results(self) -> dict[str, Result]:
        """call id -> its visible result."""
        found = {}
        for i, message in enumerate(self.messages):
            if message["role"] == "tool":
                text = self.text(i)
                found[message["tool_call_id"]] = Result(i, text, is_error_result(text))
        return found

    def calls_since(self, start: int) -> list[Call]:
        return [c for c in self.calls if c.index > start]

    def last_round(self) -> list[Call]:
        """The calls of the most recent assistant message after the last user message."""
        since = self.calls_since(self.last_user)
        return [c for c in since if c.index == since[-1].index] if since else []

    @cached_property
    def answered(self) -> dict[str, tuple[Call, Result]]:
        """canonical (name, arguments) -> the latest call with a visible successful result (a
        result cleared by context editing is not one: its content is gone)."""
        found = {}
        for call in self.calls:
            result = self.results.get(call.id)
            if result and not result.error and result.content != PLACEHOLDER:
                found[call.name + " " + canonical(call.args)] = (call, result)
        return found

    def visible_result(self, name: str, args: dict) -> tuple[Call, Result] | None:
        return self.answered.get(name + " " + canonical(args))

    def system_text(self) -> list[tuple[int, str]]:
        return [(i, self.text(i)) for i, m in enumerate(self.messages)
                if m["role"] in ("system", "developer")]

    # ---------------------------------------------------------------- deciding
    def note(self, rule: str, why: str, evidence=()) -> None:
        self.trace.append({"rule": rule, "why": why, "evidence": sorted(set(evidence))})

    def call(self, rule: str, why: str, specs: list[tuple[str, dict | str]],
             evidence=()) -> Decision | None:
        """Make these calls, within the tool_choice limits; None if no call may be made.

        A spec's arguments are a dict (sent as JSON) or a string (sent verbatim)."""
        specs = [(name, args) for name, args in specs if name in self.by_name]
        if not specs:
            return None
        shown = ", ".join(show_call(n, a) for n, a in specs)
        if not self.calls_allowed:
            reason = ("tool_choice is \"none\"" if self.tool_choice == "none"
                      else "no tools are offered")
            self.note(rule, f"{why}; but {reason}, so no call: {shown} not made", evidence)
            return None
        if not self.parallel and len(specs) > 1:
            waiting = ", ".join(n for n, _ in specs[1:])
            self.note("tool_choice", f"parallel_tool_calls is false: one call per reply, "
                                     f"{waiting} must wait for a later request")
            specs = specs[:1]
            shown = show_call(*specs[0])
        self.note(rule, f"{why} -> call {shown}", evidence)
        return Decision(calls=[(n, a if isinstance(a, str) else json.dumps(a, ensure_ascii=False))
                               for n, a in specs])

    def answer(self, rule: str, why: str, text: str, evidence=()) -> Decision | None:
        """Answer in text; None if tool_choice requires a call."""
        if self.must_call:
            self.note(rule, f"{why}; but tool_choice is \"required\", so no text answer", evidence)
            return None
        self.note(rule, why, evidence)
        return Decision(content=text)
