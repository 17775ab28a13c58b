"""The course's server for the local model, against the real SmolLM2-135M, through the openai SDK:
replies, streams, usage with the engine's cached tokens, timings, 400s, and its lifetime.

Every request is small (a few tokens out, temperature 0: greedy, the same reply every run).
Timings are wall-clock figures of this machine: their presence and consistency are checked,
never their size.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import openai
import pytest

from course.paths import REPO_ROOT

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
SYSTEM = ("You are a helpful assistant for a small bookshop. Answer in one short sentence. "
          "The shop opens at nine and closes at six, every day but Sunday.")
TIMINGS = {"prompt_n", "cache_n", "prompt_ms", "prompt_per_second", "predicted_n",
           "predicted_ms", "predicted_per_second", "ttft_ms"}


def ask(client, model, messages=QUESTION, **kwargs):
    kwargs.setdefault("max_tokens", 8)
    return client.chat.completions.create(model=model, messages=messages, temperature=0, **kwargs)


def prompt_ids(server, messages) -> list[int]:
    """The prompt's tokens as the engine reads them: the GGUF's template, the model's tokenizer."""
    return server.engine.tokenize(server.engine.render(messages))


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_a_reply_from_the_real_model(local, local_client):
    reply = ask(local_client, local.model_name)
    text = reply.choices[0].message.content
    assert isinstance(text, str) and text.strip(), reply
    assert reply.model == local.model_name == "SmolLM2-135M-Instruct.Q4_1"
    assert reply.choices[0].finish_reason in ("stop", "length")
    usage = reply.usage
    assert usage.prompt_tokens == len(prompt_ids(local, QUESTION))
    assert 0 < usage.completion_tokens <= 8
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_the_prompt_is_the_ggufs_chat_template(local):
    prompt = local.engine.render(QUESTION)
    # SmolLM2's template: ChatML, with a default system message when none is given
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")
    assert "<|im_start|>user\nWhat is the capital of France?<|im_end|>" in prompt
    assert local.engine.tokenize("<|im_start|>") == [local.engine.tokenize("<|im_start|>")[0]], \
        "a special token is one token"


def test_temperature_0_gives_the_same_reply_every_time(local, local_client):
    first = ask(local_client, local.model_name).choices[0].message.content
    local.engine.forget()
    assert ask(local_client, local.model_name).choices[0].message.content == first


def test_streamed_deltas_add_up_to_the_whole_reply(local, local_client):
    whole = ask(local_client, local.model_name, max_tokens=12)
    local.engine.forget()  # the same cache state as the reply sent whole
    chunks = list(ask(local_client, local.model_name, max_tokens=12, stream=True,
                      stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1, \
        "the reply arrives in pieces"
    *body, last = chunks
    assert last.choices == [] and last.usage is not None
    assert all(c.usage is None for c in body), "usage only on the last chunk"
    assert last.usage.model_dump() == whole.usage.model_dump()
    finish = [c for c in body if c.choices[0].finish_reason]
    assert len(finish) == 1 and finish[0].choices[0].finish_reason == whole.choices[0].finish_reason
    assert set(finish[0].model_extra["timings"]) == TIMINGS


def test_without_include_usage_no_chunk_has_usage(local, local_client):
    chunks = list(ask(local_client, local.model_name, max_tokens=4, stream=True))
    assert chunks and all(c.choices for c in chunks)
    assert all(c.usage is None and "usage" not in c.model_dump(exclude_unset=True) for c in chunks)


def test_cached_tokens_are_the_engines_prefix_match(local, local_client):
    first_ask = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "When do you open?"}]
    second_ask = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Are you open on Sunday?"}]
    cold = ask(local_client, local.model_name, first_ask, max_tokens=4)
    assert cold.usage.prompt_tokens_details.cached_tokens == 0, "an empty cache holds nothing"
    again = ask(local_client, local.model_name, first_ask, max_tokens=4)
    # The whole prompt is in the cache; llama-cpp-python evaluates its last token again, to get
    # fresh logits to sample from (Llama.generate: "replay one token").
    assert again.usage.prompt_tokens_details.cached_tokens == again.usage.prompt_tokens - 1
    new_question = ask(local_client, local.model_name, second_ask, max_tokens=4)
    shared = common_prefix(prompt_ids(local, first_ask), prompt_ids(local, second_ask))
    assert shared > len(local.engine.tokenize(SYSTEM)), "the system prompt is shared"
    assert new_question.usage.prompt_tokens_details.cached_tokens == shared
    timings = new_question.model_extra["timings"]
    assert timings["cache_n"] == shared
    assert timings["prompt_n"] == new_question.usage.prompt_tokens - shared, "only the rest is evaluated"


