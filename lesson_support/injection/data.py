"""The attack table of Chapter 10 as data: data/injection/attacks.json (the domain, the system
prompt and its policy, the files of the workspace, and the rows: attacks and legitimate tasks)
and data/injection/tools.json (the tools the agent is offered).
"""
from __future__ import annotations

import json
from functools import lru_cache

from course.paths import DATA_DIR

TABLE_FILE = DATA_DIR / "injection" / "attacks.json"
TOOLS_FILE = DATA_DIR / "injection" / "tools.json"


@lru_cache(maxsize=1)
def _table() -> dict:
    return json.loads(TABLE_FILE.read_text(encoding="utf-8"))


def load_table() -> dict:
    """The whole data file (a fresh copy): domain, system prompt, policy, files, rows."""
    return json.loads(json.dumps(_table()))


def load_rows(kind: str | None = None) -> list[dict]:
    """The table's rows ("attack", "task" or both)."""
    return [r for r in load_table()["rows"] if kind is None or r["kind"] == kind]


def row_named(name: str) -> dict:
    for row in load_rows():
        if row["name"] == name:
            return row
    raise KeyError(f"no row named {name!r}")


def load_tools() -> list[dict]:
    return json.loads(TOOLS_FILE.read_text(encoding="utf-8"))


TABLE = _table()
DOMAIN, SYSTEM_PROMPT, POLICY = TABLE["domain"], TABLE["system_prompt"], TABLE["policy"]
