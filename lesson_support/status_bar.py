"""Chapter 08's lesson support: the replayed run, the requests each placement sends, and the
specimens the lesson measures against (a bar in the system prompt; a bar filled from tool-result
text). The answers themselves are in `solutions.status_bar`.

The run is `data/status_bar/merchant_refund.json` (written by `make_run.py` beside it): step 0 is
the user's request, each later step one assistant message with its tool results, the last step
the agent's closing answer; then the follow-up "Can you call them again to follow up?".
Request j (j = 1 .. n) is what the agent sends before step j's reply: the system prompt, steps
0 .. j-1, and the bar for that moment, placed by one of the strategies below. The follow-up
request adds the user's follow-up and a fresh bar.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from functools import cached_property

from course.paths import DATA_DIR
from course.usage import read_usage
from solutions.status_bar import (events_from_messages, new_status, place_status, render_status,
                                  replay, stamp)
from solutions.tokens import count_request_tokens

RUN_DIR = DATA_DIR / "status_bar"
PLACEMENTS = ("none", "system", "end")
STRATEGIES = (("system", "replace"), ("end", "replace"), ("end", "append"))


@dataclass(frozen=True)
class Run:
    name: str
    about: str
    started: str
    cwd: str
    budget: int
    limits: dict
    target_args: dict
    system: str
    tools: list
    steps: list
    follow_up: dict
    poisoned_result: str

    @property
    def n_requests(self) -> int:
        """Requests of the run itself (before each reply), not counting the follow-up."""
        return len(self.steps) - 1

    def history(self, upto: int, stamped: bool = False) -> list[dict]:
        """System prompt and steps 0 .. upto-1, no bar; `stamped` prefixes user and tool messages
        with their step's time (never the system prompt)."""
        if not 0 <= upto <= len(self.steps):
            raise ValueError(f"upto must be between 0 and {len(self.steps)}, got {upto}")
        messages = [{"role": "system", "content": self.system}]
        for step in self.steps[:upto]:
            for message in step["messages"]:
                if stamped and message["role"] in ("user", "tool"):
                    message = {**message, "content": stamp(message["content"], step["at"])}
                messages.append(message)
        return copy.deepcopy(messages)

    def windowed(self, upto: int, keep_steps: int, stamped: bool = False) -> list[dict]:
        """A sliding window by whole steps: the system prompt, the user's request (step 0) and
        only the last `keep_steps` steps before `upto`; pairs are never cut."""
        full = self.history(upto, stamped)
        head = 1 + len(self.steps[0]["messages"])
        first = max(1, upto - keep_steps)
        dropped = sum(len(step["messages"]) for step in self.steps[1:first])
        return full[:head] + full[head + dropped:]

    def follow_up_message(self, stamped: bool = False, text: str | None = None) -> dict:
        """The user's follow-up (or another question `text`, asked at the same moment)."""
        text = self.follow_up["content"] if text is None else text
        return {"role": "user", "content": stamp(text, self.follow_up["at"]) if stamped else text}

    def events(self, upto: int, target_args: dict | None = None) -> list[dict]:
        """What the framework observed in steps 0 .. upto-1: a clock reading per step, the
        events of the agent's own call log, and the context's size in tokens."""
        target_args = self.target_args if target_args is None else target_args
        events = []
        for step in self.steps[:upto]:
            events.append({"type": "clock", "now": step["at"]})
            events.extend(events_from_messages(step["messages"], target_args))
        if upto:
            events.append({"type": "tokens", "used": count_request_tokens(self.history(upto), self.tools)})
        return events

    def initial_status(self) -> dict:
        return new_status(limits=self.limits, cwd=self.cwd, budget=self.budget, started=self.started)

    def status(self, upto: int, target_args: dict | None = None, follow_up: bool = False) -> dict:
        """The true status after steps 0 .. upto-1 (with `follow_up`, at the follow-up's time):
        replay(self.events(upto, target_args)) from the initial status, a fresh copy each call."""
        if not 0 <= upto <= len(self.steps):
            raise ValueError(f"upto must be between 0 and {len(self.steps)}, got {upto}")
        if target_args is None or target_args == self.target_args:
            status = copy.deepcopy(self._truth[upto])
        else:
            status = replay(self.events(upto, target_args), self.initial_status())
        if follow_up:
            status = replay([{"type": "clock", "now": self.follow_up["at"]}], status)
        return status

    @cached_property
    def _truth(self) -> tuple[dict, ...]:
        """The status after steps 0 .. k-1 for every k, each carried forward from the one
        before by step k-1's events: one pass over the run instead of a replay from the start
        (and a token count of the whole history) for every status asked for. The context's size
        grows by the tokens of the step's messages alone: the template counts each message on
        its own (course.llm.template), and the generation prompt once per request."""
        primer = count_request_tokens([])
        tokens = count_request_tokens(self.history(0), self.tools)
        status = self.initial_status()
        truth = [status]
        for step in self.steps:
            tokens += count_request_tokens(step["messages"]) - primer
            status = replay([{"type": "clock", "now": step["at"]},
                             *events_from_messages(step["messages"], self.target_args),
                             {"type": "tokens", "used": tokens}], status)
            truth.append(status)
        return tuple(truth)


