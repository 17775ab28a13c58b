"""A real language model on this machine, beside the teaching model (course/llm).

Turn it on with `COURSE_MODEL=local` (SmolLM2-135M-Instruct, 94 MB, installed by
`./run.sh setup --local-model`) or `COURSE_MODEL=local:/path/to/model.gguf` (any instruction-
tuned GGUF, e.g. Qwen3-0.6B, the textbook's): `course.llm.client()` and `model_name()` then talk
to it, through an OpenAI-compatible server on 127.0.0.1 that the course starts in the kernel on
first use and stops when the kernel exits.

    serve(path=None)     -> LocalServer: load a GGUF and serve it (a fresh KV cache);
                            .client(), .model_name, .base_url, .engine, .stop()
    default_server()     -> the process's one server for COURSE_MODEL's model
    Engine(path)         -> the model without HTTP: .render(messages) (its chat template),
                            .tokenize(text), .complete(body), .stream(body), .llama (the binding)
    model_path()         -> the GGUF COURSE_MODEL names (the bundled SmolLM2 for `local`)
    weights.available()  -> True when the bundled model is installed here
    LocalModelUnavailable   raised, with one sentence saying what to run, when it is not

Replies carry OpenAI's usage with `prompt_tokens_details.cached_tokens` (prompt tokens the
engine kept in its KV cache) and a `timings` field as llama.cpp's llama-server sends it
(engine.py). A 135M model is small and it shows: it follows a chat template and streams tokens
for real, but it rarely calls a tool or obeys an instruction; the teaching model stays the
default, and every lesson's stored output is the teaching model's.

Nothing here imports `llama_cpp` until a model is loaded, so `import course.local_model` works
without it.
"""
from __future__ import annotations

from course.local_model.engine import Engine
from course.local_model.server import default_server, serve
from course.local_model.weights import LocalModelUnavailable, model_path

__all__ = ["Engine", "LocalModelUnavailable", "default_server", "model_path", "serve"]
