"""Run lessons top to bottom against a provider-shaped proxy and record how far each gets.

Lessons run in a fresh kernel and must not raise; labs run with the reference solution injected
(course.labs.run_solved) and every check must pass. Outputs are not compared (a provider answers differently from the teaching model); what counts
is whether every cell runs, and which cell fails first if one does. `requests` is how many chat
requests reached the proxy: a lesson that measures a model but sends it nothing has measured
the teaching model instead.

A figure labelled as the provider's must come from the provider: every output line that names
the provider's model and holds a number must be printed by a cell during which the proxy
received a request (`mislabelled_cells`). A cell that prints the provider's name beside a
figure the teaching model produced (serve() only) is reported there.
"""
from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from course.paths import REPO_ROOT
from tests.providers.proxy import ProviderProxy

NOTEBOOKS = REPO_ROOT / "notebooks"
LABS = REPO_ROOT / "labs"
CELL_TIMEOUT_S = 600  # the same per-cell limit nbval uses (pyproject.toml), not a test of speed


@dataclass
class LessonRun:
    lesson: str
    shape: str
    ran: bool
    failing_cell: int | None  # index in nb.cells of the first cell that raised (or check failed)
    error: str  # "ErrorName: first line of the message", "" when it ran
    requests: int  # chat requests the proxy received while the lesson ran
    seconds: float = 0.0  # how long it took (JSON only: it depends on the machine)
    # cells that print a figure beside the provider's model name but sent the provider nothing
    mislabelled: list[int] = field(default_factory=list)

    def verdict(self) -> str:
        wrong = (f"; provider-labelled figures from cells that sent it nothing: {self.mislabelled}"
                 if self.mislabelled else "")
        if self.ran:
            return f"ran ({self.requests} req){wrong}"
        return f"cell {self.failing_cell}: {self.error}{wrong}"

    def as_dict(self) -> dict:
        return asdict(self)


def lessons() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def labs() -> list[Path]:
    return sorted(LABS.glob("[0-9][0-9]_*_lab.ipynb"))


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    """os.environ with `values` set, for a kernel started inside (it inherits the environment)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_lab(path: Path, proxy: ProviderProxy) -> LessonRun:
    """Run a lab with its reference solution injected; the first cell or check that fails."""
    from course.labs import load_lab, run_solved

    before, start = proxy.requests, time.monotonic()
    with _environment(proxy.environment()):
        outcome = run_solved(load_lab(path), timeout=CELL_TIMEOUT_S)
    seconds = round(time.monotonic() - start, 1)
    failed = next((r for r in outcome.results if r.status != "passed" and r.kind != "tally"), None)
    if failed is None:
        return LessonRun(path.stem, proxy.shape, True, None, "", proxy.requests - before, seconds)
    what = f"check {failed.key!r} {failed.status}" if failed.kind == "check" else failed.status
    return LessonRun(path.stem, proxy.shape, False, failed.index,
                     f"{what}: {_first_line(failed.error)}", proxy.requests - before, seconds)


def _first_line(text: str, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def run_lesson(path: Path, proxy: ProviderProxy, save_to: Path | None = None) -> LessonRun:
    """Execute one lesson in a fresh kernel whose COURSE_LLM_* variables point at `proxy`.

    With `save_to` (a folder), the executed notebook is written there as LESSON.SHAPE.ipynb, to
    read what a cell printed under that shape.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    failed: dict = {}

    def on_error(cell, cell_index, execute_reply):
        failed.setdefault("index", cell_index)

    before = proxy.requests
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            on_cell_error=on_error)
    env = {**os.environ, **proxy.environment()}
    start = time.monotonic()
    try:
        result = _run(client, env, path, proxy, failed, before)
        result.seconds = round(time.monotonic() - start, 1)
        result.mislabelled = mislabelled_cells(nb, proxy.environment()["COURSE_LLM_MODEL"],
                                               proxy.request_times)
        return result
    finally:
        if save_to is not None:
            save_to.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, save_to / f"{path.stem}.{proxy.shape}.ipynb")


def _run(client, env, path, proxy, failed, before) -> LessonRun:
    from nbclient.exceptions import CellExecutionError

    try:
        client.execute(env=env)
    except CellExecutionError as exc:
        return LessonRun(path.stem, proxy.shape, False, failed.get("index"),
                         f"{exc.ename}: {_first_line(exc.evalue)}", proxy.requests - before)
    except Exception as exc:  # a timeout or a dead kernel is a failure of this lesson, not the run
        return LessonRun(path.stem, proxy.shape, False, failed.get("index"),
                         f"{type(exc).__name__}: {_first_line(str(exc))}",
                         proxy.requests - before)
    return LessonRun(path.stem, proxy.shape, True, None, "", proxy.requests - before)


def _output_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def mislabelled_cells(nb, model: str, request_times: list[datetime]) -> list[int]:
    """Indexes of executed cells with an output line naming `model` and a number, during whose
    execution no request reached the provider: their "provider" figures came from elsewhere."""
    wrong = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        labelled = [line for line in _output_text(cell).splitlines()
                    if model in line and re.search(r"\d", line.replace(model, ""))]
        timing = cell.get("metadata", {}).get("execution", {})
        began, ended = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if not labelled or not began or not ended:
            continue
        began, ended = _when(began), _when(ended)
        if not any(began <= t <= ended for t in request_times):
            wrong.append(index)
    return wrong
