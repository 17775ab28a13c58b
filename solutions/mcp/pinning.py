"""Tool definitions pinned by hash: a server that changes a tool after it was approved (a "rug
pull") is caught before the model sees the new definition.

What is hashed (`course.givens.mcp.definition_hash`) is everything a model reads or a client acts
on: name, title, description, input and output schema, annotations, as canonical JSON. `_meta`
and other fields a server may stamp on every listing are left out.
"""
from __future__ import annotations

from course.givens.mcp import pin_definitions


def check_pins(pins: dict[str, str], listings: dict[str, list[dict]]) -> dict[str, list[str]]:
    """What differs from the approved pins, each list sorted:
        changed  a pinned tool whose definition now hashes differently (re-approve before use)
        added    a tool listed now that was never approved
        removed  an approved tool no longer listed
    All three empty: the servers list exactly what was approved."""
    now = pin_definitions(listings)
    return {"changed": sorted(n for n in now if n in pins and now[n] != pins[n]),
            "added": sorted(n for n in now if n not in pins),
            "removed": sorted(n for n in pins if n not in now)}
