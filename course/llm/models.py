"""The teaching model's names, and what each name is: its context window and, for the
reasoning models, the history policy it follows.

A real provider serves several models, and each has a context window: the most tokens one
request may hold, the prompt and the reply together. The teaching model does the same, one
entry per name (`GET /v1/models` lists them):

    name                 context window   what it is for
    teaching-model       1,048,576        the default: every lesson's requests fit
    teaching-model-8k    8,192            a small window, to see the 400 without sending much
    teaching-model-32k   32,768           a real model's window (many open models serve 32K):
                                          lesson 11 sends its uncompacted run to it

The reasoning models (course/llm/reasoning.py) reply with `reasoning_content` first, and each
follows one family's rule for the reasoning of earlier turns, its history policy:

    name                               context window   history policy   as
    teaching-reasoner-strip            131,072          strip            DeepSeek R1
    teaching-reasoner-pass-back        131,072          pass_back        DeepSeek V4, Kimi K2, GLM-5
    teaching-reasoner-since-last-user  131,072          since_last_user  Qwen3's template

They decide as teaching-model does: the same rules, the same calls and text; only the reasoning,
the prompt's rendering of earlier reasoning and the 400s of their policy differ.
`GET /v1/models` lists every name with `context_window` and, for a reasoning model,
`history_policy`, so a notebook can pick a model by what it does.

Any other model name is served as `teaching-model` (the lessons' private servers, the test
proxies and curl examples send names of their own). A name with other properties is one more
`ModelSpec` here.

Over the window the answer is OpenAI's, HTTP 400:

    {"error": {"message": "This model's maximum context length is 8192 tokens. However, your
               messages resulted in 9000 tokens. Please reduce the length of the messages.",
               "type": "invalid_request_error", "param": "messages",
               "code": "context_length_exceeded"}}

With `max_tokens` (or `max_completion_tokens`) the reply's room counts too, as OpenAI counts
it: a prompt that fits, plus a `max_tokens` that does not, is refused the same way ("you
requested T tokens (P in the messages, C in the completion)"). Without it, a reply longer than
the room the prompt leaves is cut there (`finish_reason` "length"). A request of more than
EXACT_UP_TO_BYTES whose size alone proves it is over the window (`template.text_token_bounds`)
is refused without being tokenised; its message then says "at least".
"""
from __future__ import annotations

from dataclasses import dataclass

from course.llm.reasoning import PASS_BACK, SINCE_LAST_USER, STRIP
from course.llm.template import (pieces_byte_ceiling, pieces_token_floor, pieces_token_ids,
                                 render_pieces)
from course.llm.validation import RequestError

MODEL_NAME = "teaching-model"
SMALL_WINDOW_MODEL = "teaching-model-8k"
WINDOW_32K_MODEL = "teaching-model-32k"
REASONER = {STRIP: "teaching-reasoner-strip", PASS_BACK: "teaching-reasoner-pass-back",
            SINCE_LAST_USER: "teaching-reasoner-since-last-user"}  # by history policy
# Up to this size a request over the window is tokenised, so its 400 states its exact size
# (about 0.4 s of work at most); a larger one is refused from its size if that proves it over.
EXACT_UP_TO_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ModelSpec:
    name: str
    context_window: int  # tokens: the prompt and the reply together
    about: str
    reasoning: str | None = None  # a reasoning model's history policy (reasoning.POLICIES)


MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (
    ModelSpec(MODEL_NAME, 1_048_576, "the default: every lesson's requests fit"),
    ModelSpec(SMALL_WINDOW_MODEL, 8_192, "a small window, to see the 400 without sending much"),
    ModelSpec(WINDOW_32K_MODEL, 32_768, "a real model's window (many open models serve 32K): "
                                        "lesson 11 sends its uncompacted run to it"),
    ModelSpec(REASONER[STRIP], 131_072, "reasons; earlier reasoning stripped, sending it back "
                                        "is a 400 (DeepSeek R1)", STRIP),
    ModelSpec(REASONER[PASS_BACK], 131_072, "reasons; reasoning passed back, a tool-call message "
                                            "without it is a 400 (DeepSeek V4, Kimi K2, GLM-5)",
              PASS_BACK),
    ModelSpec(REASONER[SINCE_LAST_USER], 131_072, "reasons; reasoning kept since the last real "
                                                  "user message (Qwen3)", SINCE_LAST_USER),
)}


def model_spec(name: str) -> ModelSpec:
    """The entry for a model name; any name not listed is served as the default model."""
    return MODELS.get(name) or MODELS[MODEL_NAME]


def model_table() -> list[tuple[str, int, str]]:
    """(name, context window in tokens, what it is for) for every teaching-model name."""
    return [(spec.name, spec.context_window, spec.about) for spec in MODELS.values()]


def model_listing() -> dict:
    """`GET /v1/models`: every teaching model name, with its context window and, for a reasoning
    model, its history policy as extra fields."""
    return {"object": "list", "data": [
        {"id": spec.name, "object": "model", "created": 0, "owned_by": "course",
         "context_window": spec.context_window,
         **({"history_policy": spec.reasoning} if spec.reasoning else {})}
        for spec in MODELS.values()]}


def _too_long(spec: ModelSpec, prompt: int, completion: int | None, at_least: bool) -> RequestError:
    size = f"at least {prompt}" if at_least else str(prompt)
    if completion is None:
        said = (f"However, your messages resulted in {size} tokens. Please reduce the length of "
                f"the messages.")
    else:
        total = f"at least {prompt + completion}" if at_least else str(prompt + completion)
        said = (f"However, you requested {total} tokens ({size} in the messages, {completion} in "
                f"the completion). Please reduce the length of the messages or completion.")
    return RequestError(f"This model's maximum context length is {spec.context_window} tokens. "
                        + said, "messages", "context_length_exceeded")


def prompt_in_window(spec: ModelSpec, messages: list, tools: list | None,
                     max_tokens: int | None) -> list[int]:
    """The prompt's token ids (rendered under the model's history policy, if it reasons), if the
    prompt (plus `max_tokens`, when given) fits the window; otherwise the 400 RequestError.
    Cheap bounds first: tokenising 25 million tokens to refuse them would take seconds."""
    pieces = render_pieces(messages, tools, spec.reasoning)
    room = spec.context_window - (max_tokens or 0)
    if pieces_byte_ceiling(pieces) > max(room, EXACT_UP_TO_BYTES):  # large: certainly over?
        floor = pieces_token_floor(pieces)
        if floor > room:
            raise _too_long(spec, floor, max_tokens, at_least=True)
    tokens = pieces_token_ids(pieces)
    if len(tokens) > room:
        raise _too_long(spec, len(tokens), max_tokens, at_least=False)
    return tokens
