"""The platform around the course: run.sh, the Jupyter settings it ships, the stored widget
note, repo2docker's files (apt.txt, runtime.txt, postBuild) and Chinese text in plots.

Everything here runs offline and in seconds: run.sh is driven with a stand-in Python and a
stand-in JupyterLab, postBuild in a fresh venv that borrows this one's packages.
"""
from __future__ import annotations

import ast
import json
import os
import re
import stat
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import nbformat
import pytest

from course import notebooks, plotting
from course.paths import LESSONS_DIR, REPO_ROOT

CI = bool(os.environ.get("CI"))


# --- run.sh ------------------------------------------------------------------------------------

def _script(path: Path, text: str) -> Path:
    path.write_text("#!/usr/bin/env bash\n" + textwrap.dedent(text))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _fake_python(path: Path, version: str) -> Path:
    """A 'python' that says it is `version` and succeeds at anything else it is asked."""
    return _script(path, f"""\
        case "$*" in
          *sys.version_info*) echo {version} ;;
          *"-m venv"*) mkdir -p "${{@: -1}}/bin"; cp "$0" "${{@: -1}}/bin/python" ;;
        esac
        exit 0
        """)


def _run_sh(*args, env=None, **kwargs):
    return subprocess.run([str(REPO_ROOT / "run.sh"), *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=60, **kwargs)


def test_run_sh_refuses_a_python_older_than_3_11_before_making_a_venv(tmp_path):
    venv = tmp_path / "venv"
    result = _run_sh("lab", env={"PYTHON": str(_fake_python(tmp_path / "python3.10", "3.10")),
                                 "COURSE_VENV": str(venv)})
    assert result.returncode == 1
    assert "needs Python 3.11 or newer" in result.stderr and "is Python 3.10" in result.stderr
    assert "PYTHON=python3.12 ./run.sh lab" in result.stderr, "the message says what to do"
    assert not venv.exists()


def test_run_sh_refuses_an_existing_venv_of_an_old_python(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    _fake_python(venv / "bin" / "python", "3.10")
    result = _run_sh("test", env={"COURSE_VENV": str(venv)})
    assert result.returncode == 1 and f"Remove {venv}" in result.stderr


def test_run_sh_says_so_when_the_python_it_is_given_does_not_run(tmp_path):
    result = _run_sh("lab", env={"PYTHON": str(tmp_path / "no-python-here"),
                                 "COURSE_VENV": str(tmp_path / "venv")})
    assert result.returncode == 1 and "cannot run" in result.stderr
    assert "3.11, 3.12 or 3.13" in result.stderr


@pytest.fixture
def fake_venv(tmp_path):
    """A venv whose python is a stand-in and whose jupyter prints how it was called."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    _fake_python(venv / "bin" / "python", "3.12")
    _script(venv / "bin" / "jupyter", """\
        printf 'ARG %s\\n' "$@"
        echo "JUPYTER_CONFIG_PATH=$JUPYTER_CONFIG_PATH"
        """)
    digest = subprocess.run("cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1",
                            shell=True, cwd=REPO_ROOT, capture_output=True, text=True).stdout
    (venv / ".course-requirements").write_text(digest)  # "the packages are installed"
    return venv


def test_run_sh_lab_passes_options_through_and_allows_root_only_as_root(fake_venv):
    result = _run_sh("lab", "--port", "9999", "--ServerApp.ip=0.0.0.0",
                     env={"COURSE_VENV": str(fake_venv)})
    assert result.returncode == 0, result.stderr
    args = [line[4:] for line in result.stdout.splitlines() if line.startswith("ARG ")]
    assert args[0] == "lab" and args[-3:] == ["--port", "9999", "--ServerApp.ip=0.0.0.0"]
    assert ("--allow-root" in args) == (os.geteuid() == 0)


def test_run_sh_setup_only_sets_up(fake_venv):
    result = _run_sh("setup", env={"COURSE_VENV": str(fake_venv)})
    assert result.returncode == 0 and "ARG" not in result.stdout


def test_run_sh_points_jupyter_at_the_course_settings_first(fake_venv):
    result = _run_sh("lab", env={"COURSE_VENV": str(fake_venv), "JUPYTER_CONFIG_PATH": "/elsewhere"})
    line = next(x for x in result.stdout.splitlines() if x.startswith("JUPYTER_CONFIG_PATH="))
    assert line.split("=", 1)[1] == f"{REPO_ROOT / 'jupyter-config'}:/elsewhere"


# --- JupyterLab settings -----------------------------------------------------------------------

NEWS = "@jupyterlab/apputils-extension:notification"


def test_the_course_settings_turn_the_news_pop_up_off(monkeypatch, tmp_path):
    """JupyterLab (jupyterlab_server) reads them as its defaults from JUPYTER_CONFIG_PATH."""
    from jupyterlab_server.settings_utils import _get_overrides

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(REPO_ROOT / "jupyter-config"))
    overrides, error = _get_overrides(str(tmp_path))
    assert error == ""
    assert overrides[NEWS] == {"fetchNews": "false", "checkForUpdates": False}


def test_the_course_settings_are_valid_for_jupyterlab():
    schema_file = (Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas" / "@jupyterlab" /
                   "apputils-extension" / "notification.json")
    properties = json.loads(schema_file.read_text())["properties"]
    ours = json.loads((REPO_ROOT / "jupyter-config" / "labconfig" /
                       "default_setting_overrides.json").read_text())[NEWS]
    allowed = [choice["const"] for choice in properties["fetchNews"]["oneOf"]]
    assert ours["fetchNews"] in allowed and isinstance(ours["checkForUpdates"], bool)


# --- the note in place of an unrun widget ------------------------------------------------------

def _widget_output(text):
    return nbformat.v4.new_output("display_data", data={
        notebooks.WIDGET_VIEW: {"model_id": "abc", "version_major": 2, "version_minor": 0},
        "text/plain": text})


def test_note_widgets_changes_only_the_text_of_widget_outputs():
    nb = nbformat.v4.new_notebook()
    plain = nbformat.v4.new_output("execute_result", data={"text/plain": "VBox(children=(...))"},
                                   execution_count=1)
    nb.cells = [nbformat.v4.new_code_cell(outputs=[_widget_output("VBox(children=(HBox(...)))"),
                                                   plain])]
    assert notebooks.note_widgets(nb) == 1
    widget, other = nb.cells[0].outputs
    assert widget.data["text/plain"] == notebooks.WIDGET_NOTE
    assert widget.data[notebooks.WIDGET_VIEW]["model_id"] == "abc"
    assert other.data["text/plain"] == "VBox(children=(...))"
    assert notebooks.note_widgets(nb) == 0, "idempotent"


LESSONS = sorted(LESSONS_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_stored_widget_output_shows_the_note(path):
    nb = nbformat.read(path, as_version=4)
    wrong = [output.data.get("text/plain") for output in notebooks.widget_outputs(nb)
             if output.data.get("text/plain") != notebooks.WIDGET_NOTE]
    assert wrong == [], (f"{path.name}: stored widget outputs show their repr; re-run the lesson "
                         f"with `python -m course.notebooks run {path.relative_to(REPO_ROOT)}`")


def test_the_lessons_have_widgets_to_check():
    assert sum(1 for p in LESSONS for _ in notebooks.widget_outputs(nbformat.read(p, 4))) >= 5


# --- repo2docker (JupyterHub, BinderHub) ---------------------------------------------------------

def _apt_txt() -> list[str]:
    lines = (REPO_ROOT / "apt.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _ci_apt_packages() -> list[str]:
    text = (REPO_ROOT / ".ci" / "run").read_text()
    match = re.search(r"^APT_PACKAGES=\(([^)]*)\)", text, re.M)
    assert match, ".ci/run names its Debian packages in APT_PACKAGES=(...)"
    return match.group(1).split()


def test_apt_txt_lists_what_the_course_uses_and_ci_installs_it_too():
    packages = _apt_txt()
    assert {"bubblewrap", "gawk", "fonts-noto-cjk"} <= set(packages)
    # CI installs everything a student's image gets, and only the test browser besides.
    assert set(_ci_apt_packages()) - set(packages) == {"chromium"}
    assert set(packages) <= set(_ci_apt_packages())


def test_runtime_txt_asks_for_a_supported_python():
    line = (REPO_ROOT / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-3\.(\d+)", line)
    assert match and 11 <= int(match.group(1)) <= 13, line
    requires = re.search(r'requires-python = ">=3\.(\d+)"', (REPO_ROOT / "pyproject.toml").read_text())
    assert int(match.group(1)) >= int(requires.group(1))


def test_postbuild_is_an_executable_script():
    postbuild = REPO_ROOT / "postBuild"
    assert postbuild.stat().st_mode & stat.S_IXUSR
    assert postbuild.read_text().startswith("#!/usr/bin/env bash\n")
    tracked = subprocess.run(["git", "ls-files", "-s", "postBuild"], cwd=REPO_ROOT,
                             capture_output=True, text=True).stdout
    if tracked:  # a clone gets the mode git recorded, not this checkout's
        assert tracked.startswith("100755"), "git add --chmod=+x postBuild"


def test_postbuild_prepares_a_fresh_environment(tmp_path):
    """postBuild in a new venv (no pip: it borrows this environment's packages, as if
    requirements.txt were installed) writes the vocabularies and the course settings."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    fresh_site = Path(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    (fresh_site / "borrowed.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    cache = tmp_path / "tiktoken-cache"
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", TIKTOKEN_CACHE_DIR=str(cache))
    env.pop("JUPYTER_CONFIG_PATH", None)
    result = subprocess.run([str(REPO_ROOT / "postBuild")], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "o200k_base: ready" in result.stdout and "cl100k_base: ready" in result.stdout
    assert len(list(cache.iterdir())) == 2
    installed = venv / "etc" / "jupyter" / "labconfig" / "default_setting_overrides.json"
    assert json.loads(installed.read_text())[NEWS]["fetchNews"] == "false"
    # ...where that environment's JupyterLab looks for it.
    paths = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "from jupyter_core.paths import jupyter_config_path as p; print('\\n'.join(p()))"],
                           env=env, capture_output=True, text=True, check=True).stdout.split()
    assert str(venv / "etc" / "jupyter") in paths


def test_ci_runs_the_readme_command_and_every_other_supported_python():
    text = (REPO_ROOT / ".ci" / "run").read_text()
    # the README's command, with every lesson and lab also run once against a provider imitation
    assert re.search(r"^  COURSE_CONFORMANCE=rotate COURSE_VENV=\"\$MAIN_VENV\" \./run\.sh test "
                     r"--junitxml=", text, re.M)
    assert re.search(r"^SUPPORTED_PYTHONS=\(3\.11 3\.12 3\.13\)$", text, re.M)
    assert re.search(r"^EXTRA_TESTS=\(tests/course tests/solutions tests/lesson_support notebooks\)$",
                     text, re.M)
    assert 'print(f"{passed} passed, {failed} failed")' in text


# --- Chinese text in plots ---------------------------------------------------------------------

def test_importing_course_does_not_import_matplotlib():
    code = "import sys, course; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_a_cjk_font_use_cjk_font_changes_nothing(monkeypatch):
    import matplotlib
    from matplotlib import font_manager

    ttflist = [f for f in font_manager.fontManager.ttflist if "CJK" not in f.name]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", ttflist)
    before = list(matplotlib.rcParams["font.family"])
    with matplotlib.rc_context():
        matplotlib.rcParams["font.family"] = ["sans-serif"]
        assert plotting.use_cjk_font(patterns=[]) is None
        assert matplotlib.rcParams["font.family"] == ["sans-serif"]
    assert list(matplotlib.rcParams["font.family"]) == before


def _cjk_font_installed() -> bool:
    import glob

    return any(glob.glob(os.path.expanduser(p), recursive=True) for p in plotting.CJK_FONT_FILES)


needs_cjk_font = pytest.mark.skipif(
    not _cjk_font_installed() and not CI,
    reason="no Noto Sans CJK font (Debian package fonts-noto-cjk); required in CI")


@needs_cjk_font
def test_matplotlib_draws_chinese_after_import_course():
    """In a new process, as a lesson would: import course, then plot Chinese text. Matplotlib
    warns 'Glyph ... missing from font(s)' for every character it would draw as a box."""
    code = textwrap.dedent("""\
        import io, warnings
        import course
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        warnings.simplefilter("error")
        fig, ax = plt.subplots()
        ax.set_title("上下文工程 context engineering")
        ax.bar(["中文", "English"], [3, 1])
        fig.savefig(io.BytesIO(), format="png")
        print(matplotlib.rcParams["font.family"])
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    families = ast.literal_eval(result.stdout.strip())
    assert families[0] == "sans-serif" and families[-1] in plotting.CJK_FAMILIES


@needs_cjk_font
def test_use_cjk_font_finds_a_font_installed_after_matplotlibs_cache_was_built(monkeypatch):
    import matplotlib
    from matplotlib import font_manager

    monkeypatch.setattr(font_manager.fontManager, "ttflist",
                        [f for f in font_manager.fontManager.ttflist if "CJK" not in f.name])
    with matplotlib.rc_context():
        assert plotting.use_cjk_font() == "Noto Sans CJK SC"
        assert matplotlib.rcParams["font.family"][-1] == "Noto Sans CJK SC"
        assert plotting.use_cjk_font() == "Noto Sans CJK SC"
        assert matplotlib.rcParams["font.family"].count("Noto Sans CJK SC") == 1
