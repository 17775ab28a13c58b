"""Chapter 07: hardening a terminal tool in layers (the answers).

The naive tool the lesson breaks is a specimen (`lesson_support.specimens.naive_terminal`);
the attack harness is lesson support (`lesson_support.redteam`).

    parse      layer 1: argv without a shell          parse_command
    arguments  layer 2: option rules, paths inside    check_arguments, resolve_inside
    links      layer 2: no hard link to the outside    outside_links, refuse_outside_links
    hygiene    layer 3: env, stdin, group, cap, rlimits   run_with_hygiene
    confine    layer 4: bubblewrap                    bubblewrap_argv, bubblewrap_problem
    hardened   the tool composing the layers          HardenedTerminalTool
"""
from solutions.sandbox.arguments import (RULES, CommandRule, check_arguments, check_awk_program,
                                         check_find, resolve_inside)
from solutions.sandbox.confine import (ConfinementUnavailable, bubblewrap_argv,
                                       bubblewrap_problem)
from solutions.sandbox.hardened import LAYERS, CommandResult, HardenedTerminalTool
from solutions.sandbox.hygiene import (ResourceLimits, RunResult, minimal_env, run_plain,
                                       run_with_hygiene)
from solutions.sandbox.links import outside_links, refuse_outside_links
from solutions.sandbox.parse import parse_command
from solutions.sandbox.refusal import Refusal
from solutions.sandbox.self_test import self_test
