"""A local stand-in for three real providers, for testing lessons against their response shapes.

`ProviderProxy(shape)` serves OpenAI's `/v1/chat/completions` on 127.0.0.1, forwards each
request to a private teaching model and rewrites the answer the way one provider family would:

    shape     usage                                                  also
    ollama    prompt/completion/total only: no cache figures         does not check tool-call
                                                                     pairing: a broken history
                                                                     gets an ordinary reply
    deepseek  prompt_cache_hit_tokens / prompt_cache_miss_tokens     cache in 64-token units
              (no prompt_tokens_details)                             from 64 tokens on
    openai    prompt_tokens_details.cached_tokens kept               system_fingerprint set;
                                                                     `max_tokens` refused with a
                                                                     400, as by OpenAI's
                                                                     reasoning models; a broken
                                                                     history's 400 has code null

A reasoning model's reply (course/llm/reasoning.py: the teaching-reasoner-* names) keeps its
`reasoning_content` in the deepseek shape, with `completion_tokens_details.reasoning_tokens` in the
usage, as DeepSeek's reasoner answers; the openai shape drops the reasoning text and keeps the
count (OpenAI's Chat Completions never returns its models' reasoning); ollama keeps it as sent.

A streamed chat completion (`stream=True`) is relayed chunk by chunk, each reshaped the same way.
The Responses API (`/v1/responses`, `/compact`, `/input_tokens`, GET and DELETE of a stored
response) is served in the openai shape only, its usage as OpenAI's (`input_tokens`,
`input_tokens_details.cached_tokens`); the ollama and deepseek shapes answer it 404, as servers
without that API do.

No shape sends the teaching model's `teaching_trace` or `teaching_timing`: real providers have
no such fields. A
request over the context window of the model name it asks for (course/llm/models.py) gets the
teaching model's 400 `context_length_exceeded` in every shape: OpenAI's and DeepSeek's answer
(a real Ollama server cuts the prompt to its `num_ctx` instead, silently).
It imitates the shape of answers, not any provider's model, prices or limits.

Standard library only, like course/llm/server.py. `proxy.requests` counts the chat requests
it received, so a test can tell whether a lesson reached "the provider" at all, and
`proxy.request_times` when, so it can tell which notebook cell sent them.
"""
from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer

from course.llm.cache import PrefixCache
from course.llm.server import JsonHandler, ServerHandle, TeachingModel

SHAPES = ("ollama", "deepseek", "openai")
TEACHING_ONLY = ("teaching_trace", "teaching_timing")  # fields no real provider sends

# The teaching model's 400 codes for a broken tool-call history (course/llm/validation.py).
PAIRING_CODES = frozenset({"missing_tool_response", "orphan_tool_message",
                           "duplicate_tool_call_id"})

MAX_TOKENS_REFUSED = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
               "Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}

UNCHECKED_REPLY = "I have read the conversation. What should I do next?"


def _upstream_for(shape: str) -> ServerHandle:
    if shape == "deepseek":  # DeepSeek caches in 64-token units, nothing under 64 tokens
        return ServerHandle(model=TeachingModel(PrefixCache(block=64, minimum=64)))
    return ServerHandle()


