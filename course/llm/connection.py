"""Which model the course talks to: the configured provider, or the process-wide teaching model.

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


def provider_configured() -> bool:
    """True when a real provider is configured (COURSE_LLM_API_KEY is set): then `client()`
    reaches it, and an experiment that needs the teaching model's private cache can run the
    same requests on the provider too. Read at call time, so a changed environment counts."""
    return using_real_provider()


def model_name() -> str:
    if using_real_provider():
        name = os.environ.get(ENV_MODEL)
        if not name:
            raise RuntimeError(f"{ENV_KEY} is set, so the course uses a real provider, but "
                               f"{ENV_MODEL} is not: set it to the model to call.")
        return name
    return MODEL_NAME


def serve(port: int = 0) -> ServerHandle:
    """Start a private teaching model on 127.0.0.1 (port 0 picks a free one)."""
    return ServerHandle(port=port)


def default_server() -> ServerHandle:
    """The process-wide teaching model, started once, on first use."""
    global _default
    with _lock:
        if _default is None:
            _default = serve()
        return _default


def client(**kwargs):
    """An `openai.OpenAI` client: the real provider if configured, else the teaching model."""
    if using_real_provider():
        import openai

        model_name()  # fail early and clearly if the model is not named
        return openai.OpenAI(api_key=os.environ[ENV_KEY],
                             base_url=os.environ.get(ENV_BASE_URL) or None, **kwargs)
    return default_server().client(**kwargs)
