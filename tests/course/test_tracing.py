"""course.tracing on the teaching model (issue 49): every request a span of the GenAI
conventions with the course's additions (composition by tagged part, cached tokens, where the
prompt first differs from the previous one), agent runs and tool calls as parent and child spans,
an OTLP JSON file per process, COURSE_TRACE=off, contents only on the conventions' opt-in, and
the same spans sent to an OTLP/HTTP receiver by the real exporter."""
from __future__ import annotations

import gzip
import importlib
import http.server
import json
import threading

import openai
import pytest
import wrapt

import course.llm as llm
import course.tracing as tracing
from course.tracing import setup

LONG = "You answer in one short sentence and never use tools you were not given. " * 80


@pytest.fixture
def traced(tmp_path, monkeypatch):
    """Tracing started afresh, its file in tmp_path; stopped after (the process's own, if any,
    is stopped first: the instrumentation is process-wide)."""
    for name in ("COURSE_TRACE", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
                 *setup.ENDPOINT_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    tracing.shutdown()

    def start():
        return tracing.install(directory=tmp_path)

    yield start
    tracing.shutdown()


def spans_named(state, prefix):
    state.flush()
    return [s for s in state.store.spans if s.name.startswith(prefix)]


def test_a_request_is_a_genai_span_with_the_composition_by_part(traced):
    state = traced()
    with llm.serve() as server:
        client = server.client()
        messages = [{"role": "system", "content": LONG},
                    tracing.tag("notes", {"role": "user", "content": "Note: the user is in Oslo."}),
                    {"role": "user", "content": "What is the weather?"}]
        reply = client.chat.completions.create(model=llm.MODEL_NAME, messages=messages)
    (span,) = spans_named(state, "chat ")
    a = span.attributes
    assert span.name == f"chat {llm.MODEL_NAME}"
    assert span.instrumentation_scope.schema_url == setup.SCHEMA_URL == \
        "https://opentelemetry.io/schemas/1.37.0"
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.request.model"] == llm.MODEL_NAME
    assert a["gen_ai.usage.input_tokens"] == reply.usage.prompt_tokens
    assert a["gen_ai.usage.cache_read.input_tokens"] == 0
    assert list(a["course.context.parts"]) == ["system prompt", "notes", "history"]
    # the course's count is the teaching model's own: the parts and the primer add up to it
    assert a["course.context.tokens"] == reply.usage.prompt_tokens
    assert sum(a["course.context.part_tokens"]) < reply.usage.prompt_tokens
    assert "gen_ai.input.messages" not in a  # contents are off unless the student opts in
    # the endpoint, which the instrumentation reads only from an httpx.URL (openai's is httpx2's)
    assert (a["server.address"], a["server.port"]) == (server.host, server.port)


def test_where_a_request_first_differs_from_the_previous_one_and_what_the_cache_kept(traced):
    traced()
    tools = [{"type": "function", "function": {"name": "weather", "description": "weather",
                                               "parameters": {"type": "object", "properties": {}}}}]
    base = [{"role": "system", "content": LONG}, {"role": "user", "content": "Hello there."}]
    with llm.serve() as server:
        client = server.client()
        send = lambda messages: client.chat.completions.create(  # noqa: E731
            model=llm.MODEL_NAME, messages=messages, tools=tools)
        send(base)
        grown = send(base + [{"role": "assistant", "content": "Hi."},
                             {"role": "user", "content": "And now?"}])
        with tracing.compaction("rewrite the system prompt", layer=1):
            broken = send([{"role": "system", "content": "Today: Monday. " + LONG}] + base[1:])
    first, second, third = tracing.requests()
    assert first.previous_span_id is None and tracing.records.cache_reason(first)[0] == "first"
    # appended messages: the whole earlier prompt (but its reply primer) is shared
    assert second.previous_span_id == first.span_id and second.diverges_at_unit == 3
    assert second.diverging_part == "history"
    assert second.shared_prefix_tokens == sum(first.parts.values())
    assert second.cached_tokens == grown.usage.prompt_tokens_details.cached_tokens > 0
    assert second.cached_tokens == second.shared_prefix_tokens // 128 * 128
    assert tracing.records.cache_reason(second)[0] == "diverged"
    # a changed system prompt: unit 1 (after the tools block) differs, the cache keeps the tools
    assert third.diverges_at_unit == 1 and third.diverging_part == "system prompt"
    assert third.shared_prefix_tokens == third.parts["tool definitions"]
    assert third.cached_tokens == broken.usage.prompt_tokens_details.cached_tokens == 0
    assert tracing.records.cache_reason(third)[0] == "below_minimum"
    assert third.compaction == "1: rewrite the system prompt" and second.compaction is None


def test_more_cached_than_the_previous_request_allows_names_the_earlier_request_or_unit(traced):
    # Lesson 15's sessions: the cache reason said "below_minimum" while 1,280 tokens were cached
    # from older requests. Now it says where they came from.
    state = traced()
    other = "You answer at length and explain every step before you give the answer. " * 80
    question = {"role": "user", "content": "Hello there."}
    with llm.serve() as server:
        client = server.client()
        usages = [client.chat.completions.create(model=llm.MODEL_NAME, messages=[
            {"role": "system", "content": system}, question]).usage
            for system in (LONG, other, LONG, LONG + " Today is Monday.")]
    records = tracing.requests()
    again, edited = records[2], records[3]
    why = [tracing.records.cache_reason(r, tracing.records.longest_match(r, records, state.details))
           for r in (again, edited)]
    # #3 repeats #1 after #2 changed the system prompt: #1's blocks were still in the cache
    assert again.shared_prefix_tokens == 0 and again.cached_tokens == usages[2].prompt_tokens // 128 * 128
    assert why[0][0] == "older" and why[0][1]["older"] == 1
    # #4 changed the end of the system prompt: no earlier request shares it whole, its start was cached
    assert edited.shared_prefix_tokens == 0 and edited.cached_tokens >= 1024
    assert why[1][0] == "inside" and why[1][1]["older_part"] == "system prompt"
    assert tracing.records.cache_reason(edited)[0] == "earlier"  # the earlier requests not searched


def test_an_agent_run_is_the_parent_of_its_requests_and_tool_calls(traced):
    from solutions.agent_loop import run_agent

    state = traced()
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}]
    with llm.serve() as server:
        run = run_agent(server.client(), [{"role": "user", "content": "What is the weather in Oslo?"}],
                        tools, lambda name, args: {"city": args.get("city"), "sky": "clear"},
                        model=llm.MODEL_NAME)
    (agent,) = spans_named(state, "invoke_agent ")
    chats = spans_named(state, "chat ")
    tools_run = spans_named(state, "execute_tool ")
    assert run["api_calls"] == len(chats) >= 2 and len(tools_run) >= 1
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    for child in chats + tools_run:
        assert child.parent.span_id == agent.context.span_id
    assert tools_run[0].attributes["gen_ai.tool.name"] == "get_weather"
    assert {r.run for r in tracing.requests()} == {"run_agent"}


