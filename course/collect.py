"""Collect the class's notebooks: `python -m course.collect HOMES_OR_EXCHANGE --out SUBMISSIONS`.

HOMES_OR_EXCHANGE holds a folder per student (a JupyterHub's home directories, or an exchange
folder): its name is the student's folder name (the roster's `folder`). From each, the notebooks
named like a released lab or lesson (`01_agent_loop_lab.ipynb`, and copies such as
`01_agent_loop_lab-Copy1.ipynb`), at any depth, are copied into SUBMISSIONS/<student>/ under the
same relative path, read-only, and listed in SUBMISSIONS/collect-manifest.json with each file's
modification time (when the student last saved it: the late policy reads it), size and SHA-256.

A home is the student's: links in it are never followed (a link to another student's notebook,
or out of the home, is refused and listed), nor are FIFOs, sockets and devices opened (a FIFO
would block the copy); hidden folders (.ipynb_checkpoints) are passed over. Each refusal is in
the manifest with its reason. Collecting again replaces an earlier collection in SUBMISSIONS;
a SUBMISSIONS it did not write is refused.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import stat
import sys
from datetime import datetime, timezone
from pathlib import Path

from course.file_trees import files, remove_tree
from course.grade.student_text import display_name
from course.grade.submissions import MANIFEST, MAX_NOTEBOOK_BYTES
from course.paths import LABS_DIR, LESSONS_DIR

FORMAT = "course-collect/1"
MARK = ".course-collected"


def released_stems(labs: Path, lessons: Path) -> tuple[str, ...]:
    return tuple(sorted(p.stem for folder in (labs, lessons) if folder.is_dir()
                        for p in folder.glob("*.ipynb")))


def wanted(name: str, stems: tuple[str, ...]) -> bool:
    """A notebook named like a released one, or a copy of one (`X-Copy1.ipynb`, `X (1).ipynb`)."""
    return name.endswith(".ipynb") and any(name == f"{s}.ipynb" or name.startswith(f"{s}-")
                                           or name.startswith(f"{s} ") for s in stems)


def when(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).isoformat(timespec="seconds")


def copy_one(entry: os.DirEntry, target: Path) -> dict:
    """Copy one file (opened without following a link and without blocking), read-only; its
    manifest record, or {"why": ...} when it is refused."""
    info = entry.stat(follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        return {"why": f"a link (to {display_name(os.readlink(entry.path))}): links are not followed"}
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device or socket"
        return {"why": f"not a regular file ({kind}): not opened"}
    if info.st_size > MAX_NOTEBOOK_BYTES:
        return {"why": f"{info.st_size / 2**20:.0f} MB, more than a notebook can be"}
    fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        opened = os.fstat(f.fileno())
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino) or not stat.S_ISREG(opened.st_mode):
            return {"why": "it changed while being collected (a folder above it replaced?): not copied"}
        data = f.read(MAX_NOTEBOOK_BYTES + 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    os.chmod(target, 0o444)
    os.utime(target, ns=(opened.st_atime_ns, opened.st_mtime_ns))
    return {"mtime": when(opened.st_mtime_ns), "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def collect(source: Path, out: Path, stems: tuple[str, ...]) -> dict:
    """Copy every student's notebooks from `source` into `out`; the manifest (also written)."""
    if out.exists():
        if not (out / MARK).is_file():
            raise SystemExit(f"{out} exists and was not written by course.collect: choose a new --out")
        remove_tree(out)
    out.mkdir(parents=True)
    (out / MARK).write_text("written by python -m course.collect\n", encoding="utf-8")
    copied, refused = [], []
    for home in sorted(source.iterdir()):
        student = display_name(home.name)
        if home.name.startswith(".") or home.resolve() == out.resolve():
            continue
        if home.is_symlink() or not home.is_dir():
            refused.append({"student": student, "path": "", "why": "not a folder (or a link to one): not followed"})
            continue
        for entry in sorted(files(home), key=lambda e: e.path):
            rel = Path(entry.path).relative_to(home)
            if any(part.startswith(".") for part in rel.parts) or not wanted(entry.name, stems):
                continue
            path = f"{student}/{display_name(rel.as_posix())}"
            if path != f"{home.name}/{rel.as_posix()}":
                refused.append({"student": student, "path": path, "why": "its name is not valid UTF-8"})
                continue
            try:
                record = copy_one(entry, out / home.name / rel)
            except OSError as exc:
                record = {"why": f"cannot read it ({exc.strerror})"}
            (refused if "why" in record else copied).append({"student": student, "path": path, **record})
    manifest = {"format": FORMAT, "source": str(source), "collected": when(datetime.now(timezone.utc).timestamp() * 1e9),
                "files": copied, "refused": refused}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def read_manifest(submissions: Path) -> dict[str, datetime]:
    """Notebook path (as the grader names it) -> its modification time, from the manifest;
    FileNotFoundError when there is none."""
    data = json.loads((submissions / MANIFEST).read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise ValueError(f"{submissions / MANIFEST} was not written by this version of course.collect")
    return {f["path"]: datetime.fromisoformat(f["mtime"]) for f in data["files"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.collect", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="the students' home folders, or an exchange folder")
    parser.add_argument("--out", type=Path, required=True, help="the submissions folder to write")
    parser.add_argument("--labs", type=Path, default=LABS_DIR, help="folder of released labs")
    parser.add_argument("--lessons", type=Path, default=LESSONS_DIR, help="folder of released lessons")
    args = parser.parse_args(argv)
    if not args.source.is_dir():
        parser.error(f"{args.source} is not a folder")
    stems = released_stems(args.labs, args.lessons)
    if not stems:
        parser.error(f"no released notebooks in {args.labs} or {args.lessons}")
    manifest = collect(args.source, args.out, stems)
    students = {f["student"] for f in manifest["files"]}
    print(f"Collected {len(manifest['files'])} notebooks of {len(students)} students into {args.out}.")
    for r in manifest["refused"]:
        print(f"  refused {r['path'] or r['student']}: {r['why']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
