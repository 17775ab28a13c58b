"""The student release: what students get, written to a folder of its own.

    python -m course.release OUT                  every chapter's answers compiled
    python -m course.release OUT --graded 01 04   only chapters 01 and 04's (others as source)
    python -m course.release OUT --python ~/.pyenv/versions/3.12.1/bin/python

OUT holds the lessons, labs, data, the runtime (`course/`, `lesson_support/`) and the answers,
from the repository's tracked files. Left out: the instructors' material (INSTRUCTORS.md,
docs/instructors/), the tests, the benchmarks, CI and authoring files. For the chapters being
graded, the answer modules (the chapter's solution module and every answer module it imports)
are shipped compiled, not as source: lessons still import and run them, a student cannot read
them, and graded work gains nothing from them, since grading runs in the instructor's
repository, in a sandbox without the chapter's answers (INSTRUCTORS.md, Threat model).

Compiled modules are tied to a Python version: each is written once per interpreter given with
`--python` (default: the one running this), as `<module>.<cache tag>.pyc`, and loaded by
`course.compiled_answers`, which the release's `solutions/__init__.py` installs. On another
Python the import fails with a sentence naming the versions the release was built for.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from course.chapters import CHAPTERS
from course.labs.confinement import answer_modules
from course.paths import REPO_ROOT

# Tracked paths a student does not get (a path or any path under it).
LEFT_OUT = (".ci", ".gitignore", "AUTHORING.md", "INSTRUCTORS.md", "benchmarks", "conftest.py",
            "docs/instructors", "tests")
LOADER_INIT = '''"""Reference solutions, one module per chapter topic. In this release, the answers of the
chapters being graded are compiled (see course/compiled_answers.py)."""
import course.compiled_answers

course.compiled_answers.install(__path__[0])
'''
_COMPILE = ("import json, py_compile, sys\n"
            "jobs = json.loads(sys.argv[1])\n"
            "for source, target in jobs:\n"
            "    py_compile.compile(source, cfile=target.replace('{tag}', sys.implementation.cache_tag),\n"
            "                       dfile=source.rsplit('/', 1)[-1], doraise=True,\n"
            "                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n"
            "print(sys.implementation.cache_tag)\n")


class ReleaseError(Exception):
    """A release that cannot be written, and why."""


def tracked_files(root: Path = REPO_ROOT) -> list[str]:
    """The repository's tracked files (what a clone has), as posix paths."""
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ReleaseError(f"cannot list the repository's files with git ({exc}): release from a "
                           f"clone of the course") from None
    return sorted(p for p in done.stdout.decode("utf-8").split("\0") if p)


def left_out(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in LEFT_OUT)


def graded_answers(numbers) -> dict[str, Path]:
    """The answer modules of these chapters (their solution modules and what those import)."""
    known = {c.number: c for c in CHAPTERS}
    unknown = [n for n in numbers if n not in known]
    if unknown:
        raise ReleaseError(f"no chapter {', '.join(unknown)}; the chapters are "
                           f"{', '.join(known)}")
    modules = [known[n].solution_module for n in numbers if known[n].solution_module]
    return answer_modules(modules)


def release(out: Path, graded=None, pythons=(sys.executable,)) -> dict:
    """Write the student release to `out` (which must not exist, or be empty). Returns what it
    wrote: {"files": [...], "compiled": [...], "pythons": [cache tags]}."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} is not empty: give a new folder")
    if out.resolve().is_relative_to(REPO_ROOT.resolve()):
        raise ReleaseError(f"{out} is inside the repository: give a folder outside it")
    numbers = [c.number for c in CHAPTERS if c.solution_module] if graded is None else list(graded)
    compiled_paths = graded_answers(numbers)
    hidden = [p.relative_to(REPO_ROOT) for p in compiled_paths.values()]

    def is_hidden(path: str) -> bool:
        return any(Path(path) == h or Path(path).is_relative_to(h) for h in hidden)

    files, jobs = [], []
    for path in tracked_files():
        if left_out(path) or not (REPO_ROOT / path).is_file():
            continue
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if is_hidden(path) and path.endswith(".py"):
            jobs.append((str(REPO_ROOT / path), str(target.with_suffix("")) + ".{tag}.pyc"))
            continue
        if path == "solutions/__init__.py" and hidden:
            target.write_text(LOADER_INIT, encoding="utf-8")
        else:
            shutil.copyfile(REPO_ROOT / path, target)
        files.append(path)
    tags = []
    for python in pythons:
        try:
            done = subprocess.run([str(python), "-c", _COMPILE, json.dumps(jobs)],
                                  capture_output=True, text=True, timeout=600)
        except OSError as exc:
            raise ReleaseError(f"cannot run {python}: {exc}") from None
        if done.returncode != 0:
            raise ReleaseError(f"{python} could not compile the answers: "
                               f"{done.stderr.strip().splitlines()[-1:]}")
        tags.append(done.stdout.strip())
    compiled = sorted(Path(t).relative_to(out).as_posix().replace(".{tag}.pyc", ".pyc")
                      for _, t in jobs)
    manifest = {"graded_chapters": numbers, "pythons": tags, "compiled": compiled}
    (out / "solutions" / "RELEASE.json").write_text(json.dumps(manifest, indent=1) + "\n",
                                                    encoding="utf-8")
    return {"files": files, **manifest}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.release", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="a new folder for the release")
    parser.add_argument("--graded", nargs="*", metavar="NN",
                        help="the chapters whose answers are compiled (default: every chapter)")
    parser.add_argument("--python", action="append", dest="pythons", metavar="PATH",
                        help="an interpreter to compile for (repeat; default: this one)")
    args = parser.parse_args(argv)
    try:
        done = release(args.out, args.graded, args.pythons or (sys.executable,))
    except ReleaseError as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    print(f"{len(done['files'])} files written to {args.out}; answers of chapters "
          f"{', '.join(done['graded_chapters']) or 'none'} compiled for {', '.join(done['pythons'])} "
          f"({len(done['compiled'])} modules, no source)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
