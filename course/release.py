"""The student release: what students get, written to a folder of its own.

    python -m course.release OUT                  every chapter's answers compiled
    python -m course.release OUT --graded 01 04   only chapters 01 and 04's (others as source)
    python -m course.release OUT --python ~/.pyenv/versions/3.12.1/bin/python

OUT holds the lessons, labs, data, the runtime (`course/`, `lesson_support/`) and the answers,
as the repository's last commit (HEAD) holds them, file modes included (`run.sh` and `postBuild`
stay executable): changes not committed are not released, and the command names them. Left out:
the instructors' material (INSTRUCTORS.md, docs/instructors/), the tests, the benchmarks, CI and
authoring files (translations/ included); the README is the release's own (docs/instructors/release/), which says what is
there and how to start. For the chapters being graded, the answer modules (the chapter's
solution module and every answer module it imports, which the command names when that is more
than `--graded` asked for) are shipped compiled, not as source: lessons still import and run
them, a student cannot read them as source. Compiled is hidden, not secret (`dis` reads it):
graded work gains nothing from them, since grading runs in the instructor's repository, in a
sandbox without the chapter's answers that refuses their compiled code
(`course.compiled_answers.refuse`; INSTRUCTORS.md, Threat model).

Compiled modules are tied to a Python version: each is written once per interpreter given with
`--python` (default: the one running this), as `<module>.<cache tag>.pyc`, and loaded by
`course.compiled_answers`, which the release's `solutions/__init__.py` installs. On another
Python the import fails with a sentence naming the versions the release was built for.

A lab's hidden checks (check cells with `course.hidden: true` in their metadata: held-out tests
of its exercises) are left out of the released lab, which says in their place how many grading
adds (`without_hidden_checks`); grading, from the repository's labs, runs them.

The release's manifest, `RELEASE.json`, lists what it wrote; lesson 00's environment check
(`course.environment`) checks a student's copy against it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from course.chapters import CHAPTERS, README_END, README_START, owner, readme_table
from course.labs.confinement import answer_modules
from course.paths import REPO_ROOT

MANIFEST = "RELEASE.json"  # at the release's top, beside README.md
# Tracked paths a student does not get (a path or any path under it): the instructors' material,
# the tests, the contributors' documents and sources (translations/ is what the Chinese
# notebooks are generated from; they are released), the repository's README pages.
LEFT_OUT = (".ci", ".gitignore", "AUTHORING.md", "CONTRIBUTING.md", "INSTRUCTORS.md", "README.md",
            "README.zh-CN.md", "benchmarks", "conftest.py", "docs/instructors", "tests",
            "translations")
# The release's own README pages (instructors' material, so never released as themselves).
READMES = {"README.md": "docs/instructors/release/README.md",
           "README.zh-CN.md": "docs/instructors/release/README.zh-CN.md"}
LOADER_INIT = '''"""Reference solutions, one module per chapter topic. In this release, the answers of the
chapters being graded are compiled (see course/compiled_answers.py)."""
import course.compiled_answers

course.compiled_answers.install(__path__[0])
'''
_COMPILE = ("import json, py_compile, sys\n"
            "jobs = json.loads(sys.argv[1])\n"
            "for source, target, name in jobs:\n"
            "    py_compile.compile(source, cfile=target.replace('{tag}', sys.implementation.cache_tag),\n"
            "                       dfile=name, doraise=True,\n"
            "                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n"
            "print(sys.implementation.cache_tag)\n")
EXECUTABLE, LINK, SUBMODULE = "100755", "120000", "160000"


class ReleaseError(Exception):
    """A release that cannot be written, and why."""


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ReleaseError(f"cannot read the repository with git ({exc}): release from a clone of "
                           f"the course, with at least one commit") from None
    return done.stdout


def committed_files(root: Path = REPO_ROOT) -> list[tuple[str, str, str]]:
    """The files of the last commit (HEAD): (mode, blob id, posix path), by path."""
    entries = []
    for line in _git(root, "ls-tree", "-r", "-z", "--full-tree", "HEAD").split(b"\0"):
        if line:
            meta, path = line.split(b"\t", 1)
            mode, _kind, blob = meta.decode().split()
            entries.append((mode, blob, path.decode("utf-8")))
    return sorted(entries, key=lambda e: e[2])


def tracked_files(root: Path = REPO_ROOT) -> list[str]:
    """The paths of the last commit (what a clone has), as posix paths."""
    return [path for _mode, _blob, path in committed_files(root)]


def blobs(root: Path, ids: list[str]) -> dict[str, bytes]:
    """The contents of these blobs, read in one `git cat-file --batch`."""
    out = _git(root, "cat-file", "--batch", stdin="".join(f"{i}\n" for i in ids).encode())
    found, at = {}, 0
    while at < len(out):
        header_end = out.index(b"\n", at)
        blob, _kind, size = out[at:header_end].decode().split()
        start = header_end + 1
        found[blob] = out[start:start + int(size)]
        at = start + int(size) + 1
    return found


def uncommitted(root: Path = REPO_ROOT) -> list[str]:
    """Tracked paths whose working copy or index differs from HEAD (what a release leaves out)."""
    out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames")
    return sorted(entry[3:].decode("utf-8") for entry in out.split(b"\0") if entry)


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


def imported_too(numbers, modules) -> dict[str, list[str]]:
    """The compiled modules not among these chapters' own solution modules, each with the
    chapters that own it: what a graded chapter's answers import from another chapter."""
    extra = {}
    for module, path in sorted(modules.items()):
        relative = path.relative_to(REPO_ROOT).as_posix()
        chapters = [c.number for c in CHAPTERS if c.solution_module == module] or \
            [c.number for c in owner(relative)]
        if not set(chapters) & set(numbers):
            extra[module] = chapters
    return extra


