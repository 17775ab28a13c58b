"""Each teaching-model name has a context window; a request over it gets OpenAI's HTTP 400."""
import json

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm import template
from course.llm.models import MODEL_NAME, MODELS, model_spec, model_table, prompt_in_window
from course.llm.server import TeachingModel
from course.llm.validation import RequestError
from tests.messages import user

SMALL = "teaching-model-8k"


def tokens_of(messages):
    return len(template.prompt_token_ids(messages))


def test_every_name_has_a_window_and_unknown_names_get_the_default():
    assert [row[0] for row in model_table()] == list(MODELS) and MODEL_NAME in MODELS
    assert all(window > 0 and about for _, window, about in model_table())
    assert model_spec(SMALL).context_window == 8_192
    assert model_spec("some-provider-model") is MODELS[MODEL_NAME]


def test_the_default_window_holds_every_lesson():
    # lesson 11's largest request (its "no compaction" peak) is 233,170 tokens
    assert MODELS[MODEL_NAME].context_window >= 4 * 233_170


def test_over_the_window_is_openais_400_through_the_sdk(client):
    messages = [user("word " * 9_000)]
    size = tokens_of(messages)
    assert size > 8_192
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=SMALL, messages=messages)
    error = caught.value
    assert error.status_code == 400 and error.code == "context_length_exceeded"
    assert error.body["type"] == "invalid_request_error" and error.body["param"] == "messages"
    assert error.body["message"] == (
        f"This model's maximum context length is 8192 tokens. However, your messages resulted "
        f"in {size} tokens. Please reduce the length of the messages.")
    # the same request fits the default window
    assert client.chat.completions.create(model=MODEL_NAME, messages=messages).usage.prompt_tokens == size


def test_max_tokens_counts_against_the_window(client):
    messages = [user("word " * 6_000)]
    size = tokens_of(messages)
    ok = client.chat.completions.create(model=SMALL, messages=messages, max_tokens=8_192 - size)
    assert ok.usage.prompt_tokens == size
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=SMALL, messages=messages, max_tokens=8_193 - size)
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.body["message"] == (
        f"This model's maximum context length is 8192 tokens. However, you requested 8193 tokens "
        f"({size} in the messages, {8_193 - size} in the completion). Please reduce the length "
        f"of the messages or completion.")


def test_a_reply_that_would_overflow_the_window_is_cut():
    model = TeachingModel()
    filler = "word " * 8_160
    body = {"model": SMALL, "messages": [user(filler + "\nHello")]}
    room = 8_192 - tokens_of(body["messages"])
    assert 0 < room < 100  # the default rule's reply repeats the request: longer than the room
    reply = model.complete(body)
    assert reply["choices"][0]["finish_reason"] == "length"
    assert reply["usage"]["completion_tokens"] == room
    assert reply["usage"]["total_tokens"] == 8_192
    assert any(step["rule"] == "context_window" for step in reply["teaching_trace"])


def test_the_list_of_models_says_each_window(server):
    import urllib.request

    with urllib.request.urlopen(f"{server.base_url}/models") as response:
        listed = json.loads(response.read())["data"]
    assert [(m["id"], m["context_window"]) for m in listed] == [
        (name, window) for name, window, _ in model_table()]


def test_25_million_tokens_are_refused_from_their_size_alone(monkeypatch):
    # Regression (issue 25 item 5): the teaching model answered 200 to 25 million tokens. The
    # refusal must not tokenise them: here tokenising fails the test.
    messages = [user("a " * 25_000_000)]
    monkeypatch.setattr(template, "pieces_token_ids",
                        lambda pieces: pytest.fail("tokenised a request its size proves over"))
    with pytest.raises(RequestError) as caught:
        TeachingModel().complete({"model": MODEL_NAME, "messages": messages})
    error = caught.value
    assert error.status == 400 and error.code == "context_length_exceeded"
    assert "maximum context length is 1048576 tokens" in error.message
    assert "resulted in at least 25000" in error.message  # the floor: 25,000,000 word starts


def test_a_large_request_its_size_cannot_prove_over_is_counted_and_fits():
    messages = [user("word " * 1_000_000)]  # past EXACT_UP_TO_BYTES, a million tokens
    pieces = template.render_pieces(messages)
    assert template.pieces_byte_ceiling(pieces) > model_spec(MODEL_NAME).context_window
    assert template.pieces_token_floor(pieces) < model_spec(MODEL_NAME).context_window
    tokens = prompt_in_window(model_spec(MODEL_NAME), messages, None, None)
    assert len(tokens) == tokens_of(messages) < model_spec(MODEL_NAME).context_window


def _vocabulary():
    enc = template.encoding()
    for rank in range(enc.n_vocab):
        if rank in enc._special_tokens.values():
            continue
        try:
            yield enc.decode_single_token_bytes(rank)
        except KeyError:
            continue


def test_the_vocabulary_facts_the_bounds_rest_on():
    space = template.ASCII_SPACE
    vocabulary = list(_vocabulary())
    assert min(map(len, vocabulary)) >= 1  # so a text has at most as many tokens as bytes
    assert [t for t in vocabulary if _crosses(t, space)] == []
    assert max(sum(b not in space for b in t) for t in vocabulary) == template.MAX_CORE_BYTES


def _crosses(token: bytes, space: bytes) -> bool:
    """A byte that is not white space, then white space, then a word-start character."""
    seen_core = seen_space = False
    for b in token:
        if b in space:
            seen_space = seen_core
        elif seen_space and b in template._WORD_START:
            return True
        else:
            seen_core, seen_space = True, False
    return False


texts = st.text(st.characters(codec="utf-8") | st.sampled_from(list(" \t\n\r/=-*.a1")), max_size=300)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(texts, min_size=1, max_size=4))
def test_the_bounds_hold_on_any_text(parts):
    text = "".join(parts)
    low, high = template.text_token_bounds(text)
    count = len(template.encoding().encode_ordinary(text))
    assert low <= count <= high


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.integers(0, 3_000), st.sampled_from(["a ", "word ", "----", "é ", "\n", "x"]),
       st.integers(0, 5_000) | st.none())
def test_refused_exactly_when_the_prompt_and_max_tokens_exceed_the_window(n, unit, asked):
    messages = [user(unit * n)]
    size = tokens_of(messages)
    fits = size + (asked or 0) <= 8_192
    try:
        tokens = prompt_in_window(model_spec(SMALL), messages, None, asked)
    except RequestError as exc:
        assert not fits and exc.code == "context_length_exceeded"
    else:
        assert fits and len(tokens) == size


def test_explain_says_why_a_request_was_refused(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=SMALL, messages=[user("word " * 9_000)])
    text = str(course.llm.explain(caught.value))
    assert "HTTP 400, code context_length_exceeded" in text and "context window" in text
    assert "8192 tokens" in text