@pytest.mark.parametrize("imported_first", [False, True], ids=["imported-after", "imported-before"])
def test_a_responses_api_request_is_a_span_too(traced, imported_first):
    """Also when openai's Responses module was imported before tracing started (as in a suite or
    a kernel that used the Responses API first): its post-import hook then never fires."""
    if imported_first:
        importlib.import_module("openai.resources.responses.responses")
    state = traced()
    with llm.serve() as server:
        client = server.client()
        reply = client.responses.create(model=llm.MODEL_NAME, input="hello")
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model=llm.MODEL_NAME, input=[{"role": "nobody", "content": "x"}])
    ok, refused = spans_named(state, "chat ")
    assert ok.attributes["gen_ai.usage.input_tokens"] == reply.usage.input_tokens
    assert ok.attributes["gen_ai.usage.cache_read.input_tokens"] == 0
    assert ok.attributes["gen_ai.response.id"] == reply.id
    assert (ok.attributes["server.address"], ok.attributes["server.port"]) == (server.host, server.port)
    assert refused.attributes["error.type"] == "BadRequestError"
    assert [r.input_tokens for r in tracing.requests()] == [reply.usage.input_tokens, None]



def test_a_streamed_request_carries_its_cached_tokens_too(traced):
    """With stream_options include_usage, the usage comes in the stream's last chunk: the span
    gets its cached tokens from there, as a non-streamed request's does from the reply; the
    chunks reach the caller unchanged."""
    state = traced()
    base = [{"role": "system", "content": LONG}, {"role": "user", "content": "Hello there."}]
    with llm.serve() as server:
        client = server.client()
        client.chat.completions.create(model=llm.MODEL_NAME, messages=base)
        plain = client.chat.completions.create(model=llm.MODEL_NAME, messages=base)
        stream = client.chat.completions.create(model=llm.MODEL_NAME, messages=base, stream=True,
                                                stream_options={"include_usage": True})
        chunks = list(stream)
        bare = list(client.chat.completions.create(model=llm.MODEL_NAME, messages=base,
                                                   stream=True))
    usage = chunks[-1].usage
    assert usage.prompt_tokens_details.cached_tokens == \
        plain.usage.prompt_tokens_details.cached_tokens > 0
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == \
        plain.choices[0].message.content
    first, second, streamed, unreported = spans_named(state, "chat ")
    assert streamed.attributes["gen_ai.usage.cache_read.input_tokens"] == \
        usage.prompt_tokens_details.cached_tokens
    assert streamed.attributes["gen_ai.usage.input_tokens"] == usage.prompt_tokens
    # without include_usage the stream reports no usage: nothing is made up
    assert bare and "gen_ai.usage.cache_read.input_tokens" not in unreported.attributes
    assert [r.cached_tokens for r in tracing.requests()][2:] == \
        [usage.prompt_tokens_details.cached_tokens, None]


