"""Which model the course talks to: the configured provider, the local model (COURSE_MODEL=local
or local:/path/to/model.gguf, course/local_model), or the process-wide teaching model.

A provider (COURSE_LLM_API_KEY) and COURSE_MODEL set together are refused with a clear error
rather than one silently winning: each is a deliberate choice of model, and every figure is
labelled with the model that produced it, so the course must not guess which was meant.

`course.llm` re-exports these; `measuring` imports them from here (not from the package front,
which imports `measuring`: no import cycle).
"""
from __future__ import annotations

import os
import threading

from course.llm.server import MODEL_NAME, ServerHandle

ENV_KEY, ENV_BASE_URL, ENV_MODEL = "COURSE_LLM_API_KEY", "COURSE_LLM_BASE_URL", "COURSE_LLM_MODEL"

_default: ServerHandle | None = None
_lock = threading.Lock()


def using_real_provider() -> bool:
    return bool(os.environ.get(ENV_KEY))


def local_model_configured() -> bool:
    """True when COURSE_MODEL asks for the local model (and no provider is configured too)."""
    from course.local_model.weights import ENV_MODEL as COURSE_MODEL, requested

    wanted = requested() is not None
    if wanted and using_real_provider():
        raise RuntimeError(f"Both {COURSE_MODEL} (the local model) and {ENV_KEY} (a provider) are "
                           f"set: unset one of them, so the course knows which model to use.")
    return wanted


def provider_configured() -> bool:
    """True when a real model is configured (a provider with COURSE_LLM_API_KEY, or the local
    model with COURSE_MODEL): then `client()` reaches it, and an experiment that needs the
    teaching model's private cache can run the same requests on it too. Read at call time, so
    a changed environment counts."""
    return local_model_configured() or using_real_provider()


def model_name() -> str:
    if local_model_configured():
        from course.local_model import default_server as local_server

        return local_server().model_name
    if using_real_provider():
        name = os.environ.get(ENV_MODEL)
        if not name:
            raise RuntimeError(f"{ENV_KEY} is set, so the course uses a real provider, but "
                               f"{ENV_MODEL} is not: set it to the model to call.")
        return name
    return MODEL_NAME


def serve(port: int = 0) -> ServerHandle:
    """Start a private teaching model on 127.0.0.1 (port 0 picks a free one)."""
    traced()
    return ServerHandle(port=port)


def default_server() -> ServerHandle:
    """The process-wide teaching model, started once, on first use."""
    global _default
    with _lock:
        if _default is None:
            _default = serve()
        return _default


def traced() -> None:
    """Every request of this process becomes a span from here on (course/tracing; COURSE_TRACE=off
    turns it off): the one place the course starts tracing, before any client it builds."""
    from course.tracing import install

    install()


def client(**kwargs):
    """An `openai.OpenAI` client: the real provider or the local model if configured, else the
    teaching model."""
    traced()
    if local_model_configured():
        from course.local_model import default_server as local_server

        return local_server().client(**kwargs)
    if using_real_provider():
        import openai

        model_name()  # fail early and clearly if the model is not named
        return openai.OpenAI(api_key=os.environ[ENV_KEY],
                             base_url=os.environ.get(ENV_BASE_URL) or None, **kwargs)
    return default_server().client(**kwargs)
