"""Chapter 11's givens: what lab 11 hands the student and the answers build on, no answer among
them (lab 11 asks for `budget_tool_results`, `drop_noise`, `archive_turn` and
`compact_with_breaker`).

    the run        Run, load_run (the lesson's replayed 212-step run, data/production_compaction/),
                   context_text and visible (is a probe's fact still in a context?)
    the state      ResultStore (where layer 1 saves full outputs, and its frozen decisions) and
                   CircuitBreaker (layer 5's), the objects the layers keep between requests
    the constants  KEEP_TURNS, NOISE_RULES and NOISE_MARK, PREVIEW_MARK and RESULTS_DIR, is_preview

The answers (`solutions.production_compaction`) and the lesson's support
(`lesson_support.production_compaction`) re-export them.

`ResultStore` and `CircuitBreaker` keep their state as the items of a dict (read and written
through attributes: `store.files`, `breaker.calls += 1`). A check hands one to the student's
function and then reads what the function recorded in it; in a graded lab that function runs
in the confined worker, and a dict argument the function changed is changed in the judge the
same way (`course.labs.wire`), where an ordinary object would cross as a copy or a read-only
handle. Their methods are the same on both sides: the class comes from this module.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from course.paths import DATA_DIR

RUN_FILE = DATA_DIR / "production_compaction" / "run.json"
KEEP_TURNS = 4                    # turns layer 5 keeps whole after its summary
RESULTS_DIR = ".agent/results"    # where layer 1 saves full outputs
PREVIEW_MARK = "[output saved to "
NOISE_MARK = "[noise removed: "
NOISE_RULES: dict[str, str] = {
    "build progress": r"^\[\s*\d+%\] Building ",
    "download meter": r"^Downloading \S+ .*/s$",
    "passing test": r"::test_\w+ PASSED\b",
}


# ------------------------------------------------------------------ the run and its probes
@dataclass(frozen=True)
class Run:
    """The lesson's replayed run: a system prompt, the task, then steps, each one assistant
    message and its tool results (`steps[k]["messages"]`), and the probes asked at the end."""
    name: str
    system: str
    task: str
    tools: list
    steps: list
    probes: list
    subtask: dict

    def head(self) -> list[dict]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.task}]

    def history(self, upto: int | None = None) -> list[dict]:
        """The full transcript: head and steps 1..upto (all of them by default)."""
        steps = self.steps if upto is None else self.steps[:upto]
        return copy.deepcopy(self.head() + [m for s in steps for m in s["messages"]])


@lru_cache(maxsize=2)
def _load(path: str) -> Run:
    data = json.loads(open(path, encoding="utf-8").read())
    return Run(data["name"], data["system"], data["task"], data["tools"], data["steps"],
               data["probes"], data["subtask"])


def load_run(path=RUN_FILE) -> Run:
    """The run at `path` (the lesson's by default), a copy of its own."""
    return copy.deepcopy(_load(str(path)))


def context_text(messages: list[dict]) -> str:
    """Everything a model reads in `messages`: the text contents and the calls' arguments."""
    parts = []
    for m in messages:
        if isinstance(m.get("content"), str):
            parts.append(m["content"])
        for call in m.get("tool_calls") or ():
            parts.append(call["function"]["arguments"])
    return "\n".join(parts)


def visible(probe: dict, messages: list[dict]) -> bool:
    """Is every fact the probe expects still in the context?"""
    text = context_text(messages)
    return all(e in text for e in probe["expect"])


# ------------------------------------------------------------------ the state the layers keep
def _item(name: str, doc: str) -> property:
    """An attribute kept as the dict item `name` (see the module docstring)."""
    def get(self):
        return self[name]

    def set_(self, value):
        self[name] = value

    return property(get, set_, doc=doc)


def is_preview(content) -> bool:
    """True for a tool result layer 1 replaced by a preview."""
    return isinstance(content, str) and content.startswith(PREVIEW_MARK)


class ResultStore(dict):
    """Where full outputs go: files under `directory` (or in memory if it is None), plus the
    frozen decisions (`decisions[(tool_call_id, content)]` is the preview that replaced the
    result, or None when the result was kept)."""

    directory = _item("directory", "the folder the files are written under, or None")
    files = _item("files", "{path: the full output saved there}")
    decisions = _item("decisions", "{(tool_call_id, content): the preview shown, or None: kept}")

    def __init__(self, directory: str | Path | None = None):
        super().__init__(directory=Path(directory) if directory is not None else None,
                         files={}, decisions={})

    def path_for(self, call_id: str, n: int = 1) -> str:
        """The n-th file for outputs of `call_id` (n > 1 only when an id was reused)."""
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(call_id))
        return f"{RESULTS_DIR}/{safe}{'' if n == 1 else f'-{n}'}.txt"

    def held_path(self, text: str) -> str | None:
        """The path of the full output `text` is a preview of, if this store holds it."""
        if not is_preview(text):
            return None
        path = text[len(PREVIEW_MARK):].split(":", 1)[0]
        return path if path in self.files else None

    def save(self, call_id: str, text: str) -> str:
        """Keep `text` in full; returns the path the agent can read it back from. Saving the
        same output again returns its path; a preview of an output held here returns the
        output's path and saves nothing (a full output is never replaced by a preview); a
        different output under a reused id gets a file of its own."""
        held = self.held_path(text)
        if held is not None:
            return held
        n = 1
        while self.files.get(self.path_for(call_id, n), text) != text:
            n += 1
        path = self.path_for(call_id, n)
        self.files[path] = text
        if self.directory is not None:
            target = self.directory / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return path

    def read(self, path: str) -> str:
        if path not in self.files:
            raise FileNotFoundError(f"no saved output at {path}")
        return self.files[path]

    def __repr__(self) -> str:
        where = f", under {self.directory}" if self.directory is not None else ""
        return f"ResultStore({len(self.files)} files, {len(self.decisions)} decisions{where})"


class CircuitBreaker(dict):
    """A circuit breaker for the summariser: after `max_failures` consecutive failures it opens
    and the summariser is not called again. Production data in the textbook: many sessions were
    stuck retrying a compaction that kept failing, paying for every attempt."""

    max_failures = _item("max_failures", "consecutive failures that open the breaker")
    failures = _item("failures", "consecutive failures so far")
    total_failures = _item("total_failures", "failures in all")
    calls = _item("calls", "times the summariser was called")
    is_open = _item("is_open", "True once the breaker opened: the summariser is not called again")

    def __init__(self, max_failures: int = 3):
        if not isinstance(max_failures, int) or max_failures < 1:
            raise ValueError(f"max_failures must be a positive integer, got {max_failures!r}")
        super().__init__(max_failures=max_failures, failures=0, total_failures=0, calls=0,
                         is_open=False)

    def allow(self) -> bool:
        """May the summariser be called now?"""
        return not self.is_open

    def record_failure(self) -> None:
        self.failures += 1
        self.total_failures += 1
        if self.failures >= self.max_failures:
            self.is_open = True

    def record_success(self) -> None:
        self.failures = 0

    @property
    def state(self) -> str:
        return "open" if self.is_open else "closed"

    def __repr__(self) -> str:
        return (f"CircuitBreaker({self.state}, {self.failures}/{self.max_failures} consecutive "
                f"failures, {self.calls} calls)")
