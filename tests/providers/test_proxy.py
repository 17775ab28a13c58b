"""The provider-shaped proxy: each shape's answers read back correctly by course.usage."""
import openai
import pytest

from course.usage import read_usage
from tests.providers.proxy import MAX_TOKENS_REFUSED, SHAPES, UNCHECKED_REPLY, ProviderProxy, reshape

LONG = [{"role": "system", "content": "Answer from the documents only. " * 300},
        {"role": "user", "content": "What does the cache keep?"}]
BROKEN = [{"role": "user", "content": "List the files."},
          {"role": "assistant", "content": None, "tool_calls": [
              {"id": "call_1", "type": "function",
               "function": {"name": "list_files", "arguments": "{}"}}]},
          {"role": "user", "content": "Well?"}]  # the call's result is missing


@pytest.fixture(params=SHAPES)
def proxy(request):
    with ProviderProxy(request.param) as handle:
        yield handle


def twice(proxy):
    client = proxy.client()
    return [client.chat.completions.create(model="m", messages=LONG, max_completion_tokens=20)
            for _ in range(2)]


def test_each_shape_reads_back_through_read_usage(proxy):
    first, second = twice(proxy)
    usage = [read_usage(c.usage) for c in (first, second)]
    assert usage[0].prompt == usage[1].prompt > 1024
    assert usage[0].completion == first.usage.completion_tokens
    expected_shape = {"ollama": "plain", "deepseek": "deepseek", "openai": "openai"}[proxy.shape]
    assert [u.provider_shape for u in usage] == [expected_shape] * 2
    if proxy.shape == "ollama":
        assert [u.cached for u in usage] == [None, None], "Ollama reports no cache figure"
    else:
        assert usage[0].cached == 0 and 0 < usage[1].cached <= usage[1].prompt
    assert proxy.requests == 2


def test_the_raw_usage_has_only_the_shapes_own_fields(proxy):
    raw = twice(proxy)[1].usage.model_dump(exclude_none=True)
    has_details = "prompt_tokens_details" in raw
    has_deepseek = "prompt_cache_hit_tokens" in raw
    assert (has_details, has_deepseek) == {"ollama": (False, False), "deepseek": (False, True),
                                           "openai": (True, False)}[proxy.shape]
    if has_deepseek:
        assert raw["prompt_cache_hit_tokens"] + raw["prompt_cache_miss_tokens"] == raw["prompt_tokens"]
        assert raw["prompt_cache_hit_tokens"] % 64 == 0, "DeepSeek caches in 64-token units"


def test_no_shape_sends_the_teaching_trace(proxy):
    completion = twice(proxy)[0]
    assert "teaching_trace" not in (completion.model_extra or {})
    assert completion.system_fingerprint and "teaching" not in completion.system_fingerprint
    assert completion.model == "m"


def test_openai_refuses_max_tokens_like_a_reasoning_model():
    with ProviderProxy("openai") as proxy:
        with pytest.raises(openai.BadRequestError) as caught:
            proxy.client().chat.completions.create(model="m", messages=LONG, max_tokens=20)
    assert caught.value.status_code == 400
    assert caught.value.body == MAX_TOKENS_REFUSED["error"]
    assert caught.value.param == "max_tokens" and caught.value.code == "unsupported_parameter"


@pytest.mark.parametrize("shape", ["ollama", "deepseek"])
def test_other_shapes_take_max_tokens(shape):
    with ProviderProxy(shape) as proxy:
        reply = proxy.client().chat.completions.create(model="m", messages=LONG, max_tokens=5)
    assert reply.usage.completion_tokens <= 5


def test_ollama_answers_a_broken_history_instead_of_refusing_it():
    with ProviderProxy("ollama") as proxy:
        reply = proxy.client().chat.completions.create(model="m", messages=BROKEN)
    assert reply.choices[0].message.content == UNCHECKED_REPLY
    usage = read_usage(reply.usage)
    assert usage.provider_shape == "plain" and usage.prompt > 0 and usage.cached is None


@pytest.mark.parametrize("shape", ["deepseek", "openai"])
def test_other_shapes_refuse_a_broken_history(shape):
    with ProviderProxy(shape) as proxy:
        with pytest.raises(openai.BadRequestError, match="call_1"):
            proxy.client().chat.completions.create(model="m", messages=BROKEN)


def test_openai_names_a_broken_history_in_its_message_not_its_code():
    with ProviderProxy("openai") as proxy:
        with pytest.raises(openai.BadRequestError) as refused:
            proxy.client().chat.completions.create(model="m", messages=BROKEN)
    assert refused.value.code is None and "call_1" in refused.value.message


def test_other_errors_pass_through_unchanged():
    with ProviderProxy("ollama") as proxy:
        with pytest.raises(openai.BadRequestError, match="tool_choice"):
            proxy.client().chat.completions.create(model="m", messages=LONG, tool_choice="required")


def test_models_list_passes_through():
    from course.llm.models import MODELS

    with ProviderProxy("deepseek") as proxy:
        assert [m.id for m in proxy.client().models.list()] == list(MODELS)
        assert proxy.requests == 0, "only chat requests are counted"


