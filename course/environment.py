"""Is this machine ready for the course? `python -m course.environment` (also in notebook 00).

Each check returns (name, ok, detail); nothing here raises, so a broken set-up is reported in
full instead of stopping at its first problem.
"""
from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

PACKAGES = ("jupyterlab", "ipywidgets", "tiktoken", "openai", "matplotlib", "nbval", "pytest",
            "PyYAML", "quicktok-v1")


def check_python() -> tuple[str, bool, str]:
    ok = sys.version_info >= (3, 10)
    return "Python 3.10 or newer", ok, sys.version.split()[0]


def check_packages() -> tuple[str, bool, str]:
    missing, found = [], []
    for name in PACKAGES:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        return "course packages", False, "missing: " + ", ".join(missing) + " (run ./run.sh lab)"
    return "course packages", True, ", ".join(found)


def check_tokenizers() -> tuple[str, bool, str]:
    try:
        from course.tokenizer import encoding

        names = ("o200k_base", "cl100k_base")
        for name in names:
            encoding(name).encode("Context engineering, hands-on")
    except Exception as exc:
        return "offline tokenizers", False, f"{type(exc).__name__}: {exc}"
    return "offline tokenizers", True, ", ".join(f"{n} ready" for n in names)


def check_model() -> tuple[str, bool, str]:
    import course.llm

    where = "a real provider (COURSE_LLM_* variables)" if course.llm.using_real_provider() \
        else "the local teaching model"
    try:
        reply = course.llm.client().chat.completions.create(
            model=course.llm.model_name(), messages=[{"role": "user", "content": "Say hello."}],
            max_tokens=60)
    except Exception as exc:
        return "model answering", False, f"{where}: {type(exc).__name__}: {exc}"
    return "model answering", True, f"{where} ({reply.model}) answered"


def check_course_files() -> tuple[str, bool, str]:
    root = Path(__file__).resolve().parent.parent
    lessons = sorted(p.name for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    labs = sorted(p.name for p in (root / "labs").glob("*_lab.ipynb"))
    ok = bool(lessons) and bool(labs)
    return "lessons and labs", ok, f"{len(lessons)} lessons, {len(labs)} labs"


def chapters() -> list[dict]:
    """The chapter map: number, title (the lesson's first heading), lesson and lab paths."""
    import nbformat

    root = Path(__file__).resolve().parent.parent
    rows = []
    for lesson in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        number = lesson.name[:2]
        if number == "00":
            continue
        nb = nbformat.read(lesson, as_version=4)
        heading = next((line.lstrip("# ").strip() for c in nb.cells if c.cell_type == "markdown"
                        for line in c.source.splitlines() if line.startswith("# ")), lesson.stem)
        title = heading.split("—", 1)[-1].strip()
        lab = root / "labs" / f"{lesson.stem}_lab.ipynb"
        rows.append({"number": number, "title": title, "lesson": f"notebooks/{lesson.name}",
                     "lab": f"labs/{lab.name}" if lab.exists() else None})
    return rows


CHECKS = (check_python, check_packages, check_tokenizers, check_model, check_course_files)


def check_environment() -> list[tuple[str, bool, str]]:
    results = []
    for check in CHECKS:
        try:
            results.append(check())
        except Exception as exc:  # a check that breaks is itself a finding
            results.append((check.__name__, False, f"{type(exc).__name__}: {exc}"))
    return results


def report(results) -> str:
    lines = [f"[{'ok' if ok else 'PROBLEM'}] {name}: {detail}" for name, ok, detail in results]
    verdict = "Everything is ready." if all(ok for _, ok, _ in results) else \
        "Something is not ready: fix the PROBLEM lines above (./run.sh lab sets everything up)."
    return "\n".join(lines + ["", verdict])


def main() -> int:
    results = check_environment()
    print(report(results))
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
