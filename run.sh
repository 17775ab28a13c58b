#!/usr/bin/env bash
# The course's two entry points (see README.md):
#   ./run.sh lab    set everything up, then open the course in JupyterLab
#   ./run.sh test   set everything up, then run the whole test suite
# Set-up is idempotent: a virtual environment in .venv (or $COURSE_VENV), the packages of
# requirements.txt (reinstalled only when it changes), and the offline tokenizer vocabularies.
set -euo pipefail
cd "$(dirname "$0")"
VENV="${COURSE_VENV:-.venv}"

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating the virtual environment in $VENV ..."
    python3 -m venv "$VENV"
  fi
  local stamp="$VENV/.course-requirements" want
  want="$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "Installing the course's packages (requirements.txt) ..."
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt
    echo "$want" > "$stamp"
  fi
  "$VENV/bin/python" -m course.tokenizer
}

case "${1:-}" in
  lab)
    setup
    exec "$VENV/bin/jupyter" lab --notebook-dir=. "${@:2}"
    ;;
  test)
    setup
    exec "$VENV/bin/python" -m pytest "${@:2}"
    ;;
  *)
    echo "usage: ./run.sh lab | ./run.sh test [pytest options]" >&2
    exit 2
    ;;
esac
