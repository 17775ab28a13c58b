"""Context editing, Anthropic-style, simulated on Chat Completions (course/llm/context_editing.py):
through the real openai SDK, `extra_body={"context_management": ...}` clears old tool results
before the teaching model reads the request, and the reply says what it cleared.

How a test sees what the model saw: a reply's id is a hash of the prompt's token ids, so a
request whose edited messages are exactly `expected` gets the same id, reply and usage as
`expected` sent without context management."""
import json

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.context_editing import (EDIT_TYPE, PLACEHOLDER, apply_edits,
                                        parse_context_management)
from course.llm.template import (fixed_token_count, message_token_count, prompt_token_ids)
from tests.messages import function_tool, tool_call

MODEL = course.llm.MODEL_NAME
TOOLS = [function_tool(name, about, {arg: {"type": "string"}})
         for name, about, arg in (("read_file", "Read a file in the workspace", "path"),
                                  ("web_search", "Search the web", "query"),
                                  ("run_command", "Run a shell command", "command"))]
ARG = {"read_file": "path", "web_search": "query", "run_command": "command"}


@pytest.fixture(scope="module")
def client():
    with course.llm.serve() as server:
        yield server.client()


def call(call_id: str, name: str, value: str) -> dict:
    return tool_call(call_id, name, {ARG[name]: value})


def agent_run(names, size=300, system="You are a coding agent. Read what you need, then answer."):
    """A system prompt, a request, then one call and one (long) result per name, in order."""
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": "Look through the project files and tell me what breaks the build"}]
    for k, name in enumerate(names):
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [call(f"call_{k}", name, f"src/part_{k}.py")]})
        messages.append({"role": "tool", "tool_call_id": f"call_{k}",
                         "content": f"result {k} of {name}: " + f"line {k} of the output\n" * size})
    return messages


def edit(**options) -> dict:
    return {"context_management": {"edits": [{"type": EDIT_TYPE, **options}]}}


def tokens(value: int) -> dict:
    return {"type": "input_tokens", "value": value}


def keep(value: int) -> dict:
    return {"type": "tool_uses", "value": value}


def create(client, messages, extra=None, **kwargs):
    return client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS,
                                          extra_body=extra, **kwargs)


def billed(usage) -> tuple[int, int, int]:
    """The usage figures that depend on the prompt alone (cached_tokens depends on what came before)."""
    return usage.prompt_tokens, usage.completion_tokens, usage.total_tokens


def applied(completion) -> list[dict]:
    return completion.model_extra["context_management"]["applied_edits"]


def cleared(messages, results=(), inputs=()) -> list[dict]:
    """`messages` with the tool messages at indices `results` cleared, and the arguments of the
    calls with ids `inputs` replaced: what the server is expected to let the model see."""
    out = [dict(m) for m in messages]
    for i in results:
        out[i]["content"] = PLACEHOLDER
    for m in out:
        if m.get("tool_calls"):
            m["tool_calls"] = [{**c, "function": {**c["function"], "arguments": "{}"}}
                               if c["id"] in inputs else c for c in m["tool_calls"]]
    return out


def assert_model_saw(client, completion, expected):
    """The completion is the one `expected` gets without context management: same prompt."""
    plain = create(client, expected)
    assert completion.id == plain.id, "the model did not see exactly the expected messages"
    assert completion.choices[0].message == plain.choices[0].message
    assert completion.usage.prompt_tokens == plain.usage.prompt_tokens == len(prompt_token_ids(expected, TOOLS))


def assert_paired(messages):
    """Every call has exactly one tool message after it, every tool message answers a call."""
    open_ids, seen = [], set()
    for m in messages:
        if m["role"] == "assistant":
            assert not open_ids, f"calls {open_ids} unanswered before the next assistant message"
            open_ids = [c["id"] for c in m.get("tool_calls") or ()]
            seen.update(open_ids)
        elif m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, f"tool message {m['tool_call_id']} answers no open call"
            open_ids.remove(m["tool_call_id"])
    assert not open_ids


# ------------------------------------------------------------------ below and above the trigger

def test_without_the_option_the_reply_has_no_context_management_field(client):
    assert "context_management" not in (create(client, agent_run(["read_file"])).model_extra or {})


