"""The status bar's own cost: microseconds to apply one event and to render the block, over the
replayed run of Chapter 08 and over longer synthetic streams. Prints figures; asserts nothing.

    python benchmarks/bench_status_bar.py

A model call takes hundreds of milliseconds; the bar must cost microseconds. The last column
compares each stream with the shortest one (flat: the cost per event does not grow with the run).
"""
from __future__ import annotations

from timing import best_time  # noqa: E402
from lesson_support.status_bar import load_run
from solutions.status_bar import new_status, render_status, update_status


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


if __name__ == "__main__":
    main()