@pytest.mark.parametrize("shape", SHAPES)
def test_over_the_window_every_shape_answers_openais_400(shape):
    # OpenAI and DeepSeek answer a request over the window with this 400; the Ollama shape
    # passes it through too (a real Ollama server cuts the prompt to its num_ctx instead).
    with ProviderProxy(shape) as proxy:
        with pytest.raises(openai.BadRequestError) as refused:
            proxy.client().chat.completions.create(
                model="teaching-model-8k", messages=[{"role": "user", "content": "word " * 9_000}])
    assert refused.value.code == "context_length_exceeded"
    assert refused.value.body["message"].startswith("This model's maximum context length is 8192 tokens.")


def test_environment_points_the_course_at_the_proxy():
    with ProviderProxy("openai") as proxy:
        env = proxy.environment()
    assert env["COURSE_LLM_BASE_URL"] == proxy.base_url
    assert env["COURSE_LLM_API_KEY"] and env["COURSE_LLM_MODEL"] == "openai-shaped-model"


def test_unknown_shape_is_refused():
    with pytest.raises(ValueError, match="anthropic"):
        ProviderProxy("anthropic")
    with pytest.raises(ValueError, match="ollama, deepseek, openai"):
        reshape({"usage": {}}, "anthropic")


def test_the_deepseek_shape_caches_in_64_token_units():
    with ProviderProxy("deepseek") as proxy:
        assert (proxy.upstream.model.cache.block, proxy.upstream.model.cache.minimum) == (64, 64)
        client = proxy.client()
        short = [{"role": "system", "content": "Answer from the documents only. " * 40},
                 {"role": "user", "content": "What does the cache keep?"}]
        first, second = (client.chat.completions.create(model="m", messages=short) for _ in range(2))
    usage = read_usage(second.usage)
    assert 64 <= usage.cached < 1024 and usage.cached % 64 == 0  # OpenAI's rules would say 0


@pytest.mark.parametrize("shape", SHAPES)
def test_a_reasoning_model_through_each_shape(shape):
    """DeepSeek's reasoner sends reasoning_content and usage.completion_tokens_details.
    reasoning_tokens; OpenAI's Chat Completions keeps the count and never the text."""
    with ProviderProxy(shape) as proxy:
        completion = proxy.client().chat.completions.create(
            model="teaching-reasoner-strip", messages=[{"role": "user", "content": "Hello"}])
    message = completion.choices[0].message.model_dump()
    raw = completion.usage.model_dump(exclude_none=True)
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens")
    assert ("reasoning_content" in message) == (shape != "openai")
    if shape == "deepseek":
        assert set(raw["completion_tokens_details"]) == {"reasoning_tokens"} and reasoning > 0
        assert message["reasoning_content"].startswith("validation: ")
    assert (reasoning is None) == (shape == "ollama")
    assert read_usage(completion.usage).completion == completion.usage.completion_tokens > (reasoning or 0)
    assert read_usage(completion.usage).reasoning == reasoning  # None where not reported (ollama)


def test_the_responses_api_is_openais_alone(proxy):
    client = proxy.client()
    if proxy.shape != "openai":
        with pytest.raises(openai.NotFoundError):
            client.responses.create(model="m", input="What does the cache keep?")
        return
    first = client.responses.create(model="m", instructions=LONG[0]["content"], input=LONG[1]["content"])
    again = client.responses.create(model="m", instructions=LONG[0]["content"], input=LONG[1]["content"])
    assert "teaching_trace" not in (first.model_extra or {})
    usage = read_usage(again.usage)
    assert usage.provider_shape == "openai" and usage.prompt == first.usage.input_tokens > 1024
    assert 0 < usage.cached <= usage.prompt
    counted = client.responses.input_tokens.count(model="m", instructions=LONG[0]["content"],
                                                  input=LONG[1]["content"])
    assert counted.input_tokens == first.usage.input_tokens
    assert client.responses.retrieve(first.id).id == first.id
    client.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)


def test_a_streamed_reply_is_relayed_in_the_shape(proxy):
    client = proxy.client()
    stream = client.chat.completions.create(model="m", messages=LONG, stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    whole = client.chat.completions.create(model="m", messages=LONG)
    assert text == whole.choices[0].message.content
    assert not any("teaching_trace" in (c.model_extra or {}) for c in chunks)
    usage = read_usage(chunks[-1].usage)
    expected_shape = {"ollama": "plain", "deepseek": "deepseek", "openai": "openai"}[proxy.shape]
    assert usage.provider_shape == expected_shape and usage.prompt == whole.usage.prompt_tokens


def test_the_openai_shape_streams_no_reasoning_text_and_deepseeks_does():
    said = {}
    for shape in ("openai", "deepseek"):
        with ProviderProxy(shape) as proxy:
            stream = proxy.client().chat.completions.create(
                model="teaching-reasoner-strip", stream=True,
                messages=[{"role": "user", "content": "What is 2 + 2?"}])
            said[shape] = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                                  for c in stream if c.choices)
    assert said["deepseek"] and not said["openai"]