def reshape(payload: dict, shape: str) -> dict:
    """A teaching model's chat completion rewritten into `shape` (a new dict)."""
    out = {k: v for k, v in payload.items() if k not in TEACHING_ONLY}
    usage = dict(out.get("usage") or {})
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    if shape == "ollama":
        out["system_fingerprint"] = "fp_ollama"
        out["usage"] = {k: usage[k] for k in ("prompt_tokens", "completion_tokens",
                                               "total_tokens") if k in usage}
    elif shape == "deepseek":
        out["system_fingerprint"] = "fp_deepseek_proxy"
        out["usage"] = {"prompt_tokens": usage.get("prompt_tokens", 0),
                        "completion_tokens": usage.get("completion_tokens", 0),
                        "total_tokens": usage.get("total_tokens", 0),
                        "prompt_cache_hit_tokens": cached,
                        "prompt_cache_miss_tokens": usage.get("prompt_tokens", 0) - cached}
        reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
        if reasoning:  # DeepSeek's reasoner reports it; its chat model sends no details
            out["usage"]["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    elif shape == "openai":
        out["system_fingerprint"] = "fp_openai_proxy"
        out["choices"] = [{**choice, "message": {k: v for k, v in choice["message"].items()
                                                 if k != "reasoning_content"}}
                          if "reasoning_content" in (choice.get("message") or {}) else choice
                          for choice in out.get("choices") or []]
    else:
        raise ValueError(f"unknown shape {shape!r}: expected one of {', '.join(SHAPES)}")
    return out


NO_RESPONSES_API = {"error": {"message": "Not Found: this server has no /v1/responses",
                               "type": "invalid_request_error", "param": None, "code": "not_found"}}


def is_responses_path(path: str) -> bool:
    return path.split("?")[0].removeprefix("/v1").startswith("/responses")


def reshape_chunk(chunk: dict, shape: str) -> dict:
    """A streamed chunk rewritten into `shape`: no teaching-model fields; the openai shape drops
    reasoning deltas; a usage chunk's usage as `reshape` writes it."""
    out = {k: v for k, v in chunk.items() if k not in TEACHING_ONLY}
    if shape == "openai":
        out["choices"] = [{**c, "delta": {k: v for k, v in (c.get("delta") or {}).items()
                                          if k != "reasoning_content"}}
                          for c in out.get("choices") or []]
    if out.get("usage"):
        out["usage"] = reshape({"usage": out["usage"], "choices": []}, shape)["usage"]
    return out


def unchecked_reply(body: dict, model: str) -> dict:
    """What a server that does not check pairing answers to a broken history: a plain reply."""
    from course.llm.template import completion_token_count, prompt_token_ids

    message = {"role": "assistant", "content": UNCHECKED_REPLY}
    try:
        prompt = len(prompt_token_ids(body.get("messages") or [], body.get("tools")))
    except Exception:  # a history too broken to render: a rough count is enough here
        prompt = len(json.dumps(body.get("messages"), ensure_ascii=False)) // 4
    completion = completion_token_count(message)
    return {"id": "chatcmpl-unchecked", "object": "chat.completion", "created": 0,
            "model": model, "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}


def without_code(payload: dict) -> dict:
    """A pairing 400 as OpenAI sends it: the message says what is wrong, `code` is null (the
    teaching model names the problem in `code` too; lessons must not rely on that)."""
    error = dict(payload.get("error") or {})
    error.update(code=None, type="invalid_request_error", param="messages")
    return {"error": error}


class _Handler(JsonHandler):
    proxy: "ProviderProxy"  # set on the subclass made per proxy

    def _upstream(self, method: str, raw: bytes | None) -> tuple[int, bytes]:
        """The private teaching model's answer to this request: (status, body bytes)."""
        url = self.proxy.upstream.base_url.removesuffix("/v1") + self.path
        request = urllib.request.Request(url, data=raw, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read() or b"{}"

    def _forward(self, method: str, raw: bytes | None) -> tuple[int, dict]:
        status, body = self._upstream(method, raw)
        return status, json.loads(body)

    def _responses(self, method: str, raw: bytes | None) -> None:
        """The Responses API: OpenAI's, as the teaching model serves it but without its trace;
        a 404 from the shapes whose providers do not have it."""
        if self.proxy.shape != "openai":
            self._send(404, NO_RESPONSES_API)
            return
        status, payload = self._forward(method, raw)
        if isinstance(payload, dict):
            payload = {k: v for k, v in payload.items() if k not in TEACHING_ONLY}
        self._send(status, payload)

    def do_GET(self):
        if is_responses_path(self.path):
            self._responses("GET", None)
            return
        self._send(*self._forward("GET", None))

    def do_DELETE(self):
        if is_responses_path(self.path):
            self._responses("DELETE", None)
            return
        self._send(*self._forward("DELETE", None))

    def _stream(self, raw: bytes, body: dict) -> None:
        """A streamed chat completion: the upstream's Server-Sent Events, each chunk reshaped as
        the provider would send it (a refusal is answered as an unstreamed one is)."""
        status, answer = self._upstream("POST", raw)
        if status != 200:
            self._reply(status, json.loads(answer), body)
            return
        events = [event[len("data: "):] for event in answer.decode("utf-8").split("\n\n")
                  if event.startswith("data: ")]
        self.send_events([reshape_chunk(json.loads(data), self.proxy.shape)
                          for data in events if data != "[DONE]"])

    def _reply(self, status: int, payload, body) -> None:
        """The upstream's answer as this provider would send it."""
        shape = self.proxy.shape
        code = (payload.get("error") or {}).get("code") if isinstance(payload, dict) else None
        if shape == "ollama" and status == 400 and code in PAIRING_CODES:
            self._send(200, unchecked_reply(body, body.get("model", "")))
        elif shape == "openai" and status == 400 and code in PAIRING_CODES:
            self._send(400, without_code(payload))
        elif status == 200:
            self._send(200, reshape(payload, shape))
        else:
            self._send(status, payload)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.proxy.count()
        if is_responses_path(self.path):
            self._responses("POST", raw)
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if self.proxy.shape == "openai" and isinstance(body, dict) and body.get("max_tokens") is not None:
            self._send(400, MAX_TOKENS_REFUSED)
        elif isinstance(body, dict) and body.get("stream") is True:
            self._stream(raw, body)
        else:
            self._reply(*self._forward("POST", raw), body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class ProviderProxy:
    """A provider-shaped endpoint in front of a private teaching model. A context manager."""

    def __init__(self, shape: str, host: str = "127.0.0.1", port: int = 0):
        if shape not in SHAPES:
            raise ValueError(f"unknown shape {shape!r}: expected one of {', '.join(SHAPES)}")
        self.shape = shape
        self.requests = 0
        self.request_times: list[datetime] = []  # when each chat request arrived (UTC)
        self._lock = threading.Lock()
        self.upstream = _upstream_for(shape)
        handler = type("Handler", (_Handler,), {"proxy": self})
        self._httpd = _Server((host, port), handler)
        self.host, self.port = self._httpd.server_address[:2]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name=f"provider-proxy-{shape}", daemon=True)
        self._thread.start()

    def count(self) -> None:
        with self._lock:
            self.requests += 1
            self.request_times.append(datetime.now(timezone.utc))

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def environment(self, model: str | None = None) -> dict[str, str]:
        """The COURSE_LLM_* variables that point the course at this proxy."""
        return {"COURSE_LLM_API_KEY": f"sk-{self.shape}-proxy",
                "COURSE_LLM_BASE_URL": self.base_url,
                "COURSE_LLM_MODEL": model or f"{self.shape}-shaped-model"}

    def client(self, **kwargs):
        import openai

        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(base_url=self.base_url, api_key=f"sk-{self.shape}-proxy", **kwargs)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self.upstream.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
