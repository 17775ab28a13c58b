"""The red-team harness of Chapter 07 (the terminal sandbox): attacks on a terminal tool, judged
by canaries, and the commands that must keep working.

Every command runs in a fresh scene (a workspace, a secret outside it, an outbox that must stay
empty, a fake API key, a listening socket), through a fresh naive or hardened tool, and is
judged by what actually happened, not by what the tool answered. Each canary is one thing that
must not happen (CANARIES). The attacks and the legitimate commands are data, under
data/sandbox/.

The package, one concern per module (this module re-exports what is used through it):

    scene      the temporary scene a command runs in, its placeholders and setups
    processes  the child subreaper: processes that outlive a call, found and killed
    tools      factories for the naive and the hardened tool (tool_for)
    judging    the canaries, Outcome, judge and run_command
    commands   the attack table and the legitimate commands, loaded and checked
    machine    whether this machine has what an attack needs (bash, gawk), and what follows
    runs       run_attacks, and run_legits against what a plain shell prints
    workers    the worker processes that judge a table's attacks side by side
    tables     the configurations compared, and format_table, the same on every machine
"""
from __future__ import annotations

from solutions.sandbox.hardened import LAYERS
from lesson_support.sandbox_attacks.commands import (ATTACKS, ATTACKS_BY_NAME, ATTACKS_FILE,
                                             LEGIT_COMMANDS, LEGIT_FILE, Attack, load_attacks)
from lesson_support.sandbox_attacks.judging import CANARIES, Outcome, judge, run_command
from lesson_support.sandbox_attacks.machine import (confinement_problem, expected_blocked, has, system_awk,
                                            system_shell)
from lesson_support.sandbox_attacks.processes import become_subreaper, child_processes, collect_survivors
from lesson_support.sandbox_attacks.runs import (check_legit, reference_output, run_attack, run_attacks,
                                         run_legits)
from lesson_support.sandbox_attacks.scene import PROTECTED_TEXT, SAMPLE_WORKSPACE, open_scene
from lesson_support.sandbox_attacks.tables import (ALONE, CONFIGURATIONS, CUMULATIVE, blocked_everywhere,
                                           cell, count_blocked, format_table)
from lesson_support.sandbox_attacks.tools import TOOL_TIMEOUT, hardened_tool, naive_tool, tool_for
from lesson_support.sandbox_attacks.workers import WORKERS, WorkerDied, map_in_workers

__all__ = [
    "ALONE", "ATTACKS", "ATTACKS_BY_NAME", "ATTACKS_FILE", "Attack", "CANARIES", "CONFIGURATIONS",
    "CUMULATIVE", "LAYERS", "LEGIT_COMMANDS", "LEGIT_FILE", "Outcome", "PROTECTED_TEXT",
    "SAMPLE_WORKSPACE", "TOOL_TIMEOUT", "WORKERS", "WorkerDied", "become_subreaper",
    "blocked_everywhere", "cell", "check_legit", "child_processes", "collect_survivors",
    "confinement_problem", "count_blocked", "expected_blocked", "format_table", "hardened_tool",
    "has", "judge", "load_attacks", "map_in_workers", "naive_tool", "open_scene",
    "reference_output", "run_attack", "run_attacks", "run_command", "run_legits", "system_awk",
    "system_shell", "tool_for",
]