@pytest.mark.parametrize("stream", [False, True])
def test_a_requests_prompt_is_tokenized_once(local, local_client, monkeypatch, stream):
    """The window check and the generation read the same tokens: the model's tokenizer runs
    once on a request's prompt, not once for each (counted, not timed)."""
    model = local.engine.llama._model  # what Llama.tokenize ends in (llama_cpp's LlamaTokenizer)
    calls = []

    def counted(text, *args, _tokenize=model.tokenize, **kwargs):
        calls.append(text)
        return _tokenize(text, *args, **kwargs)

    monkeypatch.setattr(model, "tokenize", counted)
    for question in ("When do you open?", "Are you open on Sunday?"):
        asked = [{"role": "system", "content": f"{SYSTEM} (streamed: {stream})"},
                 {"role": "user", "content": question}]
        reply = ask(local_client, local.model_name, asked, max_tokens=2, stream=stream)
        if stream:
            list(reply)
        prompt = local.engine.render(asked).encode()
        assert calls.count(prompt) == 1, f"the prompt was tokenized {calls.count(prompt)} times"


def test_a_change_at_the_top_of_the_prompt_misses_the_cache(local, local_client):
    asked = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "When do you open?"}]
    ask(local_client, local.model_name, asked, max_tokens=4)
    changed = [{"role": "system", "content": "Current time: 10:42. " + SYSTEM}, asked[1]]
    reply = ask(local_client, local.model_name, changed, max_tokens=4)
    shared = common_prefix(prompt_ids(local, asked), prompt_ids(local, changed))
    assert reply.usage.prompt_tokens_details.cached_tokens == shared
    assert shared < 5, "only the template's opening tokens are still shared"


def test_timings_are_reported_and_add_up(local, local_client):
    reply = ask(local_client, local.model_name, max_tokens=6)
    timings = reply.model_extra["timings"]
    assert set(timings) == TIMINGS
    assert timings["prompt_n"] + timings["cache_n"] == reply.usage.prompt_tokens
    assert timings["predicted_n"] == reply.usage.completion_tokens
    assert all(timings[k] >= 0 for k in ("prompt_ms", "predicted_ms", "ttft_ms"))
    assert timings["ttft_ms"] >= timings["prompt_ms"], "the first token comes after the prefill"


@pytest.mark.parametrize("bad, param", [
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
    ({"temperature": 3}, "temperature"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"n": 2}, "n"),
    ({"logprobs": True}, "logprobs"),
    ({"stop": 7}, "stop"),
    ({"stream": False, "stream_options": {"include_usage": True}}, "stream_options"),
])
def test_a_bad_request_gets_a_400_naming_the_field(local, local_client, bad, param):
    request = {"model": local.model_name, "messages": QUESTION, "max_tokens": 4, **bad}
    with pytest.raises(openai.BadRequestError) as caught:
        local_client.chat.completions.create(**request)
    assert caught.value.body["param"] == param, caught.value.body


def test_a_streamed_request_is_refused_before_any_event(local, local_client):
    with pytest.raises(openai.BadRequestError) as caught:
        local_client.chat.completions.create(model=local.model_name, messages=QUESTION,
                                             stream=True, temperature=5)
    assert caught.value.body["param"] == "temperature"


def test_over_the_window_is_openais_400(local, local_client):
    long = [{"role": "user", "content": "word " * 9000}]
    with pytest.raises(openai.BadRequestError) as caught:
        ask(local_client, local.model_name, long)
    assert caught.value.body["code"] == "context_length_exceeded"
    assert "maximum context length is 8192 tokens" in caught.value.body["message"]
    fits = [{"role": "user", "content": "word " * 8000}]
    with pytest.raises(openai.BadRequestError) as caught:
        ask(local_client, local.model_name, fits, max_tokens=1000)  # prompt fits, reply does not
    assert caught.value.body["code"] == "context_length_exceeded"
    assert "in the completion" in caught.value.body["message"]


