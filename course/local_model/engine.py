"""The local model's engine: a GGUF file run by `llama_cpp.Llama`, answering chat-completion
request bodies with the usage a provider reports, cached tokens included, and its timings.

`Llama.create_chat_completion` does the work (the chat template from the GGUF through Llama's own
chat handler, sampling, stop tokens, tool choice by grammar); this module adds what the binding's
own server leaves out:

- **cached tokens**, read from the engine's own prefix match: `Llama.generate` compares the new
  prompt's tokens with those in its KV cache and evaluates only the rest. `_MeteredLlama` reads
  `n_tokens` at that moment (its first `eval` of the request), so `cached_tokens` is exactly the
  number of prompt tokens the engine did not evaluate again. One KV cache, one sequence: a
  request whose prompt shares no prefix with the previous one starts cold.
- **timings**, named as llama.cpp's `llama-server` names them: `prompt_n` prompt tokens
  evaluated, `cache_n` taken from the cache, `prompt_ms` the prefill (until the first token is
  sampled), `predicted_n` tokens generated, `predicted_ms` from the first generated token to the
  last, `prompt_per_second` and `predicted_per_second` (the tokens after the first over
  `predicted_ms`: one decode step each), and `ttft_ms`, from the request reaching the engine to
  its first token (waiting for an earlier request included). Wall-clock figures of this machine.
- **tool calls in the history for a template without them** (SmolLM2's has no place for
  `tool_calls` and concatenates `content`, which is null there): the calls are written into the
  assistant message's content as JSON, `{"tool_calls": [{"name", "arguments", "id"}]}`, much as
  llama.cpp's own server does for such templates, so the model reads what was called; tool
  results are `tool` messages as usual. The tools' definitions are not shown to such a model
  (its template has no place for them either).
- **structured output**: OpenAI's `response_format` {"type": "json_schema", "json_schema":
  {"schema": ...}} becomes the binding's {"type": "json_object", "schema": ...}, so llama.cpp
  decodes under a grammar made from the schema: every reply is JSON the schema accepts (unless
  `max_tokens` cuts it). {"type": "json_object"} is any JSON object; another type is a 400.
- **OpenAI's rules where the binding is lenient**: the course's request validation
  (course/llm/validation.py) with HTTP 400s, a prompt over the window refused as OpenAI refuses
  it (`context_length_exceeded`) rather than cut, a template that cannot render the messages a
  400 instead of a crash, `logprobs` refused (the engine keeps no logits: `logits_all` off).
- **the course's defaults**: an omitted temperature is 0 (greedy: the same reply every run, as
  the teaching model), top_p 1, and no top-k or min-p (OpenAI's API has neither). An omitted
  `max_tokens` is DEFAULT_MAX_TOKENS, not the rest of the window as OpenAI's is: a small model
  at temperature 0 often repeats itself until it is stopped, and 8,000 tokens decoded on a
  laptop's CPU take minutes (the reply then ends with `finish_reason` "length").

One request at a time: Llama is not thread-safe and has one KV cache, so a lock serialises them.
"""
from __future__ import annotations

import json
import os
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from course.llm.validation import RequestError, expect_type, validate_request

DEFAULT_MAX_TOKENS = 256  # an omitted max_tokens (see the module's docstring)
DEFAULT_CONTEXT = 8192  # tokens: SmolLM2 was trained on 8,192; a bigger model gets this window too
STREAM_ERROR_TYPE = "server_error"