def readme(template: str, chinese: str = "") -> str:
    """A release README: its template with the chapters table of the repository's README
    (`{chapters}`, generated) or of its Chinese README (`{chapters_zh}`, from `chinese`)."""
    lines = chinese.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| # |")), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return (template.replace("{chapters}", f"{README_START}\n{readme_table()}\n{README_END}")
            .replace("{chapters_zh}", "\n".join(lines[start:end])))


HIDDEN_NOTE = {  # the cell a released lab gets in place of its hidden checks
    False: "**Grading adds {n} hidden check{s}** to the checks above: held-out tests of the same "
           "exercises, run only when your lab is graded. Pass the checks you see by solving the "
           "exercise, not by fitting its examples.",
    True: "**评分时还会运行 {n} 个隐藏检查项**：针对同样练习的保留测试，只在评分时运行。"
          "请真正解出练习，而不是只让上面看得到的检查项通过。",
}


def is_lab(path: str) -> bool:
    """A lab notebook of either edition (`labs/X_lab.ipynb`, `zh-CN/labs/X_lab.ipynb`)."""
    folder, _, name = path.rpartition("/")
    return folder in ("labs", "zh-CN/labs") and name.endswith("_lab.ipynb")


def without_hidden_checks(data: bytes, chinese: bool = False) -> bytes:
    """A lab notebook as released: its hidden checks (check cells whose metadata has
    `course.hidden: true`, the answer key's held-out tests) left out, a note saying how many
    grading adds in their place (before the tally), and `metadata.course.hidden_checks` the
    count. A lab without hidden checks is returned unchanged, byte for byte."""
    nb = json.loads(data)
    hidden = [c for c in nb.get("cells", []) if c.get("metadata", {}).get("course", {}).get("hidden")]
    if not hidden:
        return data
    cells = [c for c in nb["cells"] if not any(c is h for h in hidden)]
    tally = next((i for i, c in enumerate(cells) if "tally" in c.get("metadata", {}).get("tags", [])), len(cells))
    note = HIDDEN_NOTE[chinese].format(n=len(hidden), s="s" * (len(hidden) > 1))
    note_cell = {"cell_type": "markdown", "metadata": {}, "source": note}
    if any("id" in c for c in cells):  # nbformat 4.5: every cell has an id
        note_cell["id"] = "hidden-checks"
    cells.insert(tally, note_cell)
    nb["cells"] = cells
    nb.setdefault("metadata", {}).setdefault("course", {})["hidden_checks"] = len(hidden)
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _write(target: Path, mode: str, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == LINK:
        os.symlink(data.decode("utf-8"), target)
        return
    target.write_bytes(data)
    target.chmod(0o755 if mode == EXECUTABLE else 0o644)


def release(out: Path, graded=None, pythons=(sys.executable,), root: Path = REPO_ROOT) -> dict:
    """Write the student release of `root`'s last commit to `out` (which must not exist, or be
    empty). Returns what it wrote: {"files": [...], "compiled": [...], "pythons": [cache tags],
    "graded_chapters": [...], "imported_too": {module: [chapters]}, "commit": id, "uncommitted":
    [paths whose changes were left out]}."""
    out, root = Path(out), Path(root)
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} is not empty: give a new folder")
    if out.resolve().is_relative_to(root.resolve()):
        raise ReleaseError(f"{out} is inside the repository: give a folder outside it")
    numbers = [c.number for c in CHAPTERS if c.solution_module] if graded is None else list(graded)
    compiled_paths = graded_answers(numbers)
    hidden = [p.relative_to(REPO_ROOT) for p in compiled_paths.values()]

    def is_hidden(path: str) -> bool:
        return any(Path(path) == h or Path(path).is_relative_to(h) for h in hidden)

    committed = committed_files(root)
    entries = [e for e in committed if e[0] != SUBMODULE and not left_out(e[2])]
    templates = {name: blob for name, source in [*READMES.items(), ("zh", "README.zh-CN.md")]
                 for mode, blob, path in committed if path == source and mode != LINK}
    contents = blobs(root, [blob for _mode, blob, _path in entries] + list(templates.values()))
    files, jobs = [], []
    with tempfile.TemporaryDirectory() as sources:
        for mode, blob, path in entries:
            target = out / path
            if is_hidden(path) and path.endswith(".py") and mode != LINK:
                source = Path(sources) / path  # the committed source, compiled, never released
                source.parent.mkdir(parents=True, exist_ok=True)
                source.write_bytes(contents[blob])
                target.parent.mkdir(parents=True, exist_ok=True)
                jobs.append((str(source), str(target.with_suffix("")) + ".{tag}.pyc",
                             Path(path).name))
                continue
            data = LOADER_INIT.encode() if path == "solutions/__init__.py" and hidden else contents[blob]
            if is_lab(path) and mode != LINK:
                data = without_hidden_checks(data, chinese=path.startswith("zh-CN/"))
            _write(target, mode, data)
            files.append(path)
        chinese = contents[templates.pop("zh")].decode("utf-8") if "zh" in templates else ""
        for name, blob in templates.items():
            _write(out / name, "100644", readme(contents[blob].decode("utf-8"), chinese).encode())
            files.append(name)
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
                      for _, t, _name in jobs)
    manifest = {"commit": _git(root, "rev-parse", "HEAD").decode().strip(),
                "graded_chapters": numbers, "pythons": tags, "compiled": compiled,
                "imported_too": imported_too(numbers, compiled_paths),
                "files": sorted(files + [MANIFEST])}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n",
                                encoding="utf-8")
    return {**manifest, "uncommitted": [p for p in uncommitted(root) if not left_out(p)]}


