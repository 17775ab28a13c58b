"""course.llm targets: a measurement goes to a private teaching model and, when configured, to the
provider; each figure's label comes from the target that produced it."""
import course.llm
from course.llm.measuring import NO_PROVIDER, PROVIDER_SUFFIX, TEACHING_LABEL
from course.usage import read_usage
from tests.providers.proxy import ProviderProxy

HELLO = [{"role": "user", "content": "Say hello."}]


def _no_provider(monkeypatch):
    for name in (course.llm.ENV_KEY, course.llm.ENV_MODEL, course.llm.ENV_BASE_URL):
        monkeypatch.delenv(name, raising=False)


def test_without_a_provider_only_the_teaching_model_runs(monkeypatch, capsys):
    _no_provider(monkeypatch)
    with course.llm.fresh_targets() as chosen:
        assert [t.label for t in chosen] == [TEACHING_LABEL]
        assert chosen[0].simulated and chosen[0].model == course.llm.MODEL_NAME
        reply = chosen[0].create(messages=HELLO)
        assert reply.teaching_trace  # it really is the teaching model answering
        course.llm.announce(chosen)
    assert capsys.readouterr().out.strip() == NO_PROVIDER


def test_a_configured_provider_comes_second_with_its_own_label(monkeypatch, capsys):
    _no_provider(monkeypatch)
    with ProviderProxy("ollama") as proxy:
        for name, value in proxy.environment("some-ollama-model").items():
            monkeypatch.setenv(name, value)
        with course.llm.fresh_targets() as chosen:
            teaching, provider = chosen
            assert teaching.label == TEACHING_LABEL
            assert provider.label == f"some-ollama-model {PROVIDER_SUFFIX}"
            assert not provider.simulated and provider.model == "some-ollama-model"
            before = proxy.requests
            usage = read_usage(provider.create(messages=HELLO).usage)
            assert proxy.requests == before + 1  # the provider's figure came from the provider
            assert usage.cached is None  # the Ollama shape reports no cache
            teaching.create(messages=HELLO)
            assert proxy.requests == before + 1  # ...and the teaching model's did not
            course.llm.announce(chosen)
    assert capsys.readouterr().out.strip() == (
        f"Sent to: {TEACHING_LABEL}; some-ollama-model {PROVIDER_SUFFIX}")


def test_targets_on_an_existing_server_share_its_cache(monkeypatch):
    _no_provider(monkeypatch)
    with course.llm.serve() as server:
        long = [{"role": "system", "content": "policy line. " * 400}] + HELLO
        (first,) = course.llm.targets(server)
        first.create(messages=long)
        (again,) = course.llm.targets(server)
        assert read_usage(again.create(messages=long).usage).cached >= 1024
