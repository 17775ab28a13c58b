"""A tool list that only grows at its end.

The `tools` a request carries are part of its prefix: the provider caches the tokens of the
list as sent. Appending a tool keeps every earlier tool's bytes where they were, so the cached
prefix reaches as far as the old list did; reordering, removing or editing a tool changes bytes
at that tool's position, and the cache misses from there on. `add_tools` is the append-once rule
as code: a tool already in the list is neither moved nor changed.
"""
from __future__ import annotations

import json


def tool_name(tool) -> str:
    """The name of a Chat Completions tool entry, or ValueError if it has none."""
    try:
        name = tool["function"]["name"]
    except (KeyError, TypeError):
        raise ValueError(f"not a tool definition (no function.name): {str(tool)[:80]}") from None
    if not isinstance(name, str) or not name:
        raise ValueError(f"a tool's name must be a non-empty string, not {name!r}")
    return name


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def add_tools(current, new) -> list:
    """`current` followed by the tools of `new` not already in it, as a new list.

    Never reorders, drops or edits a tool of `current` (so the old list is a prefix of the
    result, byte for byte). A tool of `new` already present with the same definition is
    skipped; one whose name is present with a *different* definition is an error (changing a
    loaded tool would break the cache and make the model's earlier calls mean something else).
    Neither input is modified.
    """
    result = list(current)
    index = {}
    for tool in result:
        name = tool_name(tool)
        if name in index:
            raise ValueError(f"the current list already has two tools named {name!r}")
        index[name] = tool
    for tool in new:
        name = tool_name(tool)
        if name in index:
            if not _same(index[name], tool):
                raise ValueError(f"tool {name!r} is already loaded with a different definition: "
                                 f"a loaded tool is never changed (it would break the cache)")
            continue
        index[name] = tool
        result.append(tool)
    return result
