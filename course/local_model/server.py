"""The local model's OpenAI-compatible server: the teaching model's HTTP server
(course/llm/server.py) with `llama_cpp.Llama` behind it instead of the rules.

Why the course serves the real model itself rather than with `llama_cpp.server`: that server
reports no cached tokens and no timings (a cache hit shows only in its log), ignores
`stream_options.include_usage` and keeps every logit by default. Here the HTTP side is the one
the teaching model already has (keep-alive, OpenAI-shaped JSON errors for anything malformed,
Server-Sent Events, a 4xx rather than an HTML page), the request is validated by the same code,
and the engine (engine.py) reads cached tokens from llama.cpp's own prefix match and times
prefill and decode: a lesson reads a real model's usage exactly as it reads the teaching
model's, and one implementation of all of it is tested.

    POST /v1/chat/completions   streamed or not; usage with prompt_tokens_details.cached_tokens;
                                `timings` (engine.py) beside it, on the last chunk when streamed
    GET  /v1/models             the one model, with its context window
    GET  /health

One server per process, on 127.0.0.1 (`default_server()`), started on first use and stopped
when the process exits; `serve()` starts another (its own copy of the weights: a fresh cache).
"""
from __future__ import annotations

import atexit
import threading
from pathlib import Path

from course.llm.server import ChatHandler, EventStream, ServerHandle
from course.llm.validation import RequestError
from course.local_model import weights
from course.local_model.engine import Engine


def _chat(engine: Engine, body, raw: bytes):
    """POST /v1/chat/completions. A stream is refused (4xx) before any event is sent, and its
    headers go out at once, before the prefill, as a provider's do."""
    if isinstance(body, dict) and body.get("stream") is True:
        return EventStream(engine.stream(body))
    return engine.complete(body)


class LocalHandler(ChatHandler):
    server_version = "CourseLocalModel/1"
    serves = "the local model"
    model: Engine

    def post_routes(self) -> dict:
        return {"/chat/completions": _chat}

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        engine = self.model
        if path in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [
                {"id": engine.name, "object": "model", "created": 0, "owned_by": "local",
                 "context_window": engine.context_window}]})
        elif path in ("", "/health"):
            self._send(200, {"status": "ok", "model": engine.name})
        else:
            self._error(RequestError(f"Unknown path {self.path!r}: the local model serves "
                                     f"GET /v1/models and /health.", status=404,
                                     code="unknown_url"))

    def do_DELETE(self):
        self.close_connection = True  # any body is left unread
        self._error(RequestError("Method 'DELETE' is not allowed: the local model stores "
                                 "nothing to delete.", status=405, code="method_not_allowed"))


class LocalServer(ServerHandle):
    """A running local model on 127.0.0.1. Use as a context manager, or call stop()."""

    handler_class = LocalHandler
    thread_name = "local-model"

    def __init__(self, engine: Engine, host: str = "127.0.0.1", port: int = 0):
        super().__init__(host=host, port=port, model=engine)
        self.engine = engine

    @property
    def model_name(self) -> str:
        return self.engine.name

    def client(self, **kwargs):
        """An `openai.OpenAI` client for this server (no key; no retries, so errors show)."""
        client = super().client(**kwargs)
        client.api_key = "not-needed-for-the-local-model"
        return client

    def stop(self) -> None:
        super().stop()
        self.engine.close()


def serve(path: str | Path | None = None, port: int = 0, context: int | None = None,
          threads: int | None = None) -> LocalServer:
    """Load a GGUF (default: what COURSE_MODEL names, else the bundled SmolLM2) and serve it on
    `threads` threads (Engine's default: half the cores). LocalModelUnavailable, one sentence
    saying what to run, when it cannot."""
    return LocalServer(Engine(path or weights.model_path(), context=context, threads=threads),
                       port=port)


_default: LocalServer | None = None
_lock = threading.Lock()


def default_server() -> LocalServer:
    """The process-wide local model (COURSE_MODEL's), started once on first use and stopped
    when the process exits."""
    global _default
    with _lock:
        if _default is None:
            _default = serve()
            atexit.register(_default.stop)
        return _default
