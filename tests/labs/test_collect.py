"""`python -m course.collect` (issue 52): a student's home is theirs, so links in it are never
followed, FIFOs and devices never opened, and each refusal is in the manifest with its reason."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import course.collect
from course.collect import collect, read_manifest

LAB = "00_tiny_lab"


def home(homes: Path, student: str, text: str = '{"cells": []}') -> Path:
    path = homes / student / "labs" / f"{LAB}.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_links_fifos_and_other_files_are_not_collected(tmp_path):
    homes = tmp_path / "homes"
    ada = home(homes, "ada", "ada's work")
    (homes / "mal" / "labs").mkdir(parents=True)
    os.symlink(ada, homes / "mal" / "labs" / f"{LAB}.ipynb")                # ada's notebook, linked
    os.symlink(ada.parent, homes / "mal" / "elsewhere")                       # a folder out of the home
    os.mkfifo(homes / "mal" / f"{LAB}-Copy1.ipynb")                           # would block a plain open
    (homes / "mal" / "notes.txt").write_text("not a notebook", encoding="utf-8")
    (homes / "mal" / ".ipynb_checkpoints").mkdir()
    (homes / "mal" / ".ipynb_checkpoints" / f"{LAB}-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    os.symlink(homes / "ada", homes / "linked-home")
    manifest = collect(homes, tmp_path / "subs", (LAB,))
    assert [f["path"] for f in manifest["files"]] == [f"ada/labs/{LAB}.ipynb"]
    why = {r["path"] or r["student"]: r["why"] for r in manifest["refused"]}
    assert why[f"mal/labs/{LAB}.ipynb"].startswith("a link (to ")
    assert why[f"mal/{LAB}-Copy1.ipynb"].startswith("not a regular file (a FIFO)")
    assert why["linked-home"].startswith("not a folder (or a link to one)")
    assert sorted(p.relative_to(tmp_path / "subs").as_posix() for p in (tmp_path / "subs").rglob("*")
                  if p.is_file()) == sorted([".course-collected", "collect-manifest.json", f"ada/labs/{LAB}.ipynb"])


def test_a_device_is_refused(tmp_path):
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    homes = tmp_path / "homes"
    (homes / "dev").mkdir(parents=True)
    try:
        os.mknod(homes / "dev" / f"{LAB}.ipynb", 0o666 | 0o020000, os.stat("/dev/null").st_rdev)
    except PermissionError:
        pytest.skip("making a device needs rights this machine does not give")
    manifest = collect(homes, tmp_path / "subs", (LAB,))
    assert manifest["files"] == []
    assert manifest["refused"][0]["why"].startswith("not a regular file (a device or socket)")


def test_the_manifest_keeps_the_students_time_and_the_copy_is_read_only(tmp_path):
    homes = tmp_path / "homes"
    path = home(homes, "bea")
    os.utime(path, (1790000000, 1790000000))
    collect(homes, tmp_path / "subs", (LAB,))
    times = read_manifest(tmp_path / "subs")
    assert times[f"bea/labs/{LAB}.ipynb"].timestamp() == 1790000000
    copy = tmp_path / "subs" / "bea" / "labs" / f"{LAB}.ipynb"
    assert copy.stat().st_mode & 0o777 == 0o444 and copy.stat().st_mtime == 1790000000


def test_collecting_again_replaces_its_own_folder_and_refuses_another(tmp_path, capsys):
    homes = tmp_path / "homes"
    home(homes, "ada")
    labs = tmp_path / "labs"
    labs.mkdir()
    (labs / f"{LAB}.ipynb").write_text("{}", encoding="utf-8")
    args = [str(homes), "--out", str(tmp_path / "subs"), "--labs", str(labs), "--lessons", str(tmp_path)]
    assert course.collect.main(args) == 0
    assert course.collect.main(args) == 0  # again: replaced
    assert "Collected 1 notebooks of 1 students" in capsys.readouterr().out
    other = tmp_path / "mine"
    other.mkdir()
    with pytest.raises(SystemExit, match="was not written by course.collect"):
        collect(homes, other, (LAB,))
    assert json.loads((tmp_path / "subs" / "collect-manifest.json").read_text())["format"] == course.collect.FORMAT
