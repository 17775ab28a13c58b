"""Run a lesson top to bottom with COURSE_MODEL=local and record what the local model did.

Outputs are not compared (the stored ones are the teaching model's). What counts: every cell
runs, and no figure is printed under the local model's label, "SmolLM2-135M-Instruct.Q4_1 (local
model)" (course.llm.measuring.provider_label), by a cell during which the local model received
no request (tests/providers/conformance.py's `mislabelled_cells`, fed with the
times the kernel's local engine was asked). The times are recorded by a cell put before the
lesson's first, in the copy that runs, which wraps the engine's request entry point and
appends each time to a file (read even when a cell fails).

    python -m tests.local_model.lessons [--save DIR] [NOTEBOOK...]
                            one line per lesson (all by default); --save keeps the executed copies
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from course.llm.measuring import LOCAL_SUFFIX
from course.paths import REPO_ROOT
from tests.providers.conformance import CELL_TIMEOUT_S, _when, mislabelled_cells

MODEL = "SmolLM2-135M-Instruct.Q4_1"
# What a figure of this run's local model is printed under. A measurement stored with its
# provenance ("Measured <date> with SmolLM2-135M-Instruct.Q4_1.gguf on <machine>", lesson 13 from
# chapter 16's data) names the model's file, not this label: it claims no request of this run.
LABEL = f"{MODEL} {LOCAL_SUFFIX}"
RECORD = """\
import datetime as _dt, course.local_model.engine as _engine
def _recorded(self, body, _arguments=_engine.Engine._arguments):
    with open({log!r}, "a") as _log:
        _log.write(_dt.datetime.now(_dt.timezone.utc).isoformat() + "\\n")
    return _arguments(self, body)
_engine.Engine._arguments = _recorded
"""


@dataclass
class LocalRun:
    lesson: str
    ran: bool
    failing_cell: int | None   # index in the lesson's own cells
    error: str
    requests: int              # chat requests the local model answered
    mislabelled: list[int]     # lesson cells with a figure under its name but no request
    seconds: float


def run_lesson(path: Path, save_to: Path | None = None) -> LocalRun:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    log = Path(tempfile.mkdtemp()) / "requests.txt"
    log.touch()
    nb.cells.insert(0, nbformat.v4.new_code_cell(RECORD.format(log=str(log))))
    failed: dict = {}
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            on_cell_error=lambda cell, cell_index, execute_reply:
                            failed.setdefault("index", cell_index))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_LLM_")}
    env["COURSE_MODEL"] = "local"
    start, error = time.monotonic(), ""
    try:
        client.execute(env=env)
    except CellExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue.strip().splitlines()[0] if exc.evalue.strip() else ''}"
    except Exception as exc:  # a timeout or a dead kernel fails this lesson, not the run
        error = f"{type(exc).__name__}: {exc}"
    seconds = round(time.monotonic() - start, 1)
    if save_to is not None:  # to read what each cell printed on the local model
        save_to.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, save_to / f"{path.stem}.local.ipynb")
    times = [_when(line) for line in log.read_text().split()]
    wrong = mislabelled_cells(nb, LABEL, times)
    index = failed.get("index")
    return LocalRun(path.stem, not error, None if index is None else index - 1, error,
                    len(times), [i - 1 for i in wrong if i > 0], seconds)


def main(argv: list[str]) -> int:
    save_to = None
    if argv[:1] == ["--save"]:
        save_to, argv = Path(argv[1]), argv[2:]
    paths = [Path(a) for a in argv] or sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    bad = 0
    for path in paths:
        run = run_lesson(path, save_to)
        bad += not run.ran or bool(run.mislabelled)
        verdict = "ran" if run.ran else f"cell {run.failing_cell}: {run.error}"
        print(f"{run.lesson}: {verdict}; {run.requests} requests to the local model; "
              f"mislabelled cells {run.mislabelled}; {run.seconds} s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