def test_below_the_trigger_nothing_changes(client):
    messages = agent_run(["read_file"] * 6)
    plain = create(client, messages)
    edited = create(client, messages, edit())  # the default trigger: 100,000 input tokens
    assert applied(edited) == []
    assert edited.id == plain.id and edited.choices[0].message == plain.choices[0].message
    assert billed(edited.usage) == billed(plain.usage)
    step = [s for s in edited.model_extra["teaching_trace"] if s["rule"] == "context_editing"]
    assert len(step) == 1 and "not over the trigger of 100000" in step[0]["why"]


def test_above_the_trigger_the_oldest_results_are_cleared_and_the_last_keep_stay(client):
    messages = agent_run(["read_file"] * 6)
    plain = create(client, messages)
    got = create(client, messages, edit(trigger=tokens(2000), keep=keep(2)))
    [record] = applied(got)
    results = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    expected = cleared(messages, results[:4])  # the last 2 tool uses stay byte for byte
    assert record["type"] == EDIT_TYPE and record["cleared_tool_uses"] == 4
    assert got.usage.prompt_tokens == plain.usage.prompt_tokens - record["cleared_input_tokens"]
    assert record["cleared_input_tokens"] == sum(
        message_token_count(messages[i]) - message_token_count(expected[i]) for i in results[:4])
    assert_model_saw(client, got, expected)
    assert_paired(expected)


def test_the_default_keep_is_three_tool_uses(client):
    messages = agent_run(["read_file"] * 5)
    got = create(client, messages, edit(trigger=tokens(100)))
    assert applied(got)[0]["cleared_tool_uses"] == 2
    assert_model_saw(client, got, cleared(messages, [3, 5]))


def test_excluded_tools_keep_their_results(client):
    names = ["web_search", "read_file", "web_search", "read_file", "run_command", "read_file"]
    messages = agent_run(names)
    got = create(client, messages, edit(trigger=tokens(1000), keep=keep(1),
                                        exclude_tools=["web_search"]))
    # tool k's result is messages[3 + 2k]; the last use (k=5) is kept, web_search ones excluded
    assert applied(got)[0]["cleared_tool_uses"] == 3
    assert_model_saw(client, got, cleared(messages, [5, 9, 11]))


def test_clear_at_least_blocks_a_clearing_too_small_to_be_worth_it(client):
    messages = agent_run(["read_file"] * 4)
    plain = create(client, messages)
    options = dict(trigger=tokens(1000), keep=keep(3))
    freed = applied(create(client, messages, edit(**options)))[0]["cleared_input_tokens"]
    blocked = create(client, messages, edit(**options, clear_at_least=tokens(freed + 1)))
    assert applied(blocked) == [] and billed(blocked.usage) == billed(plain.usage) and blocked.id == plain.id
    assert f"would free only {freed}" in json.dumps(blocked.model_extra["teaching_trace"])
    enough = create(client, messages, edit(**options, clear_at_least=tokens(freed)))
    assert applied(enough)[0]["cleared_input_tokens"] == freed  # exactly enough is enough


def test_clear_tool_inputs_replaces_the_cleared_calls_arguments(client):
    messages = agent_run(["read_file"] * 4)
    plain = create(client, messages)
    results_only = applied(create(client, messages, edit(trigger=tokens(1000), keep=keep(2))))[0]
    got = create(client, messages, edit(trigger=tokens(1000), keep=keep(2), clear_tool_inputs=True))
    [record] = applied(got)
    expected = cleared(messages, [3, 5], inputs={"call_0", "call_1"})
    assert record["cleared_tool_uses"] == 2
    assert record["cleared_input_tokens"] > results_only["cleared_input_tokens"]
    assert got.usage.prompt_tokens == plain.usage.prompt_tokens - record["cleared_input_tokens"]
    assert_model_saw(client, got, expected)
    assert [c["function"]["name"] for c in expected[2]["tool_calls"]] == ["read_file"]  # the call stays


def test_a_result_shorter_than_the_placeholder_is_left_whole(client):
    messages = agent_run(["read_file"] * 5, size=300)
    messages[3]["content"] = "ok"  # clearing it would add tokens, not free them
    got = create(client, messages, edit(trigger=tokens(1000), keep=keep(2)))
    assert applied(got)[0]["cleared_tool_uses"] == 2
    assert_model_saw(client, got, cleared(messages, [5, 7]))