def load_run(name: str = "merchant_refund") -> Run:
    path = RUN_DIR / f"{name}.json"
    if not path.exists():
        known = sorted(p.stem for p in RUN_DIR.glob("*.json"))
        raise FileNotFoundError(f"no run {name!r} in {RUN_DIR.name}/ (known: {', '.join(known)})")
    data = json.loads(path.read_text(encoding="utf-8"))
    return Run(**{field: data[field] for field in Run.__dataclass_fields__})


# ------------------------------------------------------------------ placements (requests)

def bar_in_system_prompt(messages: list[dict], block: str) -> list[dict]:
    """SPECIMEN, the placement not to use: the bar appended to the system prompt. The system
    prompt is the start of every prefix, so a bar that changes each step leaves the provider
    nothing to reuse after it."""
    first, *rest = copy.deepcopy(messages)
    if first.get("role") != "system":
        raise ValueError("the first message must be the system prompt")
    return [{**first, "content": f"{first['content']}\n\n{block}"}, *rest]


def _check(placement: str, every: int) -> None:
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be a whole number of requests >= 1, got {every!r}")


def request_messages(run: Run, upto: int, placement: str = "end", mode: str = "replace",
                     follow_up: bool | str = False, bar=render_status, status_of=None,
                     keep_steps: int | None = None, every: int = 1) -> list[dict]:
    """The messages of request `upto` (steps 0 .. upto-1 visible) under one strategy.

    follow_up: True adds the run's follow-up as the last user message, a string adds that
    question instead (at the follow-up's time); a fresh bar then comes after it.

    placement "none" (no bar), "system" (the specimen) or "end" (a user message, `mode`
    "replace" or "append"). The end placements are built as an agent loop builds them: request
    k adds step k-1, and a fresh bar when k-1 is a multiple of `every` (1: every request);
    between refreshes the last bar stays where it was, and new steps come after it. With
    replace a refresh removes the older bars; with append they stay. `bar(status)` renders a
    status (default: render_status); `status_of(k, at_follow_up)` gives the status shown at
    request k (default: the truth, run.status). `keep_steps` drops all but the last steps from
    the history (a sliding window by steps; only with replace at every request).
    """
    _check(placement, every)
    status_of = status_of or (lambda k, last=False: run.status(k, follow_up=last))
    question = [run.follow_up_message(text=None if follow_up is True else follow_up)] if follow_up else []
    if placement == "end" and keep_steps is None:
        messages = run.history(0)
        for k, step in enumerate(run.steps[:upto], start=1):
            messages += copy.deepcopy(step["messages"])
            if (k - 1) % every == 0 and not (follow_up and k == upto):
                messages = place_status(messages, bar(status_of(k)), mode)
        if follow_up:
            messages = place_status(messages + question, bar(status_of(upto, True)), mode)
        return messages
    if keep_steps is not None and (placement, mode, every) != ("end", "replace", 1) \
            and placement != "none":
        raise ValueError("a window (keep_steps) works with no bar or with replace at every request")
    messages = run.windowed(upto, keep_steps) if keep_steps is not None else run.history(upto)
    messages += question
    if placement == "none":
        return messages
    block = bar(status_of(upto, True) if follow_up else status_of(upto))
    if placement == "system":
        return bar_in_system_prompt(messages, block)
    return place_status(messages, block, mode)


