"""Turning tracing on: an OpenTelemetry tracer provider, its exporters, and the official OpenAI
instrumentation, installed once per process when the course first builds a client
(course/llm/connection.py).

    COURSE_TRACE=off                   no tracing at all (nothing imported, nothing written)
    (default)                          spans kept in memory (the inspector reads them) and written
                                       as OTLP JSON Lines, one file per kernel, under .traces/
                                       (the FILES_KEPT most recently written are kept)
    COURSE_TRACE_DIR=folder            the trace files go there instead of .traces/ (a benchmark
                                       tells its kernels' files from other processes' this way)
    OTEL_EXPORTER_OTLP_ENDPOINT=url    also sent to that collector over OTLP/HTTP (Jaeger,
                                       Phoenix, Langfuse …), read by the exporter as usual
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only
                                       the conventions' opt-in: message contents recorded on the
                                       spans (off by default, for the teaching model and for a
                                       real provider alike); read when tracing starts

The semantic conventions are pinned by the pinned packages (requirements.txt):
opentelemetry-instrumentation-openai-v2 2.4b0 emits the GenAI conventions of schema 1.37.0
(SCHEMA_URL), still marked Development; the course's own spans use the same names and schema.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from course.paths import REPO_ROOT

ENV_SWITCH = "COURSE_TRACE"
ENV_DIR = "COURSE_TRACE_DIR"
ENV_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
TRACES_DIR = REPO_ROOT / ".traces"
SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0"
SERVICE_NAME = "context-engineering-course"
SPANS_KEPT = 100_000  # in memory, for the inspector: the oldest go first
FILES_KEPT = 100      # trace files in .traces/: a new kernel removes the least recently written

_lock = threading.Lock()
_state: "Tracing | None" = None


def enabled() -> bool:
    """Tracing is on unless COURSE_TRACE says off (read at call time)."""
    return os.environ.get(ENV_SWITCH, "on").strip().lower() not in ("off", "0", "false", "no")


def recording_contents() -> bool:
    """True when the conventions' opt-in asks for message contents on the spans."""
    return os.environ.get(ENV_CONTENT, "").strip().lower() in ("span_only", "span_and_event")


def span_store(limit: int = SPANS_KEPT):
    """A span processor that keeps finished spans in memory (`.spans`), in the order they ended."""
    from opentelemetry.sdk.trace import SpanProcessor

    class SpanStore(SpanProcessor):
        def __init__(self):
            self.spans: deque = deque(maxlen=limit)

        def on_end(self, span) -> None:
            self.spans.append(span)

    return SpanStore()


@dataclass
class Tracing:
    """The process's tracing: its provider, its tracer, the spans kept, the trace file."""

    provider: object
    tracer: object
    store: object  # span_store()
    path: Path | None
    instrumentor: object
    details: dict = field(default_factory=dict)  # span id -> Composition (annotate.py)

    def flush(self) -> None:
        self.provider.force_flush()


def trace_path(directory: Path) -> Path:
    """This kernel's trace file: its start time and process id, so kernels never share one."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return directory / f"{stamp}-{os.getpid()}.otlp.jsonl"


def install(directory: Path | None = None) -> Tracing | None:
    """Start tracing for this process (once; later calls return the same), or None when
    COURSE_TRACE=off. `directory`: where the trace file goes (default COURSE_TRACE_DIR, else
    .traces/)."""
    global _state
    if not enabled():
        return None
    with _lock:
        if _state is None:
            _state = _build(directory or Path(os.environ.get(ENV_DIR) or TRACES_DIR))
        return _state


def current() -> Tracing | None:
    """The process's tracing if it was started, else None (never starts it)."""
    return _state


def file_exporter(path: Path):
    """Spans appended to `path` as OTLP JSON Lines: one ExportTraceServiceRequest per line, as
    the OpenTelemetry file exporter writes them (opentelemetry-exporter-otlp-json-file) and a
    collector's otlpjsonfile receiver reads them. Its encoder, not its package: importing that
    package imports the metrics SDK too, which costs a lesson a third of a second."""
    import json

    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class FileSpanExporter(SpanExporter):
        def __init__(self):
            self.stream = None  # opened by the first export: a process that sends nothing writes nothing
            self.closed = False
            self.lock = threading.Lock()

        def export(self, spans) -> SpanExportResult:
            line = json.dumps(encode_spans(spans).to_dict(), separators=(",", ":")) + "\n"
            with self.lock:
                if self.closed:
                    return SpanExportResult.FAILURE
                if self.stream is None:
                    try:
                        self.stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by shutdown)
                    except OSError:  # a read-only checkout: the spans stay in memory, quietly
                        self.closed = True
                        return SpanExportResult.FAILURE
                self.stream.write(line)
                self.stream.flush()
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            with self.lock:
                self.closed = True
                if self.stream is not None:
                    self.stream.close()

    return FileSpanExporter()


def prune(directory: Path, keep: int = FILES_KEPT) -> None:
    """Remove all but the `keep` most recently written trace files (a kernel still writing keeps
    its file fresh), so a course used for months does not fill the disk."""
    files = []
    for file in directory.glob("*.otlp.jsonl"):
        try:
            files.append((file.stat().st_mtime, file))
        except OSError:  # removed meanwhile by another kernel
            pass
    for _, file in sorted(files, reverse=True)[keep:]:
        file.unlink(missing_ok=True)


def _build(directory: Path) -> Tracing:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from course.tracing import annotate

    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    store = span_store()
    provider.add_span_processor(store)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        prune(directory)
        path = trace_path(directory)
        provider.add_span_processor(BatchSpanProcessor(file_exporter(path)))
    except OSError:  # a read-only checkout or a confined worker: the spans stay in memory
        path = None
    if any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("course.tracing", schema_url=SCHEMA_URL)
    state = Tracing(provider, tracer, store, path, OpenAIInstrumentor())
    # Ours first, then the instrumentation around it: ours runs inside its span and adds to it.
    annotate.wrap_requests(state)
    state.instrumentor.instrument(tracer_provider=provider)
    return state


def shutdown() -> None:
    """Stop tracing in this process: flush and close the exporters, remove the wrappers (tests
    start it again with other settings)."""
    global _state
    with _lock:
        if _state is None:
            return
        from course.tracing import annotate

        _state.instrumentor.uninstrument()
        annotate.unwrap_requests()
        _state.provider.shutdown()
        _state = None
