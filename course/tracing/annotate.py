"""What the course adds to the OpenAI instrumentation's spans, and its own spans.

`wrap_requests` puts a thin wrapper *inside* the instrumentation's around
`Completions.create`: it runs in the request's span and adds what the instrumentation does not
record (the attributes below). `agent_run` and `tool_call` open the parent and child spans of
an agent's run, with the GenAI conventions' names (schema 1.37.0).

Attributes of a request span (`course.*`: the course's own namespace):
    course.context.parts, course.context.part_tokens  the composition, per part, in order
    course.context.tokens, course.context.units       its token count, the tools block + messages
    course.cache.key                                   where its prompt cache lives: endpoint,
                                                       model, prompt_cache_key
    course.cache.previous_span_id                      the previous request with that key
    course.cache.diverges_at_unit                      the first unit that differs from it
                                                       (absent: none differs)
    course.cache.shared_prefix_tokens                  the tokens before that unit
    course.cache.diverging_part                        that unit's part
    course.compaction.policy, course.compaction.layer  what compaction acted (`compaction`)
    gen_ai.usage.cache_read.input_tokens               the cached prompt tokens (the
                                                       conventions' name, from a later version
                                                       than 1.37.0; the instrumentation records
                                                       it for the Responses API only)
    server.address, server.port                        the endpoint (the conventions' names),
                                                       when the instrumentation left them out
"""
from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
from collections import OrderedDict
from urllib.parse import urlsplit

from course.tracing import setup
from course.tracing.composition import compose, divergence

_COMPACTION: contextvars.ContextVar = contextvars.ContextVar("course_compaction", default=None)
_previous: OrderedDict = OrderedDict()  # cache key -> (span id, Composition)
_previous_lock = threading.Lock()        # requests may run in parallel (sub-agents, tools)
KEYS_KEPT = 1_000
DETAILS_KEPT = 20_000
_TARGET = ("openai.resources.chat.completions", "Completions.create")
_RESPONSES = "openai.resources.responses.responses"


def wrap_requests(state) -> None:
    import wrapt
    from wrapt import wrap_function_wrapper

    def annotated(wrapped, instance, args, kwargs):
        from opentelemetry import trace

        span = trace.get_current_span()
        if span.is_recording():
            try:
                record(state, span, instance, kwargs)
            except Exception as exc:  # tracing must never break a request: say so on the span
                span.set_attribute("course.trace.error", f"{type(exc).__name__}: {exc}")
        result = wrapped(*args, **kwargs)
        if not span.is_recording():
            return result
        if kwargs.get("stream") and hasattr(result, "__next__"):
            return UsageWatcher(result, span)  # the usage comes last, if the request asked
        cached = cached_tokens(result)
        if cached is not None:  # the instrumentation records it only for the Responses API
            span.set_attribute("gen_ai.usage.cache_read.input_tokens", cached)
        return result

    wrap_function_wrapper(*_TARGET, annotated)

    def wrap_responses(module):  # when openai imports it: importing it here costs 0.15 s
        from course.tracing.setup import current

        if current() is state:  # not a hook left from tracing stopped since
            wrap_function_wrapper(module, "Responses.create", responses_span(state))

    imported = sys.modules.get(_RESPONSES)
    if imported is not None:  # wrap it now: this runs before `state` becomes current
        wrap_function_wrapper(imported, "Responses.create", responses_span(state))
    else:
        wrapt.register_post_import_hook(wrap_responses, _RESPONSES)


def responses_span(state):
    """A span for `client.responses.create`, which the instrumentation (2.4b0) does not cover:
    the conventions' chat span with the usage the reply reports (no composition: the Responses
    API's input items are not chat messages)."""
    from opentelemetry.trace import SpanKind, Status, StatusCode

    def traced(wrapped, instance, args, kwargs):
        model = kwargs.get("model") or ""
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                      "gen_ai.request.model": model, "course.cache.key": cache_key(instance, kwargs),
                      **server_attributes(instance)}
        with state.tracer.start_as_current_span(f"chat {model}".strip(), kind=SpanKind.CLIENT,
                                                attributes=attributes,
                                                record_exception=False) as span:
            try:
                result = wrapped(*args, **kwargs)
            except Exception as error:
                span.set_attribute("error.type", type(error).__qualname__)
                span.set_status(Status(StatusCode.ERROR))
                raise
            usage = getattr(result, "usage", None)
            details = getattr(usage, "input_tokens_details", None)
            for name, value in (("gen_ai.response.id", getattr(result, "id", None)),
                                ("gen_ai.response.model", getattr(result, "model", None)),
                                ("gen_ai.usage.input_tokens", getattr(usage, "input_tokens", None)),
                                ("gen_ai.usage.output_tokens", getattr(usage, "output_tokens", None)),
                                ("gen_ai.usage.cache_read.input_tokens",
                                 getattr(details, "cached_tokens", None))):
                if isinstance(value, (str, int)):
                    span.set_attribute(name, value)
            return result

    return traced


