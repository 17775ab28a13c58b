"""What each lesson sends to a provider: requests and tokens, measured, for lesson 00's table.

    python benchmarks/measure_provider_load.py [notebooks/NN_x.ipynb ...] [--output FILE]

Runs each lesson (default: every lesson) as a student would with a provider configured: the
COURSE_LLM_* variables point at a teaching model this script serves and counts, standing in
for the provider. Every request that reaches it is one a real provider would receive and bill
(the private teaching models lessons start for their measurements are not counted: they never
leave the machine). It writes course/provider_load.json, which lesson 00 prints
(`course.environment.provider_load`). The counts are the teaching model's: a real model's
replies differ in length, so its completion tokens (and, in a lesson that loops until the
model stops, its requests) differ too. Lessons run with their outputs discarded; a cell that
fails is counted and named in the file.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

import nbformat  # noqa: E402

from course.chapters import CHAPTERS  # noqa: E402
from course.environment import PROVIDER_LOAD  # noqa: E402
from course.llm import server  # noqa: E402
from course.paths import REPO_ROOT  # noqa: E402


class Counter:
    """Requests and token usage by lesson, as the stand-in provider answers them."""

    def __init__(self):
        self.lock, self.lesson, self.counts = threading.Lock(), None, {}

    def add(self, usage: dict | None) -> None:
        usage = usage or {}
        with self.lock:
            row = self.counts.setdefault(self.lesson, {"requests": 0, "prompt_tokens": 0,
                                                       "completion_tokens": 0})
            row["requests"] += 1
            row["prompt_tokens"] += usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0
            row["completion_tokens"] += usage.get("completion_tokens",
                                                  usage.get("output_tokens", 0)) or 0


def counting_server(counter: Counter) -> server.ServerHandle:
    """A teaching model that tells `counter` about every request it answers."""

    chat = server.POST_ROUTES["/chat/completions"]

    def counted(route):
        def answer(model, body, raw):
            if route is chat:  # the usage of a streamed reply: from the whole reply
                payload = model.complete_raw(body, raw)
                counter.add(payload.get("usage"))
                return server.EventStream(server.chat_chunks(payload, body)) \
                    if body.get("stream") else payload
            result = route(model, body, raw)
            counter.add(result.get("usage") if isinstance(result, dict) else None)
            return result
        return answer

    routes = {path: counted(route) for path, route in server.POST_ROUTES.items()}
    handler = type("CountingHandler", (server.ServerHandle.handler_class,),
                   {"post_routes": lambda self: routes})
    return type("CountingServer", (server.ServerHandle,), {"handler_class": handler})()


def run(path: Path) -> list[str]:
    """Run a lesson, outputs discarded; the cells that failed (or the run's own failure)."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    from course.labs.running import kernel_socket_dir

    nb = nbformat.read(path, as_version=4)
    # over a local Unix socket, as the course's own runs: no TCP port to race another process for
    sockets = kernel_socket_dir()
    kernel = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "kernel"))
    try:
        NotebookClient(nb, km=kernel, timeout=900, allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except Exception as exc:  # a cell that timed out: counted so far, and said
        return [f"the run stopped: {type(exc).__name__}"]
    finally:
        if kernel.has_kernel:  # a kernel it was given is not nbclient's to stop
            kernel.shutdown_kernel(now=True)
        shutil.rmtree(sockets, ignore_errors=True)
    return [f"cell {i}" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            and any(o.get("output_type") == "error" for o in cell.get("outputs", []))]


def write(rows: dict, output: Path) -> None:
    order = [c.lesson for c in CHAPTERS]
    data = {"measured_with": f"{server.MODEL_NAME} standing in for a provider "
                             f"(benchmarks/measure_provider_load.py)",
            "lessons": sorted(rows.values(), key=lambda r: order.index(r["lesson"])
                              if r["lesson"] in order else len(order))}
    output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    output = Path(argv[argv.index("--output") + 1]) if "--output" in argv else PROVIDER_LOAD
    argv = [a for i, a in enumerate(argv) if a != "--output" and (i == 0 or argv[i - 1] != "--output")]
    lessons = [REPO_ROOT / p for p in argv] or [REPO_ROOT / c.lesson for c in CHAPTERS]
    counter = Counter()
    stand_in = counting_server(counter)
    os.environ.update(COURSE_LLM_API_KEY="measuring", COURSE_LLM_BASE_URL=stand_in.base_url,
                      COURSE_LLM_MODEL=server.MODEL_NAME)
    previous = json.loads(output.read_text(encoding="utf-8")) if output.exists() else {}
    rows = {row["lesson"]: row for row in previous.get("lessons", [])}
    try:
        for path in lessons:
            lesson = path.relative_to(REPO_ROOT).as_posix()
            counter.lesson = lesson
            failed = run(path)
            row = {"lesson": lesson, **counter.counts.get(lesson, {"requests": 0, "prompt_tokens": 0,
                                                                  "completion_tokens": 0})}
            if failed:
                row["failed_cells"] = failed
            rows[lesson] = row
            write(rows, output)  # lesson by lesson: a long run interrupted keeps what it measured
            print(json.dumps(row), flush=True)
    finally:
        stand_in.stop()
    print(f"written: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