def test_the_trace_file_is_otlp_json_one_line_per_export(traced):
    state = traced()
    with llm.serve() as server:
        server.client().chat.completions.create(model=llm.MODEL_NAME,
                                                messages=[{"role": "user", "content": "hi"}])
    state.flush()
    assert state.path.parent == setup.TRACES_DIR or state.path.suffix == ".jsonl"
    lines = state.path.read_text().splitlines()
    spans = [span for line in lines for rs in json.loads(line)["resourceSpans"]
             for ss in rs["scopeSpans"] for span in ss["spans"]]
    (chat,) = [s for s in spans if s["name"].startswith("chat ")]
    assert len(chat["traceId"]) == 32 and len(chat["spanId"]) == 16  # hex, as OTLP JSON says
    keys = {a["key"] for a in chat["attributes"]}
    assert {"gen_ai.usage.input_tokens", "course.context.parts", "course.cache.key"} <= keys


def test_course_trace_dir_says_where_the_trace_files_go(tmp_path, monkeypatch):
    # A benchmark on a shared machine tells its kernels' files from other processes' this way
    for name in ("COURSE_TRACE", *setup.ENDPOINT_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COURSE_TRACE_DIR", str(tmp_path / "kernel"))
    tracing.shutdown()
    try:
        state = tracing.install()
        with llm.serve() as server:
            server.client().chat.completions.create(model=llm.MODEL_NAME,
                                                    messages=[{"role": "user", "content": "hi"}])
        state.flush()
        assert state.path.parent == tmp_path / "kernel" and state.path.stat().st_size > 0
    finally:
        tracing.shutdown()


def test_contents_are_recorded_only_on_the_conventions_opt_in(traced, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    state = traced()
    with llm.serve() as server:
        server.client().chat.completions.create(model=llm.MODEL_NAME,
                                                messages=[{"role": "user", "content": "hi"}])
    (record,) = tracing.requests()
    assert record.messages == [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    assert spans_named(state, "chat ")


def test_course_trace_off_starts_nothing(traced, monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_TRACE", "off")
    assert traced() is None
    with llm.serve() as server:
        server.client().chat.completions.create(model=llm.MODEL_NAME,
                                                messages=[{"role": "user", "content": "hi"}])
    assert tracing.current() is None and tracing.requests() == []
    assert not isinstance(openai.resources.chat.completions.Completions.create, wrapt.ObjectProxy)
    assert list(tmp_path.iterdir()) == []


class Receiver(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver's front door: takes POST /v1/traces (protobuf) and keeps the body."""

    bodies: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        type(self).bodies.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_collector_named_by_the_standard_variable_receives_the_spans(traced, monkeypatch):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    Receiver.bodies = []
    receiver = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{receiver.server_port}")
        state = traced()
        with llm.serve() as server:
            server.client().chat.completions.create(model=llm.MODEL_NAME,
                                                    messages=[{"role": "user", "content": "hi"}])
        state.flush()
    finally:
        receiver.shutdown()
        receiver.server_close()
    assert Receiver.bodies and {path for path, _, _ in Receiver.bodies} == {"/v1/traces"}
    names = []
    for _, content_type, body in Receiver.bodies:
        assert content_type == "application/x-protobuf"
        request = ExportTraceServiceRequest.FromString(body)
        names += [s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert names == [f"chat {llm.MODEL_NAME}"]


def test_a_folder_it_cannot_write_keeps_the_spans_in_memory_and_says_nothing(traced, caplog,
                                                                              monkeypatch):
    import builtins
    import logging

    real_open = builtins.open

    def refusing_open(file, *args, **kwargs):
        if str(file).endswith(".otlp.jsonl"):
            raise PermissionError(13, "Read-only file system", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    state = traced()
    with llm.serve() as server:
        server.client().chat.completions.create(model=llm.MODEL_NAME,
                                                messages=[{"role": "user", "content": "hi"}])
    state.flush()
    assert len(tracing.requests()) == 1 and not state.path.exists()
    # a logged warning would reach a notebook's stderr (Python's last-resort handler): an output
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_new_process_keeps_only_the_most_recently_written_trace_files(traced, tmp_path):
    import os

    for n in range(setup.FILES_KEPT + 5):
        old = tmp_path / f"old-{n:03d}.otlp.jsonl"
        old.write_text("{}\n")
        os.utime(old, (1_000_000 + n, 1_000_000 + n))
    other = tmp_path / "notes.txt"
    other.write_text("not a trace")
    traced()
    left = sorted(p.name for p in tmp_path.glob("*.otlp.jsonl"))
    assert left == [f"old-{n:03d}.otlp.jsonl" for n in range(5, setup.FILES_KEPT + 5)]
    assert other.exists()


def test_a_chapter_11_replay_is_one_agent_run_whose_figures_match_its_measurement(traced):
    """Lesson 11 reads its replays' figures from the trace and asserts they agree with the
    replies' usage: each replay's sent and summary requests (not its probes) are one run."""
    from course.givens.production_compaction import load_run
    from lesson_support.production_compaction import CONFIGS, replay_config

    traced()
    run = load_run()
    with llm.serve() as server:
        m = replay_config(run, "1 budget", CONFIGS["1 budget"], server.client(), llm.MODEL_NAME,
                          history_steps=run.steps[:45], probes=False)
    t = tracing.records.by_run(tracing.requests())
    assert list(t) == ["1 budget"]
    assert (t["1 budget"]["requests"], t["1 budget"]["input_tokens"], t["1 budget"]["cached_tokens"]) \
        == (len(m.usages), m.sent_prompt, m.sent_cached) == (3, m.sent_prompt, m.sent_cached)
    assert m.sent_cached > 0


def _needles(messages) -> set:
    """Lines of the messages' contents a trace file would hold verbatim if it copied them (long
    enough to be theirs, with nothing JSON would escape)."""
    lines = set()
    for message in messages:
        for line in (message.get("content") or "").splitlines():
            if len(line) >= 30 and line.isascii() and '"' not in line and "\\" not in line:
                lines.add(line)
    return lines


def _two_hundred_steps(state, steps):
    """Chapter 11's run, one request per step: the system prompt, the task and that step's
    messages (small contexts, so the test is quick; every step's contents differ)."""
    from course.givens.production_compaction import load_run

    run = load_run()
    sent = set()
    with llm.serve() as server:
        client = server.client()
        with tracing.agent_run("two hundred steps"):
            for step in run.steps[:steps]:
                messages = run.head() + step["messages"]
                client.chat.completions.create(model=llm.MODEL_NAME, messages=messages, tools=run.tools)
                sent |= _needles(messages)
    state.flush()
    return sent, state.path.read_text()


def test_a_200_step_runs_trace_holds_compositions_not_the_messages(traced, monkeypatch, tmp_path):
    """A long run's trace file holds counts, parts and keys, not copies of the context: no line
    of any message sent appears in it unless contents are turned on (then they do, which shows
    the check can see them)."""
    state = traced()
    sent, text = _two_hundred_steps(state, 200)
    assert len(tracing.requests()) == 200 and len(sent) > 200
    assert not [line for line in sent if line in text]
    assert "gen_ai.input.messages" not in text and "course.context.part_tokens" in text

    tracing.shutdown()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    state = tracing.install(directory=tmp_path / "with-contents")
    sent, text = _two_hundred_steps(state, 3)
    assert [line for line in sent if line in text]