def test_parallel_calls_are_tool_uses_of_their_own(client):
    messages = agent_run([])
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        call(f"p{k}", "read_file", f"src/p{k}.py") for k in range(4)]})
    for k in (2, 0, 3, 1):  # results in any order; uses are ordered by their calls
        messages.append({"role": "tool", "tool_call_id": f"p{k}", "content": f"file p{k}\n" * 400})
    got = create(client, messages, edit(trigger=tokens(1000), keep=keep(1)))
    assert applied(got)[0]["cleared_tool_uses"] == 3
    expected = cleared(messages, [i for i, m in enumerate(messages)
                                  if m.get("tool_call_id") in ("p0", "p1", "p2")])
    assert_model_saw(client, got, expected)
    assert_paired(expected)


def test_a_cleared_result_is_fetched_again_when_the_request_needs_it(client):
    """The rules read the edited messages: a cleared read_file result is no longer memory."""
    messages = [{"role": "user", "content": "Read the file notes.txt"},
                {"role": "assistant", "content": None, "tool_calls": [call("c0", "read_file", "notes.txt")]},
                {"role": "tool", "tool_call_id": "c0", "content": "the notes say hello\n" * 300},
                {"role": "assistant", "content": "The notes say hello."},
                {"role": "user", "content": "Read the file notes.txt"}]
    remembered = create(client, messages, edit(trigger=tokens(10_000), keep=keep(0)))
    assert remembered.choices[0].message.tool_calls is None  # answered from the visible result
    forgotten = create(client, messages, edit(trigger=tokens(100), keep=keep(0)))
    assert [c.function.name for c in forgotten.choices[0].message.tool_calls] == ["read_file"]


def test_the_trace_names_the_cleared_tool_uses_and_the_tokens_freed(client):
    got = create(client, agent_run(["read_file"] * 5), edit(trigger=tokens(1000)))
    freed = applied(got)[0]["cleared_input_tokens"]
    text = " ".join(str(course.llm.explain(got)).split())
    assert "context_editing" in text and "read_file call_0, read_file call_1" in text
    assert f"freeing {freed} tokens" in text
    steps = [s["rule"] for s in got.model_extra["teaching_trace"]]
    assert steps[:2] == ["validation", "context_editing"]


def test_a_long_trace_names_ten_cleared_tool_uses_and_counts_the_rest(client):
    got = create(client, agent_run(["read_file"] * 15, size=40), edit(trigger=tokens(1000), keep=keep(1)))
    assert applied(got)[0]["cleared_tool_uses"] == 14
    text = " ".join(str(course.llm.explain(got)).split())
    assert "read_file call_9" in text and "read_file call_10" not in text and "and 4 more" in text


def test_a_prompt_over_the_window_that_the_edit_brings_under_it_is_served(client):
    """The edit runs before the window check, as a provider clears before the model reads."""
    messages = agent_run(["read_file"] * 8, size=200)
    small = "teaching-model-8k"
    with pytest.raises(openai.BadRequestError, match="maximum context length"):
        client.chat.completions.create(model=small, messages=messages, tools=TOOLS)
    got = client.chat.completions.create(model=small, messages=messages, tools=TOOLS,
                                         extra_body=edit(trigger=tokens(4000), keep=keep(1)))
    assert got.usage.prompt_tokens < 8192 and applied(got)[0]["cleared_tool_uses"] == 7


def test_edits_apply_in_order_and_an_empty_list_applies_none(client):
    messages = agent_run(["read_file"] * 6)
    assert applied(create(client, messages, {"context_management": {"edits": []}})) == []
    two = {"context_management": {"edits": [
        {"type": EDIT_TYPE, "trigger": tokens(1000), "keep": keep(4)},
        {"type": EDIT_TYPE, "trigger": tokens(1000), "keep": keep(1)}]}}
    got = applied(create(client, messages, two))
    assert [r["cleared_tool_uses"] for r in got] == [2, 3]  # the second clears what the first kept


# ------------------------------------------------------------------ streaming

