"""COURSE_MODEL: which model course.llm.client() talks to, and the one sentence when the local
model cannot run. The teaching model stays the default, and keeps working whatever is missing."""
from __future__ import annotations

import pytest

import course.llm
from course.llm import connection, measuring
from course.local_model import weights

SETUP = "./run.sh setup --local-model"


@pytest.fixture(autouse=True)
def no_provider(monkeypatch):
    for name in (connection.ENV_KEY, connection.ENV_BASE_URL, connection.ENV_MODEL,
                 weights.ENV_MODEL):
        monkeypatch.delenv(name, raising=False)


def test_the_teaching_model_is_the_default():
    assert course.llm.model_name() == "teaching-model"
    assert course.llm.provider_configured() is False


@pytest.mark.parametrize("value, wanted", [("", None), ("teaching", None), ("local", ""),
                                           ("local:/models/qwen3-0.6b.gguf", "/models/qwen3-0.6b.gguf")])
def test_course_model_values(value, wanted):
    assert weights.requested(value) == wanted


def test_an_unknown_course_model_says_what_to_use(monkeypatch):
    monkeypatch.setenv("COURSE_MODEL", "gpt-4o")
    with pytest.raises(weights.LocalModelUnavailable, match="COURSE_MODEL=gpt-4o is not a model of "
                                                            "the course: use COURSE_MODEL=local"):
        course.llm.client()


def test_a_provider_and_the_local_model_together_are_refused(monkeypatch):
    monkeypatch.setenv("COURSE_MODEL", "local")
    monkeypatch.setenv(connection.ENV_KEY, "sk-test")
    monkeypatch.setenv(connection.ENV_MODEL, "gpt-4o-mini")
    for call in (course.llm.client, course.llm.model_name, course.llm.provider_configured):
        with pytest.raises(RuntimeError, match="Both COURSE_MODEL .* and COURSE_LLM_API_KEY"):
            call()


def _one_sentence(message: str) -> None:
    assert SETUP in message and message.count(". ") == 0 and message.endswith("."), message


def test_missing_weights_give_one_sentence_and_the_teaching_model_still_works(monkeypatch):
    monkeypatch.setattr(weights, "WEIGHTS_PACKAGE", "no-such-package-in-this-environment")
    monkeypatch.setenv("COURSE_MODEL", "local")
    for call in (course.llm.client, course.llm.model_name):
        with pytest.raises(weights.LocalModelUnavailable) as caught:
            call()
        _one_sentence(str(caught.value))
    assert weights.available() is False
    with course.llm.serve() as server:  # nothing else is broken
        reply = server.client().chat.completions.create(
            model="teaching-model", messages=[{"role": "user", "content": "Hi"}])
    assert reply.choices[0].message.content


def test_a_missing_binding_gives_the_same_sentence(monkeypatch):
    monkeypatch.setattr(weights, "binding_installed", lambda: False)
    monkeypatch.setenv("COURSE_MODEL", "local")
    with pytest.raises(weights.LocalModelUnavailable) as caught:
        course.llm.client()
    _one_sentence(str(caught.value))
    assert "not installed" in str(caught.value)


def test_a_gguf_path_that_is_not_there_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(weights, "binding_installed", lambda: True)
    monkeypatch.setenv("COURSE_MODEL", f"local:{tmp_path / 'qwen3.gguf'}")
    with pytest.raises(weights.LocalModelUnavailable, match="names no file") as caught:
        course.llm.client()
    assert str(tmp_path / "qwen3.gguf") in str(caught.value)


def test_importing_the_course_does_not_import_the_binding():
    import subprocess
    import sys

    code = ("import sys, course.llm, course.local_model; "
            "print('llama_cpp' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.fixture
def on_local_model(monkeypatch, local_model_installed):
    """COURSE_MODEL=local, with the process's default local server (started once)."""
    monkeypatch.setenv("COURSE_MODEL", "local")


def test_course_model_local_switches_client_and_model_name(on_local_model):
    assert course.llm.model_name() == "SmolLM2-135M-Instruct.Q4_1"
    assert course.llm.provider_configured() is True
    assert course.llm.using_real_provider() is False, "no provider key is involved"
    reply = course.llm.client().chat.completions.create(
        model=course.llm.model_name(), max_tokens=4,
        messages=[{"role": "user", "content": "What is the capital of France?"}])
    assert reply.model == "SmolLM2-135M-Instruct.Q4_1"
    assert "timings" in reply.model_extra and "teaching_timing" not in reply.model_extra


def test_a_measurement_labels_the_local_models_figures(on_local_model):
    target = measuring.provider_target()
    assert target.label == "SmolLM2-135M-Instruct.Q4_1 (local model)"
    assert target.model == "SmolLM2-135M-Instruct.Q4_1" and target.simulated is False
