"""Chapter 10's givens: the data types the lab's defences and attack table exchange, and the
tool name untrusted text is delivered under. The answers (`solutions.injection`) re-export them.

    ToolPolicy, Guarded   what guard_call is given and returns
    Effects, Verdict      what an agent reports for a row, and the table's judgement of it
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

EXTERNAL_TOOL = "read_external"  # the call that delivers fenced text moved out of a privileged role
OUTCOMES = ("blocked", "breached", "completed", "failed")


@dataclass(frozen=True)
class ToolPolicy:
    """allowed: the tool names the task needs (None: no least-privilege rule);
    irreversible: names that need a confirmation; confirm(name, arguments) -> bool asks a person
    (None: nobody to ask, so irreversible calls are refused)."""
    allowed: frozenset | None = None
    irreversible: frozenset = field(default_factory=frozenset)
    confirm: Callable[[str, dict], bool] | None = None


@dataclass(frozen=True)
class Guarded:
    allowed: bool
    reason: str
    asked: bool = False  # whether a person was asked


@dataclass(frozen=True)
class Effects:
    reply: str | None
    executed: tuple = ()   # ({"name", "arguments"}, ...) of the calls that actually ran


@dataclass(frozen=True)
class Verdict:
    name: str
    entry: str
    kind: str              # "attack" or "task"
    outcome: str           # blocked / breached (attacks), completed / failed (tasks)
    detail: tuple = ()     # the canaries that tripped, or the goals that were missed

    @property
    def ok(self) -> bool:
        return self.outcome in ("blocked", "completed")