@dataclass
class Meter:
    """What one generation did, read while it ran (perf_counter seconds)."""

    prompt_tokens: int
    started: float = field(default_factory=time.perf_counter)
    cached: int = 0           # prompt tokens the engine kept from its KV cache
    evaluated: int = 0        # prompt tokens it evaluated (prefill)
    first_sample: float | None = None   # any first token, an end-of-generation one included
    first: float | None = None          # the first and last generated (non-end) tokens
    last: float | None = None
    completion: int = 0

    def sampled(self, end: bool) -> None:
        now = time.perf_counter()
        if self.first_sample is None:
            self.first_sample = now
        if end:
            return
        self.first = self.first if self.first is not None else now
        self.last = now
        self.completion += 1

    def timings(self, arrived: float) -> dict:
        """llama-server's `timings` (see the module's docstring), in milliseconds."""
        done = self.first_sample if self.first_sample is not None else time.perf_counter()
        prompt_ms = (done - self.started) * 1000
        predicted_ms = ((self.last - self.first) * 1000) if self.first is not None else 0.0
        return {
            "prompt_n": self.evaluated, "cache_n": self.cached,
            "prompt_ms": round(prompt_ms, 3),
            "prompt_per_second": round(self.evaluated / prompt_ms * 1000, 2) if prompt_ms else None,
            "predicted_n": self.completion, "predicted_ms": round(predicted_ms, 3),
            "predicted_per_second": (round((self.completion - 1) / predicted_ms * 1000, 2)
                                     if predicted_ms else None),
            "ttft_ms": round((done - arrived) * 1000, 3),
        }

    def usage(self) -> dict:
        """OpenAI's usage shape, `prompt_tokens_details.cached_tokens` from the engine."""
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion,
                "total_tokens": self.prompt_tokens + self.completion,
                "prompt_tokens_details": {"cached_tokens": self.cached},
                "completion_tokens_details": {"reasoning_tokens": 0}}


def _metered_llama(llama_cpp):
    """`llama_cpp.Llama` with a `Meter` of its last `generate` (the class is made once the
    binding is imported: importing this module must not need it)."""

    class _MeteredLlama(llama_cpp.Llama):
        meter: Meter | None = None
        _reading_prefix = False
        _last_tokenized: tuple | None = None  # ((text, add_bos, special), its tokens)

        def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False):
            # A request's prompt is tokenized for the window check, then again by the chat
            # handler (the same text, rendered by the same template): the second time takes
            # the first's tokens (3 ms for 2,000 tokens here, 10 under load). Keyed on the
            # exact text, so another text is always tokenized.
            key, last = (text, add_bos, special), self._last_tokenized
            if last is None or last[0] != key:
                last = self._last_tokenized = key, super().tokenize(text, add_bos, special)
            return list(last[1])

        def generate(self, tokens, *args, **kwargs):
            meter = self.meter = Meter(prompt_tokens=len(tokens))
            self._reading_prefix = True
            inner = super().generate(tokens, *args, **kwargs)
            try:
                for token in inner:
                    meter.sampled(end=llama_cpp.llama_vocab_is_eog(self._model.vocab, token))
                    yield token
            finally:
                inner.close()

        def eval(self, tokens):
            # The first eval of a request comes right after generate's prefix match: n_tokens
            # is then the number of prompt tokens kept in the KV cache.
            if self._reading_prefix:
                self._reading_prefix = False
                self.meter.cached, self.meter.evaluated = self.n_tokens, len(tokens)
            return super().eval(tokens)

    return _MeteredLlama