def read_manifest(root: Path | None = None) -> dict | None:
    """The manifest of the release `root` is (default: this copy of the course; None in the
    repository, which has none)."""
    try:
        return json.loads((Path(root or REPO_ROOT) / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def missing(manifest: dict, root: Path | None = None) -> tuple[list[str], list[str]]:
    """What a student's copy lacks of the release: (files it wrote that are gone, compiled
    answers with no file for the running Python)."""
    root, tag = Path(root or REPO_ROOT), sys.implementation.cache_tag
    gone = [f for f in manifest.get("files", []) if not (root / f).exists()]
    compiled = [c for c in manifest.get("compiled", [])
                if not (root / c).with_suffix(f".{tag}.pyc").exists()]
    return gone, compiled


def summary(done: dict, out: Path) -> str:
    """What the command prints: what was written, what was compiled and why, what was left out."""
    lines = [f"{len(done['files'])} files of commit {done['commit'][:12]} written to {out}; "
             f"answers of chapters {', '.join(done['graded_chapters']) or 'none'} compiled for "
             f"{', '.join(done['pythons'])} ({len(done['compiled'])} modules, no source)"]
    if done["imported_too"]:
        lines.append("also compiled, because a graded chapter's answers import them (their "
                     "source is not in the release either):")
        lines += [f"  {module} (chapter {', '.join(chapters) or '?'})"
                  for module, chapters in done["imported_too"].items()]
    if done["uncommitted"]:
        lines.append(f"not released: uncommitted changes to {len(done['uncommitted'])} files "
                     f"(the release has their committed version; commit them and release again "
                     f"to include them):")
        lines += [f"  {path}" for path in done["uncommitted"]]
    return "\n".join(lines)


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
    print(summary(done, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
