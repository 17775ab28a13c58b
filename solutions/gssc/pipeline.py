"""The pipeline: gather from sources, then select, structure and compress (`build_context`),
with the sources and config kept together in a `ContextBuilder`."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Callable, Iterable, Mapping, Sequence, Union

from solutions.gssc.compression import compress
from course.givens.gssc.config import ContextConfig
from course.givens.gssc.constants import DEFAULT_OUTPUT
from course.givens.gssc.packets import Packet, as_datetime
from solutions.gssc.render import candidate_budget, section_tokens
from solutions.gssc.selection import Row, choose, default_now


@dataclass(frozen=True)
class Built:
    """A finished context and how it came to be."""

    text: str
    tokens: int  # exact count of `text`
    limit: int  # budget - reserve
    rows: list[Row]  # every candidate with its scores and status
    sections: dict[str, int]  # tokens per section
    cuts: dict[str, str] = field(default_factory=dict)  # section -> cut note, if compress cut
    failures: dict[str, str] = field(default_factory=dict)  # source -> error, from gather

    @property
    def chosen(self) -> list[Packet]:
        """The packets in the context, in order of value (pinned ones first)."""
        pinned = [r.packet for r in self.rows if r.status == "pinned"]
        picked = sorted((r for r in self.rows if r.status == "selected"), key=lambda r: r.rank)
        return pinned + [r.packet for r in picked]


def build_context(task: str, packets: Sequence[Packet], config: ContextConfig | None = None,
                  output: str = DEFAULT_OUTPUT, now: datetime | None = None) -> Built:
    """Select, structure and compress: the context for `task` from candidate `packets`.

    The fill gets exactly the room the mandatory sections leave (`candidate_budget`), so
    compress normally has nothing to do; it is the guarantee that the limit holds.
    Raises BudgetError when the budget cannot hold the mandatory sections.
    """
    config = config or ContextConfig()
    pinned, candidates = [], []
    for p in packets:  # one pass: at 100k packets, each walk over them counts
        (pinned if p.pinned else candidates).append(p)
    room = candidate_budget(task, pinned, config, output)
    now = as_datetime(now) if now is not None else default_now(packets)
    rows, chosen = choose(candidates, task, room, config, now)  # explain_selection's rows
    done = compress(task, pinned + chosen, output, config.limit)
    if done.dropped:
        gone = {id(p) for p in done.dropped}
        for row in rows:
            if id(row.packet) in gone:
                row.status, row.rank = "cut", None
    rows[:0] = [Row(p, None, None, None, "pinned") for p in pinned]  # no copy of the rest
    return Built(
        text=done.text,
        tokens=done.tokens,
        limit=config.limit,
        rows=rows,
        sections=section_tokens(task, done.kept, output, done.cuts),
        cuts=done.cuts,
    )


Source = Union[Callable[[str], Iterable[Packet]], Iterable[Packet]]


def gather(sources: Mapping[str, Source], task: str) -> tuple[list[Packet], dict[str, str]]:
    """Collect candidate packets from every source.

    A source is a function of the task returning packets, or simply a list of packets. A
    source that raises, or returns something that is not a Packet, is skipped as a whole and
    reported in the second value ({source name: what went wrong}); the others still count.
    """
    packets: list[Packet] = []
    failures: dict[str, str] = {}
    for name, source in sources.items():
        try:
            found = list(source(task) if callable(source) else source)
        except Exception as exc:  # a broken source must not take the whole context down
            failures[name] = f"{type(exc).__name__}: {exc}"
            continue
        wrong = [type(p).__name__ for p in found if not isinstance(p, Packet)]
        if wrong:
            failures[name] = f"returned {wrong[0]} where a Packet was expected"
            continue
        packets.extend(found)
    return packets, failures


class ContextBuilder:
    """Gather -> Select -> Structure -> Compress, with the sources and config kept together.

        builder = ContextBuilder({"system": [policy], "notes": tool.as_source()}, config)
        built = builder.build("Why does linking libpng fail?")
        print(built.text, built.failures)
    """

    def __init__(self, sources: Mapping[str, Source], config: ContextConfig | None = None,
                 output: str = DEFAULT_OUTPUT):
        self.sources = dict(sources)
        self.config = config or ContextConfig()
        self.output = output

    def build(self, task: str, now: datetime | None = None) -> Built:
        packets, failures = gather(self.sources, task)
        built = build_context(task, packets, self.config, self.output, now)
        return replace(built, failures=failures)