def test_tool_calls_in_the_history_are_written_for_a_template_without_them(local, local_client):
    # SmolLM2's template concatenates content, null in an assistant message of tool calls: the
    # calls are written into it as JSON, so the model reads what was called
    calls = [{"role": "user", "content": "Weather in Oslo?"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function",
                  "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "sunny, 14 C"}]
    reply = ask(local_client, local.model_name, calls, max_tokens=4)
    assert reply.choices[0].message.content is not None
    prompt = local.engine.render(local.engine._arguments(
        {"model": local.model_name, "messages": calls})["messages"])
    assert ('<|im_start|>assistant\n{"tool_calls": [{"name": "get_weather", "arguments": '
            '{"city": "Oslo"}, "id": "c1"}]}<|im_end|>') in prompt
    assert "<|im_start|>tool\nsunny, 14 C<|im_end|>" in prompt
    assert reply.usage.prompt_tokens == len(local.engine.tokenize(prompt))


def test_a_template_that_cannot_render_the_messages_is_a_400(local, local_client, monkeypatch):
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    refusing = Jinja2ChatFormatter("{{ raise_exception('this template reads one user message') }}",
                                   eos_token="", bos_token="")
    monkeypatch.setattr(local.engine, "formatter", refusing)
    with pytest.raises(openai.BadRequestError) as caught:
        ask(local_client, local.model_name)
    assert caught.value.body["code"] == "template_error"
    assert "this template reads one user message" in caught.value.body["message"]
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in caught.value.body["message"]


def test_content_parts_are_read_as_one_text(local, local_client):
    parts = [{"role": "user", "content": [{"type": "text", "text": "What is the capital "},
                                          {"type": "text", "text": "of France?"}]}]
    reply = ask(local_client, local.model_name, parts)
    assert reply.usage.prompt_tokens == len(prompt_ids(local, QUESTION))
    local.engine.forget()
    assert reply.choices[0].message.content == ask(local_client, local.model_name).choices[0].message.content


def test_models_health_and_unknown_paths(local):
    def get(path):
        try:
            with urllib.request.urlopen(local.base_url.removesuffix("/v1") + path) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    status, models = get("/v1/models")
    assert status == 200 and models["data"] == [
        {"id": local.model_name, "object": "model", "created": 0, "owned_by": "local",
         "context_window": 8192}]
    assert get("/health") == (200, {"status": "ok", "model": local.model_name})
    status, error = get("/v1/nowhere")
    assert status == 404 and error["error"]["code"] == "unknown_url"
    request = urllib.request.Request(local.base_url + "/responses", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request)
    assert caught.value.code == 404
    assert "the local model serves POST /v1/chat/completions" in json.loads(caught.value.read())["error"]["message"]


def test_requests_at_the_same_time_are_answered_one_after_the_other(local, local_client):
    replies, errors = [], []

    def one():
        try:
            replies.append(ask(local_client, local.model_name, max_tokens=4).choices[0].message.content)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(replies) == 3 and len(set(replies)) == 1


def _refused(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_stop_frees_the_port(local_server):
    import course.local_model

    server = course.local_model.serve()
    port = server.port
    assert not _refused(port)
    server.stop()
    assert _refused(port)


EXITING = """
import atexit, socket
import course.llm

def closed_at_exit():  # registered first, so it runs after the server's own atexit stop
    with socket.socket() as sock:
        print("port closed at exit:", sock.connect_ex(("127.0.0.1", port)) != 0, flush=True)

atexit.register(closed_at_exit)
client, name = course.llm.client(), course.llm.model_name()
from course.local_model import default_server
port = default_server().port
assert default_server() is default_server(), "one server per process"
reply = client.chat.completions.create(model=name, max_tokens=2,
                                       messages=[{"role": "user", "content": "Hi"}])
print("model:", reply.model, flush=True)
"""


def test_the_default_server_stops_with_its_process(local_server):
    """A kernel's server: started on first use of course.llm with COURSE_MODEL=local, stopped
    (its port closed, the model freed) when the process exits, with no error on the way out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_LLM_")}
    done = subprocess.run([sys.executable, "-c", EXITING], cwd=REPO_ROOT, capture_output=True,
                          text=True, env={**env, "COURSE_MODEL": "local"}, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["model: SmolLM2-135M-Instruct.Q4_1",
                                        "port closed at exit: True"], done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr, done.stderr


def test_an_omitted_max_tokens_is_the_engines_default(local):
    from course.local_model.engine import DEFAULT_MAX_TOKENS

    body = {"model": local.model_name, "messages": QUESTION}
    assert local.engine._arguments(body)["max_tokens"] == DEFAULT_MAX_TOKENS == 256
    assert local.engine._arguments({**body, "max_tokens": 9})["max_tokens"] == 9
    assert local.engine._arguments({**body, "max_completion_tokens": 7})["max_tokens"] == 7


def test_a_failure_after_the_stream_began_ends_it_with_an_error_event(local, local_client, monkeypatch):
    def failing(**kwargs):
        raise RuntimeError("the engine broke")
        yield  # a generator, as the binding's stream is

    monkeypatch.setattr(local.engine.llama, "create_chat_completion", failing)
    with pytest.raises(openai.APIError, match="the engine broke"):
        list(ask(local_client, local.model_name, stream=True))
    monkeypatch.undo()
    assert ask(local_client, local.model_name, max_tokens=2).choices[0].message.content is not None, \
        "the server still answers"