def replay_requests(run: Run, placement: str, mode: str = "replace", every: int = 1,
                    requests: int | None = None):
    """The messages of every request a replay sends, in order: requests 1 .. n of the run, then
    the follow-up (or only the first `requests`); each equal to `request_messages(run, j,
    placement, mode, follow_up=j == n + 1, every=every)`.

    The end placements are carried forward as the agent loop carries them: request j is request
    j-1 with step j-1 added (and a fresh bar when one is due), so each step's status is asked for
    once in the whole replay, not once per later request. The requests share their message
    dicts: send them, do not change them."""
    _check(placement, every)
    last = run.n_requests + 1 if requests is None else min(requests, run.n_requests + 1)
    if placement != "end":
        for j in range(1, last + 1):
            yield request_messages(run, j, placement, mode, follow_up=j == run.n_requests + 1,
                                   every=every)
        return
    messages = run.history(0)
    for j in range(1, last + 1):
        messages = messages + copy.deepcopy(run.steps[j - 1]["messages"])
        if j == run.n_requests + 1:
            yield place_status(messages + [run.follow_up_message()],
                               render_status(run.status(j, follow_up=True)), mode)
        else:
            if (j - 1) % every == 0:
                messages = place_status(messages, render_status(run.status(j)), mode)
            yield messages


def replay_usage(run: Run, client, model: str, placement: str, mode: str = "replace",
                 max_tokens: int = 64, requests: int | None = None, every: int = 1) -> list[dict]:
    """Send every request of the run (then the follow-up) under one strategy, or only the first
    `requests`; one usage record per request: {"request", "prompt_tokens", "cached_tokens",
    "completion_tokens"}, read by course.usage.read_usage (None: not reported by the provider,
    e.g. cached_tokens on Ollama). `max_tokens` is sent as max_completion_tokens, the parameter
    every provider accepts (OpenAI's reasoning models refuse max_tokens).

    The messages go in `extra_body`, which the openai SDK merges into the JSON body as they are:
    the same bytes on the wire, without the SDK's walk of every message against its parameter
    types first (half of a replay's time: the messages are plain wire-format dicts already)."""
    records = []
    for j, messages in enumerate(replay_requests(run, placement, mode, every, requests), start=1):
        reply = client.chat.completions.create(model=model, messages=[], tools=run.tools,
                                               max_completion_tokens=max_tokens,
                                               extra_body={"messages": messages})
        usage = read_usage(reply.usage)
        records.append({"request": j, "prompt_tokens": usage.prompt,
                        "cached_tokens": usage.cached, "completion_tokens": usage.completion})
    return records


# ------------------------------------------------------------------ specimens and errors

COUNT_IN_TEXT = re.compile(r"(?P<target>[A-Z][\w&.-]*) calls? (?P<count>\d+) of (?P<limit>\d+)")


def bar_from_result_text(messages: list[dict], limits: dict) -> dict:
    """SPECIMEN, the poisonable bar: counters read from what tool results *say* ("Xfinity calls
    2 of 3") instead of from the agent's own call log. Whoever writes a tool result (a web page,
    a merchant's system) writes the counter: the last such sentence wins."""
    status = new_status(limits=limits)
    calls: dict = {}
    for message in messages:
        if message.get("role") == "tool":
            for match in COUNT_IN_TEXT.finditer(str(message.get("content"))):
                calls[f"call.{match['target']}"] = int(match["count"])
    status["calls"] = calls
    return status


def with_counter(status: dict, key: str, value: int) -> dict:
    """A copy of `status` whose counter `key` says `value` (an injected error, for the lesson)."""
    changed = copy.deepcopy(status)
    changed["calls"][key] = value
    return changed


def without_targets(status: dict) -> dict:
    """A copy of `status` that kept only per-tool totals: the bar designed without the
    per-merchant field (the coverage problem)."""
    changed = copy.deepcopy(status)
    changed["calls"] = {k: v for k, v in status["calls"].items() if "." not in k}
    changed["limits"] = {}
    return changed
