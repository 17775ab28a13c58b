"""The status bar's own cost, and what the lesson's replay of it costs. Prints figures; asserts
nothing.

    python benchmarks/bench_status_bar.py

Part 1: microseconds to apply one event and to render the block, over the replayed run of
Chapter 08 and over longer synthetic streams. A model call takes hundreds of milliseconds; the
bar must cost microseconds. The last column compares each stream with the shortest one (flat:
the cost per event does not grow with the run).

Part 2: the replay behind lesson 08's placement table and its widget, before and after the
truth was carried forward (issue 35, item 1). Before, every request of the "end" placements
recomputed `Run.status(k)` for every earlier step, each a replay from the start with a token
count of a deep copy of the whole history: quadratic per request, cubic per run. `RunBefore`
below keeps that implementation as the reference, so both are measured in this one run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, fields

from timing import best_time  # noqa: E402
import course.llm
from lesson_support.status_bar import Run, load_run, replay_usage, request_messages
from lesson_support.widgets.status_bar import ask
from solutions.status_bar import new_status, render_status, replay, update_status

STRATEGIES = (("none", "replace"), ("system", "replace"), ("end", "replace"), ("end", "append"))


@dataclass(frozen=True)
class RunBefore(Run):
    """The run with `status` as it was before: a replay of every event from the start."""

    def status(self, upto: int, target_args: dict | None = None, follow_up: bool = False) -> dict:
        COUNT[0] += 1
        status = replay(self.events(upto, target_args), self.initial_status())
        if follow_up:
            status = replay([{"type": "clock", "now": self.follow_up["at"]}], status)
        return status


COUNT = [0]  # statuses computed from scratch by RunBefore


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


def every_request(run, placement, mode) -> list:
    """The messages of every request a replay sends (the run's, then the follow-up)."""
    last = run.n_requests + 1
    return [request_messages(run, last if j == last else j, placement, mode, follow_up=j == last)
            for j in range(1, last + 1)]


def replay_table(run) -> None:
    """What lesson 08's cell 19 does: each strategy replayed on a fresh teaching model."""
    for placement, mode in STRATEGIES:
        with course.llm.serve() as server:
            replay_usage(run, server.client(), course.llm.MODEL_NAME, placement, mode)


def widget_change(run) -> None:
    """What a dropdown change in the widget costs the first time: the replay under the new
    placement, then the question asked at the widget's starting request."""
    with course.llm.serve() as server:
        client = server.client()
        replay_usage(run, client, course.llm.MODEL_NAME, "end", "append")
        ask(run, 41, "end", "append", 0, client, course.llm.MODEL_NAME)


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

    before = RunBefore(**{f.name: getattr(run, f.name) for f in fields(Run)})
    after = load_run()
    assert every_request(before, "end", "append") == every_request(after, "end", "append")
    COUNT[0] = 0
    every_request(before, "end", "replace")
    computed = COUNT[0]
    print(f"\nlesson 08's replay ({run.n_requests} requests and the follow-up), before -> after:")
    print(f"  statuses computed from scratch for one end-placement replay: {computed:,} -> "
          f"{len(run.steps) + 1} (once per step, carried forward)")
    rows = (("build every request's messages (end, replace)", lambda r: every_request(r, "end", "replace")),
            ("cell 19: four strategies on fresh teaching models", replay_table),
            ("widget: a new placement chosen", widget_change))
    print(f"  {'':50s} {'before':>8} {'after':>8} {'ratio':>7}")
    for label, work in rows:
        old = seconds(lambda: work(before))
        new = min(seconds(lambda: work(load_run())), seconds(lambda: work(load_run())))
        print(f"  {label:50s} {old:7.2f}s {new:7.2f}s {old / new:6.1f}x")


if __name__ == "__main__":
    main()
