"""The helpers the benchmark scripts share: timing, and `package_at` (a package as it was at an
earlier commit). Scripts import it as `timing` (a script's own folder is on sys.path when it
runs) or as `benchmarks.timing`."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType


def best_time(fn, repeats: int = 5) -> float:
    """The fastest of `repeats` runs of fn(), in seconds: the least disturbed by a busy machine."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def git(*args: str) -> str:
    """git's output in the repository; LookupError without git or the objects (a shallow clone)."""
    done = subprocess.run(["git", *args], cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True)
    if done.returncode:
        raise LookupError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def module_at(commit: str, path: str, name: str) -> ModuleType:
    """The one-file module at `path` (e.g. "course/llm/planning.py") as it was at `commit`,
    imported as `name` alongside today's (its imports are today's modules)."""
    module = ModuleType(name)
    module.__file__ = f"{commit[:12]}:{path}"
    exec(compile(git("show", f"{commit}:{path}"), module.__file__, "exec"), module.__dict__)
    return module


def package_at(commit: str, package: str, folder: Path, name: str) -> ModuleType:
    """The package at `package` (e.g. "solutions/notes") as it was at `commit`, imported as
    `name` from files written to `folder` (its own imports renamed), alongside today's.
    Raises LookupError without git or that commit (e.g. in a shallow clone)."""
    target = folder / name
    target.mkdir(parents=True, exist_ok=True)
    dotted = package.strip("/").replace("/", ".")
    for path in git("ls-tree", "--name-only", commit, package.rstrip("/") + "/").split():
        if path.endswith(".py"):
            source = git("show", f"{commit}:{path}").replace(dotted, name)
            (target / Path(path).name).write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(
        name, target / "__init__.py", submodule_search_locations=[str(target)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its modules import each other by the package's name
    spec.loader.exec_module(module)
    return module
