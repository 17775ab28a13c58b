"""The worker: the process, confined when grading, that runs a student's exercise cells and
answers the judge's calls to what they defined (`python -m course.labs.worker`).

It speaks `course.labs.wire` on its standard input and output, which it keeps for itself: the
student's code prints into nothing (descriptors 1 and 2 go to /dev/null), so no print can be
taken for a message. The first message it reads is the program:

    {"program": {"cells": [{"kind": "setup" | "exercise", "key": ..., "source": ...}, ...]}}

It runs the cells in order in one namespace (the lab's set-up cells, then each exercise where the
lab has it), under IPython's cell syntax (magics work; the `get_ipython()` of a plain shell), each
exercise compiled as `<exercise KEY>` so an exception names the student's line. It answers

    {"ready": true, "cells": [{"kind", "key", "error": null | {"type", "message", "where"}}]}

then serves requests until its input closes. Nothing it sends is trusted by the judge beyond
being data (see `course.labs.wire`).
"""
from __future__ import annotations

import linecache
import os
import sys

from course.labs.wire import EXERCISE_FILE, Endpoint, LineReader, WireError


def _private_channel():
    """The protocol's pipes, moved off descriptors 0-2 (which the student's code may use)."""
    reader = LineReader(os.dup(0))
    writer = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return reader, writer


def run_cells(cells: list[dict], namespace: dict, endpoint: Endpoint) -> list[dict]:
    """Run the program's cells in `namespace`; each one's outcome (an error stops only its cell)."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns = namespace
    namespace.setdefault("__name__", "__main__")
    reports = []
    for index, cell in enumerate(cells):
        kind, key, source = cell.get("kind"), cell.get("key"), str(cell.get("source", ""))
        filename = f"{EXERCISE_FILE}{key}>" if kind == "exercise" else f"<set-up cell {index}>"
        error = None
        try:
            code = shell.transform_cell(source)
            linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
            exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - this process is the sandbox
        except BaseException as exc:  # noqa: BLE001 - the student's cell failed: report it, go on
            error = endpoint.describe(exc)
        reports.append({"kind": kind, "key": key, "error": error})
    return reports


def main() -> int:
    reader, writer = _private_channel()
    endpoint = Endpoint(reader, writer, namespace={})
    try:
        first = endpoint.receive()
        program = first.get("program")
        if not isinstance(program, dict) or not isinstance(program.get("cells"), list):
            raise WireError("the first message must be the program")
        reports = run_cells(program["cells"], endpoint.namespace, endpoint)
        endpoint.send({"ready": True, "cells": reports})
        endpoint.serve_forever()
    except WireError:
        return 0  # the judge closed the pipe (or broke the protocol): nothing left to do
    return 0


if __name__ == "__main__":
    sys.exit(main())
