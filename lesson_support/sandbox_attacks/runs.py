"""Running the tables: each attack in a fresh scene of its own, and each legitimate command
checked against what a plain shell prints for it.

The attacks of a table run side by side in worker processes (`workers`).
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass

from solutions.sandbox.hygiene import minimal_env
from lesson_support.sandbox_attacks.commands import ATTACKS, LEGIT_COMMANDS, Attack
from lesson_support.sandbox_attacks.judging import Outcome, run_command
from lesson_support.sandbox_attacks.scene import Scene, open_scene
from lesson_support.sandbox_attacks.tools import HardenedFactory, NaiveFactory
from lesson_support.sandbox_attacks.workers import map_in_workers


def run_attack(make_tool, attack: Attack) -> Outcome:
    return run_command(make_tool, attack.command, setup=attack.setup)


def _sendable(make_tool) -> bool:
    """Whether the factory can go to a worker: the harness's own factories, without functions
    passed in (a lab's student functions live in the kernel, which a worker cannot import)."""
    if isinstance(make_tool, NaiveFactory):
        return True
    return isinstance(make_tool, HardenedFactory) and not make_tool.options


def run_attacks(make_tool, attacks=ATTACKS) -> dict[str, Outcome]:
    """Outcome of each attack, by name, each in its own fresh scene: in the worker processes
    when `make_tool` can be sent there, one after another in this process otherwise."""
    attacks = list(attacks)
    if len(attacks) < 2 or not _sendable(make_tool):
        return {attack.name: run_attack(make_tool, attack) for attack in attacks}
    outcomes = map_in_workers(run_attack, [(make_tool, attack) for attack in attacks])
    return {attack.name: outcome for attack, outcome in zip(attacks, outcomes)}


@dataclass(frozen=True)
class LegitOutcome:
    command: str
    works: bool
    reply: str
    expected: str


def reference_output(scene: Scene, command: str) -> str:
    """What a plain shell prints for `command` in the scene's workspace (same locale)."""
    done = subprocess.run(["/bin/sh", "-c", scene.expand(command)], cwd=scene.workspace,
                          env=minimal_env(scene.workspace), capture_output=True, timeout=10,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0 or done.stderr:
        raise ValueError(f"the legitimate command {command!r} fails even in a plain shell: "
                         f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8", "replace")


def check_legit(scene: Scene, tool, command: str) -> LegitOutcome:
    """A command works when the tool's reply is exactly what a plain shell prints for it."""
    expected = reference_output(scene, command)
    try:
        reply = tool.run(scene.expand(command))
    except Exception as exc:
        reply = f"[the tool raised {type(exc).__name__}: {exc}]"
    return LegitOutcome(command, reply == expected, scene.mask(reply), scene.mask(expected))


def run_legits(make_tool, commands=LEGIT_COMMANDS) -> dict[str, LegitOutcome]:
    """Each legitimate command with a fresh tool; they only read, so they share one scene."""
    with open_scene() as scene:
        return {legit.name: check_legit(scene, make_tool(scene.workspace, scene.env),
                                        legit.command)
                for legit in commands}

