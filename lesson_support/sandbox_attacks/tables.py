"""Tables for the lesson: the tool configurations compared, and the attack table printed so
that it reads the same on every machine.

A cell whose outcome depends on the machine (the attack needs bash or gawk, and no layer
stops it) is printed as what the attack does where the program is present, marked *, once this
machine's outcome is checked against what it should do here (see `machine`).
"""
from __future__ import annotations

from solutions.sandbox.hardened import LAYERS
from lesson_support.sandbox_attacks.commands import ATTACKS, ATTACKS_BY_NAME, Attack
from lesson_support.sandbox_attacks.judging import CANARIES, Outcome
from lesson_support.sandbox_attacks.machine import depends_on_machine, has
from course.tables import text_table

CUMULATIVE = {  # column title -> layers switched on (() is the naive tool)
    "naive": (),
    "+parse": ("parse",),
    "+arguments": ("parse", "arguments"),
    "+hygiene": ("parse", "arguments", "hygiene"),
    "+confine": LAYERS,
}
ALONE = {"parse": ("parse",), "parse+arguments": ("parse", "arguments"), "hygiene": ("hygiene",),
         "confine": ("confine",)}
CONFIGURATIONS = {**CUMULATIVE, "hygiene alone": ("hygiene",), "confine alone": ("confine",)}


def cell(outcome: Outcome) -> str:
    return "blocked" if outcome.blocked else ",".join(outcome.breaches)


def table_cell(attack: Attack, outcome: Outcome, layers) -> str:
    """A cell that reads the same on every machine. Where the outcome depends on the machine
    (the attack needs bash or gawk and no layer stops it), it shows what the attack does where
    the program is present, marked *, once this machine's outcome is checked against what it
    should be here (blocked where the program is missing). Anything else is shown as UNEXPECTED."""
    if not depends_on_machine(attack, layers):
        return cell(outcome)
    declared = ",".join(name for name in CANARIES if name in attack.breaches) + "*"
    if has(attack.needs):
        fine = set(outcome.breaches) == attack.breaches
    else:
        fine = outcome.blocked
    return declared if fine else f"UNEXPECTED:{cell(outcome)}"


def blocked_everywhere(attack: Attack, outcome: Outcome, layers) -> bool:
    """Blocked here, and not only because this machine lacks what the attack needs."""
    return outcome.blocked and not depends_on_machine(attack, layers)


def count_blocked(outcomes: dict[str, Outcome], layers) -> int:
    """Attacks of a column blocked on every machine (a cell marked * is not: it breaches where
    the program it needs is present)."""
    return sum(blocked_everywhere(ATTACKS_BY_NAME[name], outcome, layers)
               for name, outcome in outcomes.items())


def format_table(columns: dict[str, dict[str, Outcome]], attacks=ATTACKS, layers=None) -> str:
    """A plain-text table: one row per attack, one column per tool; cells name the breaches,
    and the last row counts the attacks each column blocks (all of the column's, not only the
    rows shown). `layers` maps each column title to its layers (default: CONFIGURATIONS)."""
    layers = {**CONFIGURATIONS, **(layers or {})}
    titles = list(columns)
    rows = []
    for attack in attacks:
        name = attack.name + (f" ({attack.needs})" if attack.needs else "")
        rows.append([name, attack.category,
                     *(table_cell(attack, columns[t][attack.name], layers[t]) for t in titles)])
    rows.append(["blocked", "", *(f"{count_blocked(columns[t], layers[t])}/{len(columns[t])}"
                                  for t in titles)])
    lines = [text_table(["attack", "category", *titles], rows, "<" * (2 + len(titles)), sep="  ", strip=True)]
    if any(depends_on_machine(a, layers[t]) for a in attacks for t in titles):
        lines.append("* where /bin/sh is bash (bash) or awk is gawk (gawk); blocked elsewhere, "
                     "because the shell or awk rejects the syntax")
    return "\n".join(lines)
