"""Chapter 10: prompt injection and context provenance (reference solutions).

    fence.py   fence(content, source): source tagging that no content can close early
    roles.py   separate_roles(messages): untrusted text out of privileged roles, pairs intact
    guard.py   guard_call(call, policy): least privilege and a confirmation gate, in code
    table.py   run_attack_table(agent, attacks, defences): verdicts from canaries only

The lab's exercises are `fence`, `separate_roles`, `guard_call` and `run_attack_table`.
"""
from solutions.injection.fence import CLOSE, FENCED, fence, neutralise, unfence
from solutions.injection.guard import IRREVERSIBLE, ToolPolicy, guard_call, offered_tools
from solutions.injection.roles import EXTERNAL_TOOL, separate_roles
from solutions.injection.table import Effects, Verdict, judge, run_attack_table, tally
from solutions.injection.self_test import self_test

__all__ = [
    "CLOSE", "EXTERNAL_TOOL", "Effects", "FENCED", "IRREVERSIBLE", "ToolPolicy", "Verdict", "fence",
    "guard_call", "judge", "neutralise", "offered_tools", "run_attack_table", "self_test",
    "separate_roles", "tally", "unfence",
]
