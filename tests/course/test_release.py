"""The student release (`python -m course.release`): what students get, and what they do not."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from course.release import ReleaseError, main, release


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "course"
    return out, release(out, graded=["04"])


def test_no_instructors_material_tests_or_benchmarks(built):
    out, done = built
    files = set(done["files"])
    assert not [f for f in files if f.startswith(("tests/", "benchmarks/", "docs/instructors/", ".ci/"))]
    assert "INSTRUCTORS.md" not in files and not (out / "INSTRUCTORS.md").exists()
    assert {"README.md", "run.sh", "requirements.txt", "course/llm/server.py",
            "notebooks/04_compaction.ipynb", "labs/04_compaction_lab.ipynb"} <= files


def test_the_graded_chapters_answers_are_compiled_and_the_others_source(built):
    out, done = built
    assert not list((out / "solutions" / "compaction").glob("*.py")), "no source of a graded chapter"
    assert (out / "solutions" / "agent_loop.py").is_file(), "chapter 01 is not graded: source"
    assert "solutions/compaction/compacting.pyc" in done["compiled"]
    assert json.loads((out / "solutions" / "RELEASE.json").read_text())["graded_chapters"] == ["04"]


def test_lessons_still_import_the_compiled_answers_and_cannot_read_them(built):
    out, _ = built
    probe = ("import inspect, solutions.compaction as c\n"
             "print(c.compact.__module__, len(c.compact([{'role': 'user', 'content': 'x'}])))\n"
             "try:\n    inspect.getsource(c.compact)\nexcept (OSError, TypeError):\n    print('no source')\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=out, capture_output=True, text=True,
                          env={"PYTHONPATH": str(out), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["solutions.compaction.compacting 1", "no source"]
    assert str(out) in subprocess.run([sys.executable, "-c", "import course; print(course.__file__)"],
                                      cwd=out, capture_output=True, text=True, timeout=60,
                                      env={"PYTHONPATH": str(out)}).stdout, "the release's own runtime"


def test_another_python_is_told_which_versions_the_release_was_built_for(built, tmp_path):
    from course.compiled_answers import CompiledAnswers
    out, _ = built
    finder = CompiledAnswers(out / "solutions")
    for file in (out / "solutions" / "compaction").glob("__init__.*.pyc"):
        renamed = tmp_path / "solutions" / "compaction" / file.name.replace(sys.implementation.cache_tag, "cpython-399")
        renamed.parent.mkdir(parents=True, exist_ok=True)
        renamed.write_bytes(file.read_bytes())
    with pytest.raises(ImportError, match="compiled in this release for cpython-399 only"):
        CompiledAnswers(tmp_path / "solutions").find_spec("solutions.compaction")
    assert finder.find_spec("solutions.agent_loop") is None, "source is left to the usual finders"


def test_bad_requests_are_refused_in_a_sentence(tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert main([str(tmp_path / "full")]) == 2
    assert "is not empty" in capsys.readouterr().err
    with pytest.raises(ReleaseError, match="no chapter 42"):
        release(tmp_path / "new", graded=["42"])
    with pytest.raises(ReleaseError, match="inside the repository"):
        release(Path(__file__).parent / "release-here", graded=[])
