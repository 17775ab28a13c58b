#!/usr/bin/env bash
# The course's two entry points (see README.md):
#   ./run.sh lab  [JupyterLab options]   set everything up, then open the course in JupyterLab
#   ./run.sh test [pytest options]       set everything up, then run the whole test suite
#   ./run.sh setup                       only set up (CI prepares several venvs this way)
# Set-up is idempotent: a virtual environment in .venv (or $COURSE_VENV) made with $PYTHON (or
# python3; it must be Python 3.11 or newer), the packages of requirements.txt (reinstalled only
# when it changes), and the offline tokenizer vocabularies.
set -euo pipefail
cd "$(dirname "$0")"
VENV="${COURSE_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
# The course's own Jupyter settings (no news pop-up): see jupyter-config/README.md.
COURSE_JUPYTER_CONFIG="$PWD/jupyter-config"

# Prints "3.11" for a Python that runs, nothing (and fails) otherwise.
python_version() {
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null
}

# Refuses (exit 1, saying what to do) a Python older than 3.11: the pinned packages do not install
# on it (Python 3.10 is end-of-life). Supported: 3.11, 3.12 and 3.13. $2 says what to do then.
require_python() {
  local python="$1" fix="$2" version major minor
  if ! version="$(python_version "$python")" || [ -z "$version" ]; then
    echo "run.sh: cannot run $python. This course needs Python 3.11, 3.12 or 3.13:" >&2
    echo "  install one, or name it: PYTHON=/path/to/python3.12 ./run.sh $COMMAND" >&2
    exit 1
  fi
  major="${version%%.*}" minor="${version#*.}"
  if [ "$major" -lt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -lt 11 ]; }; then
    echo "run.sh: this course needs Python 3.11 or newer (3.11, 3.12 or 3.13)." >&2
    echo "  $python is Python $version. $fix" >&2
    exit 1
  fi
  if [ "$major" -gt 3 ] || [ "$minor" -gt 13 ]; then
    echo "run.sh: note: Python $version is newer than the course is tested on (3.11 to 3.13)." >&2
  fi
}

setup() {
  if [ -x "$VENV/bin/python" ]; then
    require_python "$VENV/bin/python" "Remove $VENV, then run again with a newer Python: PYTHON=python3.12 ./run.sh $COMMAND"
  else
    require_python "$PYTHON" "Install a newer one and name it: PYTHON=python3.12 ./run.sh $COMMAND"
    echo "Creating the virtual environment in $VENV with $PYTHON (Python $(python_version "$PYTHON")) ..."
    "$PYTHON" -m venv "$VENV"
    # A venv that git ignores wherever it is (.venv, .venv-3.12, ...).
    echo '*' > "$VENV/.gitignore"
  fi
  local stamp="$VENV/.course-requirements" want
  want="$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "Installing the course's packages (requirements.txt) ..."
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt
    echo "$want" > "$stamp"
  fi
  "$VENV/bin/python" -m course.tokenizer
  # Lessons, labs and the browser test see the course's Jupyter settings too.
  export JUPYTER_CONFIG_PATH="$COURSE_JUPYTER_CONFIG${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
}

COMMAND="${1:-}"
case "$COMMAND" in
  lab)
    setup
    args=(--notebook-dir=.)
    # Containers run as root; JupyterLab refuses root unless told. Anything after `lab` goes to
    # JupyterLab as it is: ./run.sh lab --port 9999 --no-browser
    if [ "$(id -u)" = 0 ]; then
      args+=(--allow-root)
    fi
    exec "$VENV/bin/jupyter" lab "${args[@]}" "${@:2}"
    ;;
  test)
    setup
    exec "$VENV/bin/python" -m pytest "${@:2}"
    ;;
  setup)
    setup
    ;;
  *)
    echo "usage: ./run.sh lab [JupyterLab options] | ./run.sh test [pytest options] | ./run.sh setup" >&2
    exit 2
    ;;
esac
