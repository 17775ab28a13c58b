"""The red-team harness of Chapter 07 (the terminal sandbox): attacks on a terminal tool, judged
by canaries, and the commands that must keep working.

Every command runs in a fresh scene (a workspace, a secret outside it, an outbox that must stay
empty, a fake API key, a listening socket), through a fresh naive or hardened tool, and is
judged by what actually happened, not by what the tool answered. Each canary is one thing that
must not happen (CANARIES). The attacks and the legitimate commands are data, under
data/sandbox/.

The package, one concern per module (this module re-exports all of them):

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
from lesson_support.redteam.commands import (ATTACKS, ATTACKS_BY_NAME, ATTACKS_FILE, LEGIT_COMMANDS,
                                             LEGIT_FILE, NEEDS, Attack, Legit, load_attacks,
                                             load_legit_commands)
from lesson_support.redteam.judging import (CANARIES, MEMORY_BUDGET_BYTES, Outcome, judge,
                                            run_command)
from lesson_support.redteam.machine import (confinement_problem, depends_on_machine,
                                            expected_blocked, has, system_awk, system_shell)
from lesson_support.redteam.processes import (SURVIVOR_GRACE_SECONDS, become_subreaper,
                                              child_processes, collect_survivors,
                                              watched_processes)
from lesson_support.redteam.runs import (LegitOutcome, check_legit, reference_output, run_attack,
                                         run_attacks, run_legits)
from lesson_support.redteam.scene import (API_KEY, PROTECTED_TEXT, SAMPLE_WORKSPACE, SECRET_TOKEN,
                                          SETUPS, Scene, hardlink_secret_file, link_home_dir,
                                          link_secret_file, open_scene, scenes_dir)
from lesson_support.redteam.tables import (ALONE, CONFIGURATIONS, CUMULATIVE, blocked_everywhere,
                                           cell, count_blocked, format_table, table_cell)
from lesson_support.redteam.tools import (OUTPUT_CAP_BYTES, TOOL_TIMEOUT, HardenedFactory,
                                          NaiveFactory, hardened_tool, naive_tool, tool_for)
from lesson_support.redteam.workers import WORKERS, WorkerDied, map_in_workers, stop_workers

__all__ = [
    "ALONE", "API_KEY", "HardenedFactory", "NaiveFactory", "WORKERS", "WorkerDied",
    "map_in_workers", "stop_workers", "ATTACKS", "ATTACKS_BY_NAME", "ATTACKS_FILE", "Attack", "CANARIES",
    "CONFIGURATIONS", "CUMULATIVE", "LAYERS", "LEGIT_COMMANDS", "LEGIT_FILE", "Legit",
    "LegitOutcome", "MEMORY_BUDGET_BYTES", "NEEDS", "OUTPUT_CAP_BYTES", "Outcome",
    "PROTECTED_TEXT", "SAMPLE_WORKSPACE", "SECRET_TOKEN", "SETUPS", "SURVIVOR_GRACE_SECONDS",
    "Scene", "TOOL_TIMEOUT", "become_subreaper", "blocked_everywhere", "cell", "check_legit",
    "child_processes", "collect_survivors", "confinement_problem", "count_blocked",
    "depends_on_machine",
    "expected_blocked", "format_table", "hardened_tool", "hardlink_secret_file", "has", "judge",
    "link_home_dir", "link_secret_file", "load_attacks", "load_legit_commands", "naive_tool",
    "open_scene", "reference_output", "run_attack", "run_attacks", "run_command", "run_legits",
    "scenes_dir", "system_awk", "system_shell", "table_cell", "tool_for", "watched_processes",
]