def cached_tokens(result) -> int | None:
    """The reply's (or a stream chunk's) cached prompt tokens, None when the provider does not
    report them."""
    details = getattr(getattr(result, "usage", None), "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    return cached if isinstance(cached, int) else None


class UsageWatcher:
    """A streamed reply, passed on chunk by chunk, that records the cached tokens of the chunk
    carrying the usage (the last one, with stream_options include_usage) on the request's span,
    which the instrumentation ends only after that chunk. Anything else goes to the stream."""

    def __init__(self, stream, span):
        self._stream, self._span = stream, span

    def __iter__(self):
        return self

    def __next__(self):
        chunk = next(self._stream)
        if getattr(chunk, "usage", None) is not None:
            cached = cached_tokens(chunk)
            if cached is not None:
                self._span.set_attribute("gen_ai.usage.cache_read.input_tokens", cached)
        return chunk

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stream.close()
        return False

    def __getattr__(self, name):
        return getattr(self._stream, name)


def unwrap_requests() -> None:
    import openai
    from opentelemetry.instrumentation.utils import unwrap

    unwrap(openai.resources.chat.completions.Completions, "create")
    responses = sys.modules.get(_RESPONSES)
    if responses is not None:
        unwrap(responses.Responses, "create")
    _previous.clear()


def cache_key(instance, kwargs) -> str:
    """Requests share a prompt cache only on one endpoint, for one model, under one
    prompt_cache_key (when the request names one)."""
    client = getattr(instance, "_client", None)
    base = str(getattr(client, "base_url", "")) if client is not None else ""
    key = kwargs.get("prompt_cache_key") or (kwargs.get("extra_body") or {}).get("prompt_cache_key")
    return " ".join(str(part) for part in (base, kwargs.get("model", ""), key or "") if part)


def server_attributes(instance) -> dict:
    """server.address and server.port of the client's endpoint. The instrumentation (2.4b0)
    reads them only from an `httpx.URL`, and openai 3.51's base_url is an `httpx2.URL`, so it
    records neither: the same values from the URL's text (port 443 left out, as it does)."""
    client = getattr(instance, "_client", None)
    url = urlsplit(str(getattr(client, "base_url", "") or ""))
    attributes = {}
    if url.hostname:
        attributes["server.address"] = url.hostname
        if url.port and url.port != 443:
            attributes["server.port"] = url.port
    return attributes


def record(state, span, instance, kwargs) -> None:
    if "server.address" not in (getattr(span, "attributes", None) or {}):
        span.set_attributes(server_attributes(instance))
    messages, tools = kwargs.get("messages"), kwargs.get("tools")
    if not isinstance(messages, (list, tuple)) or not isinstance(tools, (list, tuple, type(None))):
        return  # an iterator would be used up here, before the request is sent
    composition = compose(messages, tools)
    parts = composition.by_part()
    span_id = format(span.get_span_context().span_id, "016x")
    key = cache_key(instance, kwargs)
    attributes = {
        "course.context.parts": list(parts),
        "course.context.part_tokens": list(parts.values()),
        "course.context.tokens": composition.total,
        "course.context.units": len(composition.tokens),
        "course.cache.key": key,
    }
    with _previous_lock:
        before = _previous.get(key)
        _previous[key] = (span_id, composition)
        _previous.move_to_end(key)
        if len(_previous) > KEYS_KEPT:
            _previous.popitem(last=False)
        state.details[span_id] = composition
        if len(state.details) > DETAILS_KEPT:
            del state.details[next(iter(state.details))]
    if before is not None:
        where = divergence(before[1], composition)
        attributes["course.cache.previous_span_id"] = before[0]
        attributes["course.cache.shared_prefix_tokens"] = where.token
        if where.unit is not None:
            attributes["course.cache.diverges_at_unit"] = where.unit
            attributes["course.cache.diverging_part"] = where.part
    acted = _COMPACTION.get()
    if acted is not None:
        policy, layer = acted
        attributes["course.compaction.policy"] = policy
        if layer is not None:
            attributes["course.compaction.layer"] = layer
    span.set_attributes(attributes)


@contextlib.contextmanager
def compaction(policy: str, layer: str | int | None = None):
    """Mark the requests sent inside the block as shaped by a compaction `policy` (and its
    `layer`, e.g. 1 for masking, 2 for summarising): set by the code that compacted."""
    token = _COMPACTION.set((policy, layer))
    try:
        yield
    finally:
        _COMPACTION.reset(token)


def context():
    """The current trace context, to hand to a thread (`tool_call(..., context=...)`); None
    when tracing is not running."""
    if setup.current() is None:
        return None
    from opentelemetry import context as otel_context

    return otel_context.get_current()


@contextlib.contextmanager
def agent_run(name: str):
    """A parent span for one run of an agent: its requests and tool calls are its children.
    Does nothing when tracing is not running."""
    state = setup.current()
    if state is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    with state.tracer.start_as_current_span(
            f"invoke_agent {name}", kind=SpanKind.INTERNAL,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}) as span:
        yield span


@contextlib.contextmanager
def tool_call(name: str, call_id: str | None = None, context=None):
    """A child span for one tool execution; `context` (from `context()`) when it runs in
    another thread than the run's. Does nothing when tracing is not running."""
    state = setup.current()
    if state is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                  "gen_ai.tool.type": "function"}
    if call_id:
        attributes["gen_ai.tool.call.id"] = call_id
    with state.tracer.start_as_current_span(f"execute_tool {name}", context=context,
                                            kind=SpanKind.INTERNAL, attributes=attributes) as span:
        yield span
