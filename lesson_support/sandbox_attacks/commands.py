"""The commands the harness runs, as data: the attack table (data/sandbox/attacks.json) and the
legitimate commands that must keep working (data/sandbox/legit_commands.json), each row
checked when loaded: ATTACKS, ATTACKS_BY_NAME, LEGIT_COMMANDS.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from course.paths import DATA_DIR
from solutions.sandbox.hardened import LAYERS
from lesson_support.sandbox_attacks.judging import CANARIES
from lesson_support.sandbox_attacks.scene import SETUPS

ATTACKS_FILE = DATA_DIR / "sandbox" / "attacks.json"
LEGIT_FILE = DATA_DIR / "sandbox" / "legit_commands.json"
NEEDS = ("bash", "gawk")


@dataclass(frozen=True)
class Attack:
    """One bypass. `breaches`: what it does to the naive tool (where `needs` is met).
    `stopped_by`: the layers that block it each on their own ('arguments' runs with 'parse').
    `needs`: 'bash' (bash-only syntax; dash, Debian's /bin/sh, rejects it) or 'gawk' (gawk-only
    syntax; mawk, Debian's default awk, rejects it). `setup`: a change made to the scene first."""
    name: str
    category: str
    command: str
    goal: str
    breaches: frozenset
    stopped_by: frozenset
    needs: str | None = None
    setup: str | None = None

    @property
    def needs_bash(self) -> bool:
        return self.needs == "bash"


@dataclass(frozen=True)
class Legit:
    name: str
    command: str
    purpose: str


def _rows(path: Path, key: str) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data[key]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: cannot read the table under {key!r}: {exc}") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError(f"{path}: {key!r} must be a list of objects")
    return rows


def _checked(path: Path, number: int, row: dict, required: set, optional: set = frozenset()):
    where = f"{path.name}, row {number} ({row.get('name', 'no name')})"
    missing, unknown = required - set(row), set(row) - required - set(optional)
    if missing or unknown:
        raise ValueError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")
    for name in required | (set(optional) & set(row)):
        if name in ("breaches", "stopped_by"):
            if not isinstance(row[name], list) or not all(isinstance(x, str) for x in row[name]):
                raise ValueError(f"{where}: {name} must be a list of names")
        elif not isinstance(row[name], str) or not row[name]:
            raise ValueError(f"{where}: {name} must be non-empty text")
    return where


def load_attacks(path: Path = ATTACKS_FILE) -> tuple[Attack, ...]:
    """The attack table, every row checked: known canaries, layers, needs and setups."""
    attacks = []
    for number, row in enumerate(_rows(path, "attacks"), 1):
        where = _checked(path, number, row, {"name", "category", "command", "goal", "breaches",
                                              "stopped_by"}, {"needs", "setup"})
        for name, allowed in (("breaches", CANARIES), ("stopped_by", LAYERS)):
            wrong = sorted(set(row[name]) - set(allowed))
            if wrong:
                raise ValueError(f"{where}: {name} {wrong} are not among {list(allowed)}")
        if row.get("needs") not in (None, *NEEDS):
            raise ValueError(f"{where}: needs must be one of {list(NEEDS)}")
        if row.get("setup") not in (None, *SETUPS):
            raise ValueError(f"{where}: setup must be one of {sorted(SETUPS)}")
        attacks.append(Attack(row["name"], row["category"], row["command"], row["goal"],
                              frozenset(row["breaches"]), frozenset(row["stopped_by"]),
                              row.get("needs"), row.get("setup")))
    names = [a.name for a in attacks]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: attack names must be unique")
    return tuple(attacks)


def load_legit_commands(path: Path = LEGIT_FILE) -> tuple[Legit, ...]:
    commands = []
    for number, row in enumerate(_rows(path, "commands"), 1):
        _checked(path, number, row, {"name", "command", "purpose"})
        commands.append(Legit(row["name"], row["command"], row["purpose"]))
    return tuple(commands)


ATTACKS = load_attacks()
ATTACKS_BY_NAME = {attack.name: attack for attack in ATTACKS}
LEGIT_COMMANDS = load_legit_commands()
