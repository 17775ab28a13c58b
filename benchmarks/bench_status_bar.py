"""The status bar's own cost, and what the lesson's replay of it costs. Prints figures; asserts
nothing.

    python benchmarks/bench_status_bar.py

Part 1: microseconds to apply one event and to render the block, over the replayed run of
Chapter 08 and over longer synthetic streams. A model call takes hundreds of milliseconds; the
bar must cost microseconds. The last column compares each stream with the shortest one (flat:
the cost per event does not grow with the run).

Part 2: the replay behind lesson 08's placement table and its widget, before and after issue 35
(item 1, and lesson 08's part of item 6), both measured in this one run. Before, request j of
the "end" placements asked for `Run.status(k)` of every earlier step k, each a replay from the
start with a token count of a deep copy of the whole history (quadratic per request, cubic per
run), and every request went through the openai SDK's walk of each message against its
parameter types. After, a replay carries its request forward (`replay_requests`: each step's
status once, from the truth carried step by step) and hands the messages to the SDK in
`extra_body` (the same bytes on the wire). `RunBefore` and `replay_usage_before` below keep the
old implementation as the reference. Counts are exact; times are single runs (before) against
the better of two (after) on a shared machine: read the ratios.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, fields

from timing import best_time  # noqa: E402
import course.llm
import lesson_support.status_bar as status_bar
import lesson_support.widgets.status_bar as widget
from course.usage import read_usage
from lesson_support.status_bar import (Run, load_run, replay_requests, replay_usage,
                                       request_messages)
from solutions.status_bar import new_status, render_status, replay, update_status

STRATEGIES = (("none", "replace"), ("system", "replace"), ("end", "replace"), ("end", "append"))
COUNTS: Counter = Counter()  # statuses asked for, token counts and the messages they tokenised


@dataclass(frozen=True)
class RunBefore(Run):
    """The run with `status` as it was before: a replay of every event from the start."""

    def status(self, upto: int, target_args: dict | None = None, follow_up: bool = False) -> dict:
        status = replay(self.events(upto, target_args), self.initial_status())
        if follow_up:
            status = replay([{"type": "clock", "now": self.follow_up["at"]}], status)
        return status


def replay_usage_before(run: Run, client, model: str, placement: str, mode: str = "replace",
                        max_tokens: int = 64, requests: int | None = None, every: int = 1) -> list[dict]:
    """replay_usage as it was before: each request built from scratch, sent through the SDK's walk."""
    records = []
    last = run.n_requests + 1 if requests is None else min(requests, run.n_requests + 1)
    for j in range(1, last + 1):
        follow = j == run.n_requests + 1
        messages = request_messages(run, run.n_requests + 1 if follow else j, placement, mode,
                                    follow_up=follow, every=every)
        reply = client.chat.completions.create(model=model, messages=messages, tools=run.tools,
                                               max_completion_tokens=max_tokens)
        usage = read_usage(reply.usage)
        records.append({"request": j, "prompt_tokens": usage.prompt,
                        "cached_tokens": usage.cached, "completion_tokens": usage.completion})
    return records


def _counting() -> None:
    """Count every status asked for and every token count of the lesson support, before and after."""
    def statuses(method):
        def counted(self, *args, **kwargs):
            COUNTS["statuses"] += 1
            return method(self, *args, **kwargs)
        return counted

    count = status_bar.count_request_tokens

    def token_counts(messages, *args, **kwargs):
        COUNTS["token counts"] += 1
        COUNTS["messages tokenised"] += len(messages)
        return count(messages, *args, **kwargs)

    Run.status = statuses(Run.status)
    RunBefore.status = statuses(RunBefore.status)
    status_bar.count_request_tokens = token_counts


def per_event(events, status) -> tuple[float, float]:
    """(update, update + render) microseconds per event, best of five passes."""
    def update_only():
        s = status
        for event in events:
            s = update_status(s, event)

    def update_and_render():
        s = status
        for event in events:
            s = update_status(s, event)
            render_status(s)

    n = len(events)
    return best_time(update_only) / n * 1e6, best_time(update_and_render) / n * 1e6


