"""Notebook 00's model check caps the reply with the parameter each kind of server takes."""
import httpx
import openai
import pytest

import course.environment as environment
from tests.providers.proxy import SHAPES, ProviderProxy


def test_the_teaching_model_takes_max_completion_tokens(client):
    long = [{"role": "user", "content": "Summarise this conversation. " + "word " * 400}]
    reply = client.chat.completions.create(model="m", messages=long, max_completion_tokens=3)
    assert reply.usage.completion_tokens <= 3


@pytest.mark.parametrize("shape", SHAPES)
def test_the_check_passes_on_every_shape(shape, monkeypatch):
    with ProviderProxy(shape) as proxy:
        for name, value in proxy.environment().items():
            monkeypatch.setenv(name, value)
        name, ok, detail = environment.check_model()
    assert ok, detail
    assert detail == f"a real provider (COURSE_LLM_* variables) ({shape}-shaped-model) answered"


class _Completions:
    """A server that refuses a parameter with a 400, as OpenAI-compatible servers do."""

    def __init__(self, refused: str, message: str):
        self.refused, self.message, self.sent = refused, message, []

    def create(self, **kwargs):
        self.sent.append(sorted(k for k in kwargs if k.startswith("max")))
        if self.refused in kwargs:
            response = httpx.Response(400, request=httpx.Request("POST", "http://server/v1"))
            raise openai.BadRequestError(self.message, response=response,
                                         body={"message": self.message})
        return "hello"


class _Client:
    def __init__(self, refused: str, message: str):
        self.completions = _Completions(refused, message)
        self.chat = self


def test_a_server_that_names_max_completion_tokens_gets_max_tokens():
    client = _Client("max_completion_tokens",
                     "Unrecognized request argument supplied: max_completion_tokens")
    assert environment.say_hello(client, "m") == "hello"
    assert client.completions.sent == [["max_completion_tokens"], ["max_tokens"]]


def test_other_400s_are_not_retried():
    client = _Client("model", "The model 'm' does not exist")
    with pytest.raises(openai.BadRequestError, match="does not exist"):
        environment.say_hello(client, "m")
    assert client.completions.sent == [["max_completion_tokens"]]