def test_a_streamed_reply_is_the_same_and_carries_the_field_on_its_finish_chunk(client):
    messages = agent_run(["read_file"] * 5)
    extra = edit(trigger=tokens(1000))
    whole = create(client, messages, extra)
    chunks = list(create(client, messages, extra, stream=True, stream_options={"include_usage": True}))
    carrying = [c for c in chunks if "context_management" in (c.model_extra or {})]
    assert len(carrying) == 1 and carrying[0].choices[0].finish_reason is not None
    assert carrying[0].model_extra["context_management"] == whole.model_extra["context_management"]
    message = whole.choices[0].message
    text = "".join(ch.delta.content or "" for c in chunks for ch in c.choices)
    calls = [(d.id, d.function.name) for c in chunks for ch in c.choices for d in ch.delta.tool_calls or ()
             if d.id]
    assert text == (message.content or "")
    assert calls == [(t.id, t.function.name) for t in message.tool_calls or ()]
    assert billed(chunks[-1].usage) == billed(whole.usage)


# ------------------------------------------------------------------ the prompt cache

def test_the_cache_misses_from_the_first_cleared_message_on():
    """A cached conversation grown past the trigger: only the blocks before the first cleared
    message (the tools block, the system prompt, the request, the first call) are hits."""
    system = "You are a coding agent. " + "Follow the house rules in every step. " * 220
    options = edit(trigger=tokens(10_000), keep=keep(2))
    short, grown = agent_run(["read_file"] * 3, system=system), agent_run(["read_file"] * 6, system=system)
    with course.llm.serve() as server:
        client = server.client()
        first = create(client, short, options)
        assert applied(first) == [] and first.usage.prompt_tokens <= 10_000
        again = create(client, grown, options)
    [record] = applied(again)
    assert record["cleared_tool_uses"] == 4
    before_first_cleared = fixed_token_count(TOOLS) - fixed_token_count(None) + sum(
        message_token_count(m) for m in grown[:3])
    old, new = prompt_token_ids(short, TOOLS), prompt_token_ids(cleared(grown, [3, 5, 7, 9]), TOOLS)
    shared = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
    # the prompts part inside the first cleared message (its envelope and header are shared)
    assert before_first_cleared <= shared < before_first_cleared + message_token_count(grown[3])
    cached = again.usage.prompt_tokens_details.cached_tokens
    assert cached == shared // 128 * 128 >= 1024
    # without the edit, the whole short prompt but its reply primer would have been a hit
    unedited = prompt_token_ids(grown, TOOLS)
    whole = next(i for i, (a, b) in enumerate(zip(old, unedited)) if a != b)
    assert whole >= first.usage.prompt_tokens - 3 and cached < whole // 128 * 128


# ------------------------------------------------------------------ malformed options: HTTP 400

BAD = [
    ("a string", "context_management"),
    ({"edit": []}, "context_management.edit"),
    ({}, "context_management.edits"),
    ({"edits": {"type": EDIT_TYPE}}, "context_management.edits"),
    ({"edits": ["clear"]}, "context_management.edits[0]"),
    ({"edits": [{"type": "clear_thinking_20251015"}]}, "context_management.edits[0].type"),
    ({"edits": [{"type": EDIT_TYPE, "keep": 3}]}, "context_management.edits[0].keep"),
    ({"edits": [{"type": EDIT_TYPE, "keep": keep(-1)}]}, "context_management.edits[0].keep.value"),
    ({"edits": [{"type": EDIT_TYPE, "keep": keep(1.5)}]}, "context_management.edits[0].keep.value"),
    ({"edits": [{"type": EDIT_TYPE, "keep": {"type": "tool_uses", "value": True}}]},
     "context_management.edits[0].keep.value"),
    ({"edits": [{"type": EDIT_TYPE, "trigger": {"type": "tool_uses", "value": 3}}]},
     "context_management.edits[0].trigger.type"),
    ({"edits": [{"type": EDIT_TYPE, "trigger": {"type": "input_tokens"}}]},
     "context_management.edits[0].trigger.value"),
    ({"edits": [{"type": EDIT_TYPE, "clear_at_least": {"type": "input_tokens", "value": 5, "x": 1}}]},
     "context_management.edits[0].clear_at_least.x"),
    ({"edits": [{"type": EDIT_TYPE, "exclude_tools": "web_search"}]},
     "context_management.edits[0].exclude_tools"),
    ({"edits": [{"type": EDIT_TYPE, "exclude_tools": ["web_search", 7]}]},
     "context_management.edits[0].exclude_tools[1]"),
    ({"edits": [{"type": EDIT_TYPE, "clear_tool_inputs": "yes"}]},
     "context_management.edits[0].clear_tool_inputs"),
    ({"edits": [{"type": EDIT_TYPE, "keep_last": 3}]}, "context_management.edits[0].keep_last"),
]