class Engine:
    """One GGUF model loaded with llama_cpp; `complete(body)` and `stream(body)` answer
    chat-completion request bodies (RequestError, HTTP 4xx, for a bad one)."""

    def __init__(self, path: str | Path, context: int | None = None, threads: int | None = None):
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.path = Path(path)
        self.name = self.path.name.removesuffix(".gguf")
        # As many threads for a prompt batch as for decoding (the binding's default puts a batch
        # on every core, with threads that spin while they wait for each other: on a busy 2-core
        # machine a 204-token prompt took 89.6 s so, 11.1 s on one thread; lesson_support/
        # real_model/weights.py measured it).
        threads = threads or max((os.cpu_count() or 2) // 2, 1)
        self.llama = _metered_llama(llama_cpp)(
            model_path=str(self.path), n_ctx=context or DEFAULT_CONTEXT, n_threads=threads,
            n_threads_batch=threads, logits_all=False, chat_format="chat_template.default",
            verbose=False)
        # Freed when the engine goes, or at exit while the binding's C library is still loaded
        # (left to Llama.__del__ at interpreter shutdown it raises "'NoneType' object is not
        # callable" in free_model).
        weakref.finalize(self, self.llama.close)
        self.context_window = self.llama.n_ctx()
        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"{self.path} has no chat template (tokenizer.chat_template): the "
                             f"local model needs an instruction-tuned GGUF that carries one")
        # The same formatter Llama made from the GGUF for its chat handler (llama.py, __init__):
        # the prompt is rendered here first to count it and refuse it before any work.
        model = self.llama._model
        eos, bos = model.token_eos(), model.token_bos()
        self.formatter = Jinja2ChatFormatter(
            template=template, eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "", stop_token_ids=[eos])
        self._lock = threading.Lock()

    # -- what lessons and measurements read directly ------------------------------------------
    def render(self, messages: list[dict], tools: list[dict] | None = None) -> str:
        """The prompt text the model reads for these messages: its chat template, special
        tokens written out."""
        return self.formatter(messages=messages, tools=tools).prompt

    def tokenize(self, text: str) -> list[int]:
        """The model's own token ids for `text` (special tokens such as <|im_start|> read as one)."""
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def forget(self) -> None:
        """Empty the KV cache: the next request is evaluated whole (a cold start)."""
        with self._lock:
            self.llama.reset()

    def close(self) -> None:
        with self._lock:
            self.llama.close()

    # -- requests -------------------------------------------------------------------------------
    def complete(self, body) -> dict:
        """The chat completion for `body` (not streamed), with usage and timings."""
        arrived = time.perf_counter()
        kwargs = self._arguments(body)
        with self._lock:
            result = self.llama.create_chat_completion(**kwargs)
            meter = self.llama.meter
        result.update(model=self.name, system_fingerprint=f"local:{self.name}",
                      usage=meter.usage(), timings=meter.timings(arrived))
        result["id"] = "chatcmpl-" + uuid.uuid4().hex[:24]
        return result

    def stream(self, body):
        """The chunks of the completion for `body`, as they are generated. Everything that can
        be refused is refused here, before the first chunk (RequestError), so a 4xx comes
        before any event; the generation starts when the first chunk is asked for. The chunk
        with a `finish_reason` carries `timings`; with `stream_options.include_usage` a final
        chunk carries the usage (and every earlier one `"usage": null`). An error after the
        first chunk ends the stream with an `{"error": ...}` event, as OpenAI's stream does."""
        arrived = time.perf_counter()
        kwargs = self._arguments(body)
        return self._chunks(kwargs, arrived, bool((body.get("stream_options") or {}).get("include_usage")))

    def _chunks(self, kwargs: dict, arrived: float, with_usage: bool):
        chunk_id = "chatcmpl-" + uuid.uuid4().hex[:24]
        with self._lock:
            chunks = self.llama.create_chat_completion(stream=True, **kwargs)
            try:
                last = None
                for chunk in chunks:
                    chunk.update(id=chunk_id, model=self.name,
                                 system_fingerprint=f"local:{self.name}")
                    if with_usage:
                        chunk["usage"] = None
                    if chunk["choices"] and chunk["choices"][0].get("finish_reason"):
                        chunk["timings"] = self.llama.meter.timings(arrived)
                    last = chunk
                    yield chunk
                if with_usage and last is not None:
                    yield {**{k: last[k] for k in ("id", "object", "created", "model",
                                                   "system_fingerprint")},
                           "choices": [], "usage": self.llama.meter.usage()}
            except Exception as exc:  # the response has begun: say so in the stream
                yield {"error": {"message": f"The local model failed while generating: "
                                            f"{type(exc).__name__}: {exc}",
                                 "type": STREAM_ERROR_TYPE, "param": None, "code": "internal_error"}}
            finally:
                chunks.close()

    def _arguments(self, body) -> dict:
        """create_chat_completion's arguments for a request body, or RequestError."""
        if isinstance(body, dict) and body.get("n") not in (None, 1):
            raise RequestError("The local model returns one choice: 'n' must be 1.", "n",
                               "unsupported_value")
        validate_request(body)
        for key in ("logprobs", "top_logprobs"):
            if body.get(key):
                raise RequestError(f"'{key}' is not available from the local model: it keeps no "
                                   f"logits (logits_all is off, to save memory).", key,
                                   "unsupported_parameter")
        stop = body.get("stop")
        if stop is not None and not (isinstance(stop, str) or (
                isinstance(stop, list) and all(isinstance(s, str) for s in stop))):
            raise RequestError("Invalid type for 'stop': expected a string or an array of "
                               "strings.", "stop", "invalid_type")
        for key in ("presence_penalty", "frequency_penalty"):
            if body.get(key) is not None:
                expect_type(body[key], (int, float), key, "a number")
        native = "tool_calls" in self.formatter.template  # the template renders calls itself
        messages = [_plain(m, native) for m in body["messages"]]
        tools = body.get("tools")
        asked = body.get("max_completion_tokens") or body.get("max_tokens")
        self._check_window(messages, tools, asked)
        max_tokens = asked or DEFAULT_MAX_TOKENS  # the window check above counts only what is asked
        kwargs = {"messages": messages, "tools": tools, "tool_choice": body.get("tool_choice"),
                  "temperature": body.get("temperature") or 0.0,
                  "top_p": 1.0 if body.get("top_p") is None else body["top_p"],
                  "top_k": 0, "min_p": 0.0, "seed": body.get("seed"), "max_tokens": max_tokens,
                  "stop": stop}
        for key in ("presence_penalty", "frequency_penalty"):
            if body.get(key) is not None:
                kwargs[key] = float(body[key])
        if body.get("response_format") is not None:
            kwargs["response_format"] = _response_format(body["response_format"])
        return kwargs

    def _check_window(self, messages, tools, max_tokens) -> None:
        try:
            prompt = self.render(messages, tools)
        except Exception as exc:  # a Jinja error, or the template's own raise_exception
            raise RequestError(f"The model's chat template (from {self.path.name}) cannot render "
                               f"these messages: {type(exc).__name__}: {exc}", "messages",
                               "template_error") from None
        with self._lock:
            size = len(self.tokenize(prompt))
        window = self.context_window
        if size >= window or (max_tokens is not None and size + max_tokens > window):
            asked = (f"you requested {size + max_tokens} tokens ({size} in the messages, "
                     f"{max_tokens} in the completion)" if max_tokens is not None and size < window
                     else f"your messages resulted in {size} tokens")
            raise RequestError(f"This model's maximum context length is {window} tokens. "
                               f"However, {asked}. Please reduce the length of the messages"
                               f"{' or completion' if max_tokens is not None else ''}.",
                               "messages", "context_length_exceeded")


