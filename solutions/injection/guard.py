"""Execution-level defences: least privilege and a confirmation gate, enforced in code.

Context-level defences make an injected instruction less likely to be followed; they cannot
make it impossible. What the harness refuses to *execute* is a real boundary. Two rules:

    least privilege   a task is offered (and may run) only the tools it needs
    confirmation      an irreversible tool (send, write, delete, post) runs only after a person
                      said yes to this exact call; with nobody to ask, it does not run

`guard_call` decides one call; `offered_tools` filters the tool list sent to the model.
"""
from __future__ import annotations

import json
from typing import Mapping

from course.givens.injection import Guarded, ToolPolicy  # re-exported

IRREVERSIBLE = frozenset({"send_email", "write_file", "delete_file", "http_post"})


def call_parts(call) -> tuple[str, dict]:
    """(name, arguments dict) of a call given as {"name", "arguments"} or in the Chat
    Completions shape {"function": {"name", "arguments"}}; arguments as a dict or JSON text."""
    if not isinstance(call, Mapping):
        raise TypeError(f"a call is a mapping, not {type(call).__name__}")
    inner = call.get("function") if isinstance(call.get("function"), Mapping) else call
    name, arguments = inner.get("name"), inner.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            arguments = None
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        raise ValueError("a call needs a string name and arguments that are a JSON object")
    return name, dict(arguments)


def guard_call(call, policy: ToolPolicy) -> Guarded:
    """Whether `call` may run under `policy`, and why (fails closed on anything odd)."""
    try:
        name, arguments = call_parts(call)
    except (TypeError, ValueError) as exc:
        return Guarded(False, f"refused: malformed call ({exc})")
    if policy.allowed is not None and name not in policy.allowed:
        return Guarded(False, f"refused: {name} is not one of the tools this task needs "
                              f"({', '.join(sorted(policy.allowed)) or 'none'})")
    if name not in policy.irreversible:
        return Guarded(True, f"allowed: {name}")
    if policy.confirm is None:
        return Guarded(False, f"refused: {name} is irreversible and there is nobody to confirm it")
    try:
        said_yes = policy.confirm(name, arguments) is True
    except Exception as exc:  # a broken confirmation is a "no"
        return Guarded(False, f"refused: the confirmation of {name} failed ({type(exc).__name__})",
                       asked=True)
    if said_yes:
        return Guarded(True, f"allowed: {name}, confirmed by the user", asked=True)
    return Guarded(False, f"refused: the user declined {name}", asked=True)


def offered_tools(tools: list[dict], needed) -> list[dict]:
    """The tool definitions whose names are in `needed`, in their original order."""
    wanted = set(needed)
    return [t for t in tools if t.get("function", {}).get("name") in wanted]
