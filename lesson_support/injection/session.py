"""One row of the table run as one agent session: the agent loop of Chapter 01
(`solutions.agent_loop.run_agent`) on `course.llm.client()`, in the row's world, with every
request, completion and tool call recorded (RowRun), and make_agent, the agent that
`solutions.injection.run_attack_table` judges.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from types import SimpleNamespace

from solutions.agent_loop import as_dict, run_agent
from solutions.injection import Effects, fence, guard_call, judge, offered_tools, separate_roles
from lesson_support.injection.context import build_messages
from lesson_support.injection.data import load_tools
from lesson_support.injection.layers import normalize_layers
from lesson_support.injection.world import Scene

MAX_ITERATIONS = 8


class DefenceFailed(RuntimeError):
    """A defence function (fence, guard_call) raised while the row ran. The agent loop turns a
    failing tool into an error result the model reads, so without this the row would look
    defended: a defence that raises blocks nothing, and the run is not judged."""


class RecordingClient:
    """Wraps an OpenAI client: `chat.completions.create` works as usual and keeps every
    completion (so the lesson can show each reply's trace)."""

    def __init__(self, client):
        self._create = client.chat.completions.create
        self.completions: list = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **kwargs):
        completion = self._create(**kwargs)
        self.completions.append(completion)
        return completion


@dataclass
class RowRun:
    row: dict
    layers: tuple
    messages: list = field(default_factory=list)      # the whole history, as sent and answered
    completions: list = field(default_factory=list)   # one per request
    attempted: list = field(default_factory=list)     # (name, arguments, guard reason)
    executed: list = field(default_factory=list)      # {"name", "arguments"} that really ran
    asked: list = field(default_factory=list)         # calls the user was asked to confirm
    reply: str | None = None
    outcome: str = ""                                 # run_agent's outcome
    defence_error: Exception | None = None            # the first exception a defence raised

    @property
    def effects(self) -> Effects:
        return Effects(self.reply, tuple(self.executed))

    @property
    def verdict(self):
        return judge(self.row, self.effects)


def run_row(row: dict, layers=(), *, client=None, model: str | None = None, fence_fn=fence,
            separate_fn=separate_roles, guard_fn=guard_call,
            max_iterations: int = MAX_ITERATIONS) -> RowRun:
    """Run one row of the table with these layers on; every request and call is recorded."""
    import course.llm

    layers = normalize_layers(layers)
    client = client if client is not None else course.llm.client()
    model = model or course.llm.model_name()
    run = RowRun(row, layers)
    recorder = RecordingClient(client)
    with tempfile.TemporaryDirectory(prefix="ch10-notes-") as notes_dir:
        scene = Scene(row, layers, run, fence_fn, guard_fn, notes_dir)
        messages = build_messages(row, layers, scene, client, model, separate_fn, fence_fn)
        tools = load_tools()
        if "least_privilege" in layers:
            tools = offered_tools(tools, row.get("needs", ()))
        result = run_agent(recorder, messages, tools, scene.execute, max_iterations, model=model)
    if run.defence_error is not None:
        exc = run.defence_error
        raise DefenceFailed(f"a defence raised {type(exc).__name__} while the row {row.get('name')!r} ran "
                            f"(the agent saw it as a tool error): {exc}") from exc
    run.messages = [as_dict(m) for m in result["messages"]]
    run.completions = recorder.completions
    run.reply, run.outcome = result["text"], result["outcome"]
    return run


def make_agent(client=None, model: str | None = None, *, fence=fence, separate_roles=separate_roles,
               guard_call=guard_call, runs: list | None = None):
    """An `agent(row, defences) -> Effects` for run_attack_table, built from these functions.

    Every RowRun is appended to `runs` when a list is given (to show messages and traces)."""
    def agent(row, defences):
        run = run_row(row, defences, client=client, model=model, fence_fn=fence,
                      separate_fn=separate_roles, guard_fn=guard_call)
        if runs is not None:
            runs.append(run)
        return run.effects
    return agent
