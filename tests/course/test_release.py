"""The student release (`python -m course.release`): what students get, and what they do not."""
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course.environment import check_course_files
from course.paths import REPO_ROOT
from course.release import MANIFEST, ReleaseError, main, release


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
    assert json.loads((out / MANIFEST).read_text())["graded_chapters"] == ["04"]


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


def test_run_sh_and_postbuild_stay_executable(built):
    out, _ = built
    for name in ("run.sh", "postBuild"):
        assert os.access(out / name, os.X_OK), f"{name} lost its executable bit in the release"
    assert not os.access(out / "README.md", os.X_OK)


def release_python(out: Path, venv: Path) -> Path:
    """A virtual environment for `./run.sh` in the release that reuses this one's packages (a
    .pth file) and whose requirements stamp says they are installed, so `./run.sh setup`
    installs nothing and leaves this environment alone."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (site / "course-packages.pth").write_text(ours + "\n")
    stamp = hashlib.sha256((out / "requirements.txt").read_bytes() + (out / "pyproject.toml").read_bytes())
    (venv / ".course-requirements").write_text(stamp.hexdigest() + "\n")
    return venv / "bin" / "python"


def test_run_sh_starts_in_the_release(built, tmp_path):
    out, _ = built
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "COURSE_VENV": str(tmp_path / "venv")}
    done = subprocess.run(["./run.sh", "no-such-command"], cwd=out, capture_output=True, text=True, env=env)
    assert (done.returncode, done.stderr.split(":")[0]) == (2, "usage"), done.stderr
    release_python(out, tmp_path / "venv")
    done = subprocess.run(["./run.sh", "setup"], cwd=out, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "Installing" not in done.stdout and "ready" in done.stdout, done.stdout


def test_run_sh_test_in_the_release_says_it_is_not_for_students(built, tmp_path):
    out, _ = built
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "COURSE_VENV": str(tmp_path / "none")}
    done = subprocess.run(["./run.sh", "test"], cwd=out, capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "student release" in done.stderr and "./run.sh lab" in done.stderr
    assert not (tmp_path / "none").exists(), "refused before setting anything up"


def test_lesson_00_passes_in_the_release(built, tmp_path):
    """Strict nbval on lesson 00 in the release, its own runtime first on the path: the
    environment check checks what the release wrote (it ships no tests, which the registry's
    chapter parts name), and every stored output is reproduced."""
    out, _ = built
    env = {**os.environ, "PYTHONPATH": str(out), "HOME": str(tmp_path)}
    env = {k: v for k, v in env.items() if not k.startswith(("COURSE_LLM_", "COURSE_MODEL"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=",
                           "-q", "--nbval", "--nbval-current-env", "notebooks/00_start_here.ipynb"],
                          cwd=out, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout[-3000:]
    probe = subprocess.run([sys.executable, "-c", "import course.environment as e; print(e.check_course_files())"],
                           cwd=out / "notebooks", capture_output=True, text=True, env=env)
    # the same verdict and counts as the repository's own check (the registry's chapters)
    assert probe.stdout.strip() == str(check_course_files()), probe.stderr


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_release_has_its_own_readme_and_every_link_in_it_resolves(built):
    out, done = built
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme != (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "./run.sh test" not in readme and "CONTRIBUTING" not in readme
    assert "notebooks/04_compaction.ipynb" in readme, "the chapters table"
    assert "zh-CN/notebooks/04_compaction.ipynb" in (out / "README.zh-CN.md").read_text(encoding="utf-8")
    assert not (out / "CONTRIBUTING.md").exists()
    broken = []
    for page in sorted(out.rglob("*.md")) + sorted(out.rglob("*.ipynb")):
        if page.suffix == ".md":
            texts = [page.read_text(encoding="utf-8")]
        else:
            texts = [c.source for c in nbformat.read(page, as_version=4).cells if c.cell_type == "markdown"]
        for target in (t for text in texts for t in LINK.findall(text)):
            if not target.startswith(("http:", "https:", "mailto:")) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(out)} -> {target}")
    assert broken == [], "links to files the release does not ship"


def test_a_jupyterhub_image_can_be_built_from_the_release(built):
    """repo2docker's files are in the release (INSTRUCTORS.md builds the image from it)."""
    out, _ = built
    for name in ("runtime.txt", "requirements.txt", "apt.txt", "postBuild", "pyproject.toml",
                 "jupyter-config/labconfig"):
        assert (out / name).exists(), name
    local = [line.split()[-1] for line in (out / "requirements.txt").read_text().splitlines()
             if line.startswith("-e ") or line.startswith(("./", "."))]
    assert all((out / path).exists() for path in local), local


def test_the_command_says_when_more_is_compiled_than_graded_names(tmp_path, capsys):
    assert main([str(tmp_path / "course"), "--graded", "04"]) == 0
    printed = capsys.readouterr().out
    assert "solutions.tokens (chapter 02)" in printed, printed
    assert json.loads((tmp_path / "course" / MANIFEST).read_text())["imported_too"] == {"solutions.tokens": ["02"]}


def git(root, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def test_the_release_is_the_last_commit_and_names_what_it_left_out(tmp_path):
    repo = tmp_path / "repo"
    (repo / "notebooks").mkdir(parents=True)
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "notebooks" / "01.ipynb").write_text("committed outputs")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_x.py").write_text("")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    (repo / "notebooks" / "01.ipynb").write_text("a provider's outputs, not committed")
    (repo / "tests" / "test_x.py").write_text("changed")
    (repo / "new.txt").write_text("untracked")
    done = release(tmp_path / "out", graded=[], root=repo)
    out = tmp_path / "out"
    assert (out / "notebooks" / "01.ipynb").read_text() == "committed outputs"
    assert os.access(out / "run.sh", os.X_OK) and not (out / "new.txt").exists()
    assert done["uncommitted"] == ["notebooks/01.ipynb"], "a test is not released: its change does not matter"
    from course.release import summary
    assert "uncommitted changes to 1 files" in summary(done, out) and "notebooks/01.ipynb" in summary(done, out)


def test_the_class_work_is_not_offered_for_committing():
    paths = ["submissions/alice/01_agent_loop_lab.ipynb", "submissions/gradebook.md",
             "gradebooks/shard-1/gradebook.json", "graded-notebooks/bob/01_agent_loop_lab.ipynb"]
    done = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=REPO_ROOT,
                          capture_output=True, text=True)
    assert done.stdout.split() == paths