def synthetic(n: int) -> list[dict]:
    events = [{"type": "todo_rewrite", "items": [{"id": str(i), "content": f"step {i}"}
                                                 for i in range(1, 9)]}]
    for i in range(n - 1):
        kind = i % 4
        if kind == 0:
            events.append({"type": "tool_call", "tool": "call", "target": f"merchant {i % 7}"})
        elif kind == 1:
            events.append({"type": "tool_call", "tool": "web_search"})
        elif kind == 2:
            events.append({"type": "clock", "now": f"2025-09-14T{10 + i // 3600 % 12:02d}:"
                                                   f"{i // 60 % 60:02d}:{i % 60:02d}"})
        else:
            events.append({"type": "tokens", "used": 1000 + 37 * i})
    return events


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Version:
    """The run, the replay and the request builder of one side of the comparison."""

    def __init__(self, before: bool):
        self.before = before
        self.replay_usage = replay_usage_before if before else replay_usage

    def run(self) -> Run:
        """A freshly loaded run: nothing carried over from an earlier measurement."""
        run = load_run()
        return RunBefore(**{f.name: getattr(run, f.name) for f in fields(Run)}) if self.before else run

    def every_request(self, run, placement, mode) -> list:
        """The messages of every request a replay sends (the run's, then the follow-up)."""
        if not self.before:
            return list(replay_requests(run, placement, mode))
        last = run.n_requests + 1
        return [request_messages(run, j, placement, mode, follow_up=j == last)
                for j in range(1, last + 1)]

    def lesson_cell(self, run) -> None:
        """Lesson 08's placement table: each strategy replayed on a fresh teaching model."""
        for placement, mode in STRATEGIES:
            with course.llm.fresh_targets() as targets:
                self.replay_usage(run, targets[0].client, targets[0].model, placement, mode)

    def widget(self, run):
        """The widget built as the lesson builds it (the replay under end, replace, then the
        question at the starting request), with this side's run and replay."""
        widget._usage.cache_clear()
        widget.load_run, widget.replay_usage = (lambda name: run), self.replay_usage
        try:
            return widget.status_bar_replay(run)
        finally:
            widget.load_run, widget.replay_usage = load_run, replay_usage

    def choose(self, box, run, choice) -> None:
        """A placement chosen in the widget's dropdown for the first time (a replay, then the question)."""
        widget.load_run, widget.replay_usage = (lambda name: run), self.replay_usage
        try:
            box.children[0].children[1].value = choice
        finally:
            widget.load_run, widget.replay_usage = load_run, replay_usage


def compare(label: str, work) -> None:
    """One row: `work(version)` timed before (once) and after (the better of two)."""
    old = seconds(lambda: work(Version(before=True)))
    new = min(seconds(lambda: work(Version(before=False))) for _ in range(2))
    print(f"  {label:52s} {old:7.2f}s {new:7.2f}s {old / new:6.1f}x")


def main() -> None:
    run = load_run()
    events = run.events(len(run.steps))
    update, both = per_event(events, run.initial_status())
    print(f"replayed run ({len(events)} events): update {update:6.2f} us/event, "
          f"update + render {both:6.2f} us/event")
    print(f"\n{'events':>7} {'update (us/ev)':>15} {'+render (us/ev)':>16} {'ratio':>6}")
    first = None
    for n in (100, 1_000, 10_000):
        update, both = per_event(synthetic(n), new_status(limits={"call.*": 3}, budget=200_000))
        first = first or both
        print(f"{n:>7,} {update:>15.2f} {both:>16.2f} {both / first:>6.2f}")

    _counting()
    before, after = Version(before=True), Version(before=False)
    for placement, mode in STRATEGIES:
        assert before.every_request(before.run(), placement, mode) == \
            after.every_request(after.run(), placement, mode), (placement, mode)
    print(f"\nlesson 08's replay ({run.n_requests} requests and the follow-up), before -> after:")
    print(f"  {'one end, replace replay builds its requests':52s} {'before':>8} {'after':>8} {'ratio':>7}")
    counted = []
    for version in (before, after):
        COUNTS.clear()
        version.every_request(version.run(), "end", "replace")
        counted.append(dict(COUNTS))
    for what, label in (("statuses", "statuses computed"), ("token counts", "token counts"),
                        ("messages tokenised", "messages tokenised")):
        old, new = counted[0][what], counted[1][what]
        print(f"  {label:52s} {old:8,} {new:8,} {old / new:6.1f}x")
    print(f"\n  {'seconds':52s} {'before':>8} {'after':>8} {'ratio':>7}")
    compare("build every request's messages (end, replace)",
            lambda v: v.every_request(v.run(), "end", "replace"))
    compare("lesson 08's cell 12: four strategies, fresh models", lambda v: v.lesson_cell(v.run()))
    compare("widget: built (end, replace at its first request)", lambda v: v.widget(v.run()))
    for label, choice in (("no bar", ("none", "replace")), ("system prompt", ("system", "replace")),
                          ("end, append", ("end", "append"))):
        def react(version, choice=choice):
            run = version.run()
            box = version.widget(run)
            return seconds(lambda: version.choose(box, run, choice))
        old = react(before)
        new = min(react(after) for _ in range(2))
        print(f"  {'widget: dropdown to ' + label:52s} {old:7.2f}s {new:7.2f}s {old / new:6.1f}x")


if __name__ == "__main__":
    main()
