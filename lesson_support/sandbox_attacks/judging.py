"""Judging one command: run it through a tool in a fresh scene and read the canaries.

A command is judged by what actually happened, not by what the tool answered; each canary is
one thing that must not happen:

    secret     the secret's token reached the reply or a file in the workspace
    api_key    the fake API key reached the reply or a file in the workspace
    protected  protected.txt was changed or deleted
    outbox     anything appeared in root/outbox
    survivor   a process the command started was still running after the call returned
    stalled    the call lasted as long as the tool's timeout: the command never ended by itself
    memory     the tool held more than MEMORY_BUDGET_BYTES while answering (in this process,
               or in the worker running a graded lab's functions: its peak resident memory)
    network    something connected to the listening socket
"""
from __future__ import annotations

import hashlib
import os
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

from course.labs.observe import WorkerMemory
from lesson_support.sandbox_attacks.processes import (become_subreaper, collect_survivors,
                                              watched_processes)
from lesson_support.sandbox_attacks.scene import (API_KEY, SAMPLE_WORKSPACE, SECRET_TOKEN, Scene,
                                          open_scene)
from lesson_support.sandbox_attacks.tools import TOOL_TIMEOUT

MEMORY_BUDGET_BYTES = 4 * 1024 * 1024  # the tools under test cap output at OUTPUT_CAP_BYTES

CANARIES = {
    "secret": "the secret file outside the workspace was read",
    "api_key": "the API key in the environment leaked",
    "protected": "the protected file in the workspace was changed",
    "outbox": "a file was written outside the workspace",
    "survivor": "a process outlived the call",
    "stalled": "the command ran until the tool's timeout stopped it",
    "memory": "the tool held far more output in memory than its cap",
    "network": "a network connection was made",
}


@dataclass(frozen=True)
class Outcome:
    command: str
    reply: str
    breaches: tuple[str, ...]  # canary names, in CANARIES order; empty means blocked

    @property
    def blocked(self) -> bool:
        return not self.breaches


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _workspace_contains(scene: Scene, token: str) -> bool:
    needle = token.encode()
    secret = os.stat(scene.secret_file) if scene.secret_file.exists() else None
    for folder, _, files in os.walk(scene.workspace):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue  # a link to the secret is set-up, not a leak; read real files only
            if secret is not None and os.path.samefile(path, scene.secret_file):
                continue  # so is a hard link to it: the same file under a second name
            try:
                with open(path, "rb") as handle:
                    if needle in handle.read(4 * 1024 * 1024):
                        return True
            except OSError:
                continue
    return False


def _connected(scene: Scene) -> bool:
    try:
        connection, _ = scene.listener.accept()
    except (BlockingIOError, OSError):
        return False
    connection.close()
    return True


def judge(scene: Scene, tool, command: str) -> Outcome:
    """Run `command` (placeholders allowed) through `tool.run` and read the canaries."""
    protected_before = _digest(scene.protected_file)
    watching_survivors = become_subreaper()
    before = set(watched_processes()) if watching_survivors else set()
    worker_memory = WorkerMemory()  # a graded lab's student functions hold memory in their worker
    worker_memory.start()
    started_tracing = not tracemalloc.is_tracing()
    if started_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    started = time.monotonic()
    try:
        reply = tool.run(scene.expand(command))
    except Exception as exc:  # a broken tool is reported, and the canaries still judged
        reply = f"[the tool raised {type(exc).__name__}: {exc}]"
    elapsed = time.monotonic() - started
    peak = max(tracemalloc.get_traced_memory()[1] - baseline, worker_memory.growth())
    if started_tracing:
        tracemalloc.stop()
    reply = reply if isinstance(reply, str) else repr(reply)
    survivors = collect_survivors(before) if watching_survivors else []
    tripped = {
        "secret": SECRET_TOKEN in reply or _workspace_contains(scene, SECRET_TOKEN),
        "api_key": API_KEY in reply or _workspace_contains(scene, API_KEY),
        "protected": _digest(scene.protected_file) != protected_before,
        "outbox": any(scene.outbox.iterdir()),
        "survivor": bool(survivors),
        "stalled": elapsed >= getattr(tool, "timeout", TOOL_TIMEOUT),
        "memory": peak > MEMORY_BUDGET_BYTES,
        "network": _connected(scene),
    }
    return Outcome(command, scene.mask(reply), tuple(name for name in CANARIES if tripped[name]))


def run_command(make_tool, command: str, *, setup: str | None = None,
                template=SAMPLE_WORKSPACE) -> Outcome:
    """One command against a fresh tool in a fresh scene. `make_tool(workspace, env)`."""
    with open_scene(template, setup) as scene:
        return judge(scene, make_tool(scene.workspace, scene.env), command)
