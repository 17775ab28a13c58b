"""ruff finds nothing in the repository's Python files and notebooks (its configuration is in
pyproject.toml: pyflakes and the pycodestyle errors that are always bugs)."""
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path, PurePosixPath

import pytest

from course.paths import REPO_ROOT
from course.release import tracked_files


def ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")  # the virtualenv's, installed by requirements.txt
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: `pip install -r requirements.txt` installs it")
    return found


def test_ruff_finds_nothing():
    done = subprocess.run([ruff(), "check", "--output-format", "concise", "--no-cache", "."],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_ruff_would_find_an_undefined_name(tmp_path):
    """The check is not vacuous: the same configuration reports a real mistake."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    return undefined_name\n", encoding="utf-8")
    done = subprocess.run([ruff(), "check", "--no-cache", "--config", str(REPO_ROOT / "pyproject.toml"),
                           str(bad)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "F821" in done.stdout



def duplicate_test_basenames(paths) -> list[str]:
    """Basenames that more than one test module under tests/ has."""
    names = Counter(PurePosixPath(p).name for p in paths
                    if p.startswith("tests/") and PurePosixPath(p).name.startswith("test_") and p.endswith(".py"))
    return sorted(name for name, n in names.items() if n > 1)


def test_no_two_test_modules_share_a_basename():
    """pytest imports a test module by its basename (the test folders are not packages): two of
    one name stop the whole suite's collection ("import file mismatch")."""
    assert duplicate_test_basenames(tracked_files()) == []


def test_a_shared_basename_is_found():
    assert duplicate_test_basenames(["tests/a/test_x.py", "tests/b/test_x.py", "tests/b/test_y.py",
                                     "notes/test_y.py"]) == ["test_x.py"]
