"""course.llm.provider_configured(): the switch lessons use to add a provider's run."""
import course.llm


def test_no_key_means_no_provider(monkeypatch):
    monkeypatch.delenv(course.llm.ENV_KEY, raising=False)
    monkeypatch.delenv(course.llm.ENV_MODEL, raising=False)
    assert course.llm.provider_configured() is False
    assert course.llm.model_name() == course.llm.MODEL_NAME


def test_a_key_means_a_provider_read_at_call_time(monkeypatch):
    monkeypatch.setenv(course.llm.ENV_KEY, "sk-test")
    monkeypatch.setenv(course.llm.ENV_MODEL, "some-model")
    assert course.llm.provider_configured() is True
    assert course.llm.model_name() == "some-model"
    monkeypatch.setenv(course.llm.ENV_KEY, "")
    assert course.llm.provider_configured() is False
