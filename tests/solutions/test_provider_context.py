"""Chapter 14's answers: chain_turns against sending the conversation whole, the client-side
clear_tool_uses against the teaching model's server-side edit (hypothesis: the same messages,
the same figures, pairing intact), cache_loss, choose_strategy on the decision table's cases."""
import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.context_editing import ClearToolUses, apply_edits
from course.llm.template import fixed_token_count, message_token_count, prompt_token_ids
from solutions.compaction import check_pairing
from solutions.provider_context import (CHAT_TOOLS, INSTRUCTIONS, PLACEHOLDER, STRATEGIES, TURNS,
                                        cache_loss, chain_turns, choose_strategy, clear_tool_uses,
                                        execute_tool, fixed_tokens, message_tokens, tool_run)

MODEL = course.llm.MODEL_NAME


@pytest.fixture(scope="module")
def server():
    with course.llm.serve() as handle:
        yield handle


# ------------------------------------------------------------------ chain_turns
def whole_conversation_prompts(turns):
    """The prompt_tokens of every request of the same conversation sent whole (Chat Completions)."""
    with course.llm.serve() as s:
        client, history, per_turn = s.client(), [{"role": "system", "content": INSTRUCTIONS}], []
        for turn in turns:
            history.append({"role": "user", "content": turn})
            billed = 0
            while True:
                reply = client.chat.completions.create(model=MODEL, messages=history, tools=CHAT_TOOLS)
                billed += reply.usage.prompt_tokens
                message = reply.choices[0].message
                history.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    history.append({"role": "tool", "tool_call_id": call.id,
                                    "content": execute_tool(call.function.name, json.loads(call.function.arguments))})
            per_turn.append(billed)
        return per_turn


def test_a_chained_conversation_is_billed_as_if_sent_whole(server):
    rows = chain_turns(server.client(), TURNS)
    assert [r["input"] for r in rows] == TURNS
    assert all(r["text"] and r["requests"] == 2 for r in rows), "every turn calls a tool, then answers"
    assert [r["input_tokens"] for r in rows] == whole_conversation_prompts(TURNS)
    assert rows[-1]["input_tokens"] > 5 * rows[0]["input_tokens"]


def test_each_turn_continues_the_last_response(server):
    client = server.client()
    rows = chain_turns(client, TURNS[:3])
    for before, after in zip(rows, rows[1:]):
        chained = client.responses.retrieve(after["response_id"])
        assert chained.previous_response_id is not None
        first = client.responses.retrieve(chained.previous_response_id)
        assert first.previous_response_id == before["response_id"]  # the turn's first request


def test_store_false_keeps_nothing_and_bills_the_same(server):
    client = server.client()
    rows = chain_turns(client, TURNS[:4], store=False)
    assert [r["text"] for r in rows] == [r["text"] for r in chain_turns(client, TURNS[:4])]
    assert [r["input_tokens"] for r in rows] == whole_conversation_prompts(TURNS[:4])
    with pytest.raises(Exception, match="not found"):
        client.responses.retrieve(rows[0]["response_id"])


def test_a_tool_that_raises_is_told_to_the_model(server):
    def broken(name, arguments):
        raise ConnectionError("down")
    seen = []
    def recording(name, arguments):
        seen.append(name)
        return broken(name, arguments)
    rows = chain_turns(server.client(), TURNS[:1], execute=recording, max_calls=3)
    # the teaching model retries a failed call; the loop stops at max_calls, nothing escapes
    assert rows[0]["requests"] == 3 and rows[0]["text"] is None and len(seen) == 3


# ------------------------------------------------------------------ clear_tool_uses
def server_edit(messages, trigger, keep, at_least, exclude, tools=None):
    edit = ClearToolUses(trigger=trigger, keep=keep, clear_at_least=at_least, exclude_tools=tuple(exclude))
    return apply_edits(messages, [edit], fixed_token_count(tools), message_token_count)


@st.composite
def histories(draw):
    messages = [{"role": "system", "content": "agent"}, {"role": "user", "content": "task"}]
    for n in range(draw(st.integers(0, 12))):
        names = draw(st.lists(st.sampled_from(["read_file", "search", "save_note"]), min_size=0, max_size=3))
        calls = [{"id": f"c{n}_{k}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps({"n": n})}} for k, name in enumerate(names)]
        message = {"role": "assistant", "content": draw(st.sampled_from(["", "Looking.", None]))}
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
        order = draw(st.permutations(calls)) if calls else []
        for call in order:  # parallel results in any order
            size = draw(st.sampled_from([0, 1, 3, 40, 400]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "x y " * size})
        if draw(st.booleans()):
            messages.append({"role": "user", "content": "go on"})
    return messages


@settings(max_examples=150, deadline=None)
@given(histories(), st.integers(0, 3000), st.integers(0, 5), st.sampled_from([0, 1, 50, 400, 5000]),
       st.sampled_from([(), ("save_note",), ("read_file", "search")]))
def test_the_client_side_edit_is_the_servers(messages, trigger, keep, at_least, exclude):
    before = copy.deepcopy(messages)
    mine = clear_tool_uses(messages, trigger, keep, at_least, exclude)
    theirs = server_edit(messages, trigger, keep, at_least, exclude)
    assert messages == before, "the input is not changed"
    assert mine["messages"] == theirs.messages
    applied = theirs.applied_edits[0] if theirs.applied_edits else {"cleared_tool_uses": 0, "cleared_input_tokens": 0}
    assert (mine["cleared_tool_uses"], mine["cleared_input_tokens"]) == \
        (applied["cleared_tool_uses"], applied["cleared_input_tokens"])
    assert check_pairing(mine["messages"]), "pairing intact"
    assert len(prompt_token_ids(mine["messages"])) == len(prompt_token_ids(messages)) - mine["cleared_input_tokens"]
    assert mine["cleared_input_tokens"] == 0 or mine["cleared_input_tokens"] >= at_least


def test_the_edit_matches_the_teaching_models_usage(server):
    messages = tool_run(30)
    body = {"edits": [{"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 8000},
                       "keep": {"type": "tool_uses", "value": 3}, "exclude_tools": ["save_note"]}]}
    reply = server.client().chat.completions.create(model=MODEL, messages=messages,
                                                    extra_body={"context_management": body})
    mine = clear_tool_uses(messages, 8000, 3, 0, ("save_note",))
    applied = reply.model_extra["context_management"]["applied_edits"][0]
    assert applied["cleared_input_tokens"] == mine["cleared_input_tokens"] > 0
    assert reply.usage.prompt_tokens == fixed_tokens() + sum(message_tokens(m) for m in mine["messages"])
    kept_notes = [m for m in mine["messages"] if m["role"] == "tool" and m["content"].startswith("saved note")]
    assert len(kept_notes) == 6, "excluded tools are never cleared"


def test_under_the_trigger_or_clear_at_least_nothing_changes():
    messages = tool_run(10)
    size = fixed_tokens() + sum(message_tokens(m) for m in messages)
    assert clear_tool_uses(messages, size, 0)["cleared_tool_uses"] == 0
    assert clear_tool_uses(messages, size - 1, 0)["cleared_tool_uses"] > 0
    freed = clear_tool_uses(messages, 0, 2)["cleared_input_tokens"]
    assert clear_tool_uses(messages, 0, 2, freed + 1)["messages"] == messages
    assert clear_tool_uses(messages, 0, 2, freed)["cleared_input_tokens"] == freed


# ------------------------------------------------------------------ cache_loss
def test_cache_loss_counts_from_the_first_changed_message():
    before = tool_run(12)
    after = clear_tool_uses(before, 0, 3)["messages"]
    first = next(i for i, (a, b) in enumerate(zip(before, after)) if a != b)
    assert after[first]["content"] == PLACEHOLDER
    assert cache_loss(before, after) == sum(message_tokens(m) for m in before[first:])
    assert cache_loss(before, before) == 0
    assert cache_loss(before, before + [{"role": "user", "content": "more"}]) == 0
    assert cache_loss(before, before[:-1]) == message_tokens(before[-1])
    assert cache_loss(before, []) == sum(message_tokens(m) for m in before)


@settings(max_examples=60, deadline=None)
@given(histories(), st.integers(0, 5))
def test_cache_loss_is_what_the_edit_put_after_the_shared_prefix(messages, keep):
    after = clear_tool_uses(messages, 0, keep)["messages"]
    loss = cache_loss(messages, after)
    assert 0 <= loss <= sum(message_tokens(m) for m in messages)
    assert (loss == 0) == (after == messages)


def test_the_teaching_models_cache_misses_from_the_first_cleared_message(server):
    client = server.client()
    before = tool_run(20)
    client.chat.completions.create(model=MODEL, messages=before)  # warm the cache
    after = clear_tool_uses(before, 0, 3)["messages"]
    usage = client.chat.completions.create(model=MODEL, messages=after).usage
    total = fixed_tokens() + sum(message_tokens(m) for m in before)
    shared = total - fixed_tokens() - cache_loss(before, after)  # tokens of the unchanged messages
    assert usage.prompt_tokens_details.cached_tokens <= shared
    assert shared - usage.prompt_tokens_details.cached_tokens < 128 + 10  # its cache works in blocks


# ------------------------------------------------------------------ choose_strategy
@pytest.mark.parametrize("requirements, strategy", [
    ({}, "server compaction"),
    ({"provider": "other"}, "own compaction"),
    ({"control": True}, "own compaction"),
    ({"inspect": True}, "own compaction"),
    ({"portable": True}, "own compaction"),
    ({"provider": "anthropic", "tool_heavy": True}, "context editing"),
    ({"provider": "anthropic", "tool_heavy": True, "portable": True}, "own compaction"),
    ({"provider": "openai", "tool_heavy": True}, "server compaction"),
    ({"provider": "anthropic"}, "server compaction"),
])
def test_the_decision_table(requirements, strategy):
    choice = choose_strategy(requirements)
    assert choice["strategy"] == strategy and choice["strategy"] in STRATEGIES
    assert choice["store"] is True and choice["why"]


def test_no_retention_turns_storing_off_and_bad_requirements_are_refused():
    assert choose_strategy({"no_retention": True}) == {**choose_strategy({}), "store": False}
    with pytest.raises(ValueError, match="unknown requirements"):
        choose_strategy({"cheap": True})
    with pytest.raises(ValueError, match="provider"):
        choose_strategy({"provider": "acme"})