@pytest.mark.parametrize("value, field", BAD, ids=[field + f"-{n}" for n, (_, field) in enumerate(BAD)])
def test_a_malformed_option_is_a_400_naming_the_field(client, value, field):
    with pytest.raises(openai.BadRequestError) as refused:
        create(client, agent_run(["read_file"]), {"context_management": value})
    error = refused.value.body
    assert error["param"] == field and f"'{field}'" in error["message"], error
    assert error["type"] == "invalid_request_error"


# ------------------------------------------------------------------ a property

@st.composite
def conversations(draw):
    """Rounds of one or several (parallel) calls, results from empty to huge, and now and then
    an id used again (which the teaching model refuses, as OpenAI does)."""
    messages = [{"role": "system", "content": draw(st.sampled_from(["Be brief.", "rules " * 300]))},
                {"role": "user", "content": "Read the project and search the web for the error"}]
    ids: list[str] = []
    for _ in range(draw(st.integers(1, 7))):
        if draw(st.booleans()):
            messages.append({"role": "user", "content": draw(st.sampled_from(["go on", "and the next"]))})
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            reuse = ids and draw(st.integers(0, 59)) == 0
            ids.append(draw(st.sampled_from(ids)) if reuse else f"id{len(ids)}")
            calls.append(call(ids[-1], draw(st.sampled_from(sorted(ARG))), draw(st.text(max_size=8))))
        messages.append({"role": "assistant", "content": draw(st.none() | st.just("Let me look.")),
                         "tool_calls": calls})
        for c in draw(st.permutations(calls)):
            size = draw(st.sampled_from([0, 1, 20, 300, 3000]))
            messages.append({"role": "tool", "tool_call_id": c["id"],
                             "content": draw(st.sampled_from(["", "ok", "x"])) + "output line\n" * size})
    required = {"type": st.just(EDIT_TYPE), "trigger": st.integers(0, 4_000).map(tokens)}
    options = draw(st.fixed_dictionaries(required, optional={
        "keep": st.integers(0, 5).map(keep),
        "clear_at_least": st.integers(0, 3_000).map(tokens),
        "exclude_tools": st.lists(st.sampled_from(sorted(ARG)), max_size=2),
        "clear_tool_inputs": st.booleans()}))
    return messages, options


def unique_ids(messages) -> bool:
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
    return len(ids) == len(set(ids))


@settings(derandomize=True, deadline=None, max_examples=100)
@given(conversations())
def test_the_edit_keeps_pairing_and_other_messages_and_frees_what_it_reports(client, case):
    messages, options = case
    extra = {"context_management": {"edits": [options]}}
    outcome = apply_edits(messages, parse_context_management(extra["context_management"]),
                          fixed_token_count(TOOLS), message_token_count)  # never raises
    if not unique_ids(messages):
        with pytest.raises(openai.BadRequestError) as refused:
            create(client, messages, extra)
        assert refused.value.body["code"] == "duplicate_tool_call_id"
        return
    edited = outcome.messages
    assert len(edited) == len(messages)
    for old, new in zip(messages, edited):
        if old["role"] == "tool":
            assert new == old or new == {**old, "content": PLACEHOLDER}
        elif old.get("tool_calls") and options.get("clear_tool_inputs"):
            assert [c["id"] for c in new["tool_calls"]] == [c["id"] for c in old["tool_calls"]]
            assert {k: v for k, v in new.items() if k != "tool_calls"} == \
                   {k: v for k, v in old.items() if k != "tool_calls"}
        else:
            assert new == old  # never touches a non-tool message
    assert_paired(edited)
    got = create(client, messages, extra)
    plain = create(client, messages)
    assert applied(got) == outcome.applied_edits
    freed = sum(r["cleared_input_tokens"] for r in applied(got))
    assert all(r["cleared_input_tokens"] > 0 and r["cleared_tool_uses"] > 0 for r in applied(got))
    assert got.usage.prompt_tokens == plain.usage.prompt_tokens - freed
    assert got.usage.prompt_tokens == len(prompt_token_ids(edited, TOOLS))
    if applied(got):
        kept = options.get("keep", keep(3))["value"]
        uses = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
        tail = set(uses[len(uses) - kept:]) if kept else set()
        for old, new in zip(messages, edited):
            if old.get("tool_call_id") in tail:
                assert new == old  # the last `keep` tool uses stay byte for byte
