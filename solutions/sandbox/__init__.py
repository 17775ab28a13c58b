"""Chapter 07: hardening a terminal tool in layers (the answers).

The naive tool the lesson breaks is a specimen (`lesson_support.specimens.naive_terminal`);
the attack harness is lesson support (`lesson_support.sandbox_attacks`).

    parse      layer 1: argv without a shell          parse_command
    arguments  layer 2: option rules, paths inside    check_arguments, resolve_inside
    links      layer 2: no hard link to the outside    outside_links, refuse_outside_links
    hygiene    layer 3: env, stdin, group, cap, rlimits   run_with_hygiene
    confine    layer 4: bubblewrap                    bubblewrap_argv, bubblewrap_problem
    hardened   the tool composing the layers          HardenedTerminalTool

They build on lab 07's givens, re-exported here (`course.givens.sandbox`, which holds no
answer): Refusal, the argument RULES with check_awk_program, and ResourceLimits.
"""
from course.givens.sandbox import RULES, Refusal, ResourceLimits, check_awk_program
from solutions.sandbox.arguments import check_arguments, resolve_inside
from solutions.sandbox.confine import ConfinementUnavailable, bubblewrap_argv, bubblewrap_problem
from solutions.sandbox.hardened import LAYERS, HardenedTerminalTool
from solutions.sandbox.hygiene import minimal_env, run_plain, run_with_hygiene
from solutions.sandbox.links import outside_links, refuse_outside_links
from solutions.sandbox.parse import parse_command
from solutions.sandbox.self_test import self_test

__all__ = [
    "ConfinementUnavailable", "HardenedTerminalTool", "LAYERS", "RULES", "Refusal",
    "ResourceLimits", "bubblewrap_argv", "bubblewrap_problem", "check_arguments",
    "check_awk_program", "minimal_env", "outside_links", "parse_command", "refuse_outside_links",
    "resolve_inside", "run_plain", "run_with_hygiene", "self_test",
]