def _response_format(wanted) -> dict | None:
    """OpenAI's response_format as the binding's (see the module's docstring), or RequestError."""
    expect_type(wanted, (dict,), "response_format", "an object")
    kind = wanted.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind == "json_schema":
        schema = (wanted.get("json_schema") or {}).get("schema") if isinstance(wanted.get("json_schema"), dict) else None
        if not isinstance(schema, dict):
            raise RequestError("Invalid 'response_format.json_schema': it must be an object with a "
                               "'schema' object.", "response_format.json_schema", "invalid_value")
        return {"type": "json_object", "schema": schema}
    raise RequestError(f"Invalid value for 'response_format.type': {kind!r}; supported values are "
                       f"'text', 'json_object' and 'json_schema'.", "response_format.type", "invalid_value")


def _plain(message: dict, native_tool_calls: bool) -> dict:
    """A message as a chat template reads it: content parts joined into one string (OpenAI
    reads text parts in order, as one text); for a template that cannot render tool calls,
    the calls written into the content as JSON (see the module's docstring)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part["text"] for part in content)
    if message.get("tool_calls") and not native_tool_calls:
        calls = [{"name": call["function"]["name"],
                  "arguments": _json_or_text(call["function"]["arguments"]), "id": call["id"]}
                 for call in message["tool_calls"]]
        content = (content or "") + json.dumps({"tool_calls": calls}, ensure_ascii=False)
    return {**message, "content": content if content is not None or native_tool_calls else ""}


def _json_or_text(arguments: str):
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments
