"""Reasoning models (course/llm/reasoning.py), through the real openai SDK: `reasoning_content`
before the reply, exact `reasoning_tokens`, each history policy's prompt and 400s, streaming, and
`GET /v1/models` with the policies."""
import json

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm import template
from course.llm.models import MODELS, REASONER
from course.llm.reasoning import POLICIES, THINK_OPEN, think_text
from course.usage import read_usage
from tests.messages import function_tool
from tests.course.test_llm_stream_chunks import rebuilt

PLAIN = course.llm.MODEL_NAME


def tool(name, about, param):
    return function_tool(name, about, {param: {"type": "string", "description": param}})


TOOLS = [tool("read_file", "Read a file in the workspace", "path"),
         tool("list_dir", "List a directory", "directory"),
         tool("run_tests", "Run the unit tests of a target", "target"),
         tool("git_log", "Show the git history of a branch", "branch"),
         tool("search_code", "Search the code for a pattern", "pattern")]
# five calls in a row, one per reply: "then" makes each the next step
ASK = ("Read the file src/app{t}.py, then list the directory src/pkg{t}, then run the tests "
       "tests/test_{t}.py, then show the git history of branch feature-{t}, then search the code "
       "for pattern todo_{t}")
SYSTEM = {"role": "system", "content": "You are a careful coding assistant. " * 40}


def enc(text):
    return len(template.encoding().encode_ordinary(text))


@pytest.fixture()
def client():
    with course.llm.serve() as server:  # a fresh cache for each test
        yield server.client()


def sent_back(message, with_reasoning: bool) -> dict:
    """The assistant message as a client appends it to the history."""
    out = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [call.model_dump() for call in message.tool_calls]
    reasoning = (message.model_extra or {}).get("reasoning_content")
    if with_reasoning and reasoning is not None:
        out["reasoning_content"] = reasoning
    return out


def tool_loop(client, model, turns=4, with_reasoning=True):
    """`turns` user requests of five sequential calls each (20 calls for 4), the results sent
    back; the usage of every request and the final history."""
    messages, usages = [SYSTEM], []
    for t in range(turns):
        messages.append({"role": "user", "content": ASK.format(t=t)})
        while True:
            completion = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
            message = completion.choices[0].message
            usages.append(completion.usage)
            messages.append(sent_back(message, with_reasoning))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id, "content":
                                 f"{call.function.name} {call.function.arguments}: " + "ok line\n" * 15})
    return usages, messages


def expected_prompt(messages, tools, policy) -> int:
    """The documented template counted here, independently of course/llm/template.py: every
    block 3 + its text; an assistant message whose reasoning the policy keeps is
    "assistant\\n", THINK and BODY, each encoded on its own."""
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"
                     and not m["content"].strip().startswith("<tool_response>")), default=-1)
    total = 3 + enc("tools\n" + "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)) if tools else 0
    for i, m in enumerate(messages):
        header = f"tool {m['tool_call_id']}" if m["role"] == "tool" else m["role"]
        body = m.get("content") or ""
        for call in m.get("tool_calls") or []:
            body += "\n<tool_call>" + json.dumps({"id": call["id"], "name": call["function"]["name"],
                                                  "arguments": call["function"]["arguments"]},
                                                 ensure_ascii=False) + "</tool_call>"
        keeps = (m["role"] == "assistant" and isinstance(m.get("reasoning_content"), str)
                 and (policy == "pass_back" or (policy == "since_last_user" and i > last_user)))
        if keeps:
            total += 3 + enc(header + "\n") + enc(think_text(m["reasoning_content"])) + enc(body)
        else:
            total += 3 + enc(header + "\n" + body)
    return total + 1 + enc("assistant\n")


# ---------------------------------------------------------------- the reply
@pytest.mark.parametrize("policy", POLICIES)
def test_a_reasoning_model_reasons_first_and_decides_as_the_plain_model(client, policy):
    ask = [{"role": "user", "content": ASK.format(t=0)}]
    plain = client.chat.completions.create(model=PLAIN, messages=ask, tools=TOOLS).choices[0].message
    completion = client.chat.completions.create(model=REASONER[policy], messages=ask, tools=TOOLS)
    message = completion.choices[0].message
    reasoning = message.reasoning_content  # DeepSeek's field, kept by the SDK
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == [
        (c.function.name, c.function.arguments) for c in plain.tool_calls]
    assert message.content == plain.content
    # the trace in words: its steps, then the choice
    trace = completion.model_extra["teaching_trace"]
    assert reasoning.splitlines()[0] == f"validation: {trace[0]['why']}"
    assert 'memory: the request needs read_file(path="src/app0.py")' in reasoning
    assert reasoning.endswith('So I call read_file(path="src/app0.py").')
    # exact: THINK's tokens, and the completion counts them
    body = template.message_body(message.model_dump())
    usage = completion.usage
    assert usage.completion_tokens_details.reasoning_tokens == enc(think_text(reasoning))
    assert usage.completion_tokens == enc(think_text(reasoning)) + enc(body) + 1
    assert usage.completion_tokens == template.completion_token_count(plain.model_dump()) + \
        usage.completion_tokens_details.reasoning_tokens
    assert trace[1]["rule"] == "reasoning" and policy in trace[1]["why"]
    assert read_usage(usage).reasoning == usage.completion_tokens_details.reasoning_tokens


def test_a_plain_model_has_no_reasoning_and_ignores_it_sent_back(client):
    ask = [{"role": "user", "content": "Read the file src/a.py"}]
    completion = client.chat.completions.create(model=PLAIN, messages=ask, tools=TOOLS)
    message = completion.choices[0].message
    assert "reasoning_content" not in (message.model_extra or {})
    assert completion.usage.completion_tokens_details.reasoning_tokens == 0
    back = ask + [sent_back(message, False), {"role": "tool", "tool_call_id": message.tool_calls[0].id,
                                              "content": "print(1)"}]
    with_junk = [dict(m) for m in back]
    with_junk[1]["reasoning_content"] = "thoughts a plain model never had"
    a = client.chat.completions.create(model=PLAIN, messages=back, tools=TOOLS)
    b = client.chat.completions.create(model=PLAIN, messages=with_junk, tools=TOOLS)
    assert a.usage.prompt_tokens == b.usage.prompt_tokens == len(template.prompt_token_ids(back, TOOLS))
    assert a.choices[0].message.content == b.choices[0].message.content


def test_the_raw_template_shows_think_then_text_then_the_call(client):
    ask = [{"role": "user", "content": "Read the file src/a.py"}]
    message = client.chat.completions.create(model=REASONER["pass_back"], messages=ask,
                                             tools=TOOLS).choices[0].message
    history = ask + [sent_back(message, True)]
    raw = template.render_text(history, TOOLS, reasoning="pass_back")
    turn = raw[raw.index("<|im_start|>assistant\n"):]
    assert turn.startswith("<|im_start|>assistant\n<think>\n")
    assert turn.index("</think>") < turn.index("<tool_call>") < turn.index("<|im_end|>")
    assert "<think>" not in template.render_text(history, TOOLS)  # a plain model's rendering
    assert "<think>" not in template.render_text(history, TOOLS, reasoning="strip")


# ---------------------------------------------------------------- the policies' 400s
def first_round(client, model):
    ask = [{"role": "user", "content": "Read the file src/a.py"}]
    message = client.chat.completions.create(model=model, messages=ask, tools=TOOLS).choices[0].message
    return ask, message, {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "print(1)"}


def refused(client, model, messages):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
    return caught.value.body


def test_strip_refuses_reasoning_sent_back_and_takes_the_content_only(client):
    model = REASONER["strip"]
    ask, message, result = first_round(client, model)
    error = refused(client, model, ask + [sent_back(message, True), result])
    assert error["param"] == "messages[1].reasoning_content"
    assert error["code"] == "reasoning_content_not_allowed" and "DeepSeek R1" in error["message"]
    history = ask + [sent_back(message, False), result]
    done = client.chat.completions.create(model=model, messages=history, tools=TOOLS)
    assert done.usage.prompt_tokens == len(template.prompt_token_ids(history, TOOLS))  # as plain
    assert done.usage.prompt_tokens == expected_prompt(history, TOOLS, "strip")


def test_pass_back_refuses_a_tool_call_message_without_its_reasoning(client):
    model = REASONER["pass_back"]
    ask, message, result = first_round(client, model)
    error = refused(client, model, ask + [sent_back(message, False), result])
    assert error["param"] == "messages[1].reasoning_content"
    assert error["code"] == "missing_reasoning_content" and "Kimi K2" in error["message"]
    null = dict(sent_back(message, True), reasoning_content=None)
    assert refused(client, model, ask + [null, result])["code"] == "missing_reasoning_content"
    history = ask + [sent_back(message, True), result]
    done = client.chat.completions.create(model=model, messages=history, tools=TOOLS)
    assert done.usage.prompt_tokens == expected_prompt(history, TOOLS, "pass_back")
    # a text reply sent back without reasoning is fine: only tool-call messages need it
    text_turn = history + [sent_back(done.choices[0].message, False),
                           {"role": "user", "content": "Thanks. Now list the directory src"}]
    client.chat.completions.create(model=model, messages=text_turn, tools=TOOLS)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("junk", [7, ["a"], {"text": "x"}, True])
def test_reasoning_content_must_be_a_string_or_null(client, policy, junk):
    ask, message, result = first_round(client, REASONER[policy])
    error = refused(client, REASONER[policy], ask + [dict(sent_back(message, False),
                                                          reasoning_content=junk), result])
    assert error["param"] == "messages[1].reasoning_content" and error["code"] == "invalid_type"


@pytest.mark.parametrize("policy", POLICIES)
def test_only_assistant_messages_carry_reasoning(client, policy):
    error = refused(client, REASONER[policy], [{"role": "user", "content": "hi",
                                                "reasoning_content": "mine"}])
    assert error["param"] == "messages[0].reasoning_content"


def test_since_last_user_drops_the_thinking_of_earlier_turns(client):
    model = REASONER["since_last_user"]
    usages, history = tool_loop(client, model, turns=2)
    kept = template.prompt_token_ids(history, TOOLS, reasoning="since_last_user")
    everything = template.prompt_token_ids(history, TOOLS, reasoning="pass_back")
    assert len(kept) < len(everything)  # the first turn's thinking is not in the prompt
    assert len(kept) == expected_prompt(history, TOOLS, "since_last_user")
    # the request right after the new user message: the cache misses from the first assistant
    # message whose thinking was dropped, though the client sent exactly what came back
    new_turn = 6 + 1  # five calls and an answer in turn one, then the first request of turn two
    first_assistant = next(i for i, m in enumerate(history) if m["role"] == "assistant")
    before = template.prompt_token_ids(history[:first_assistant], TOOLS, reasoning="pass_back")[:-2]
    assert usages[new_turn - 1].prompt_tokens_details.cached_tokens <= len(before)
    assert usages[new_turn - 2].prompt_tokens_details.cached_tokens > len(before)  # within turn one
    assert (usages[new_turn - 1].prompt_tokens_details.cached_tokens
            < usages[new_turn - 2].prompt_tokens_details.cached_tokens)
    trace = client.chat.completions.create(model=model, messages=history + [
        {"role": "user", "content": "and now?"}], tools=TOOLS).model_extra["teaching_trace"]
    assert "reasoning dropped (before the last real user message" in trace[1]["why"]


def test_since_last_user_a_wrapped_tool_result_is_not_a_user_turn(client):
    model = REASONER["since_last_user"]
    ask, message, _ = first_round(client, model)
    history = ask + [sent_back(message, True),
                     {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "x"},
                     {"role": "user", "content": "<tool_response>\nmore output\n</tool_response>"}]
    done = client.chat.completions.create(model=model, messages=history, tools=TOOLS)
    assert done.usage.prompt_tokens == expected_prompt(history, TOOLS, "since_last_user")
    assert done.usage.prompt_tokens == len(template.prompt_token_ids(history, TOOLS, reasoning="pass_back"))
    real = history[:-1] + [{"role": "user", "content": "more output, from me"}]
    done = client.chat.completions.create(model=model, messages=real, tools=TOOLS)
    assert done.usage.prompt_tokens == len(template.prompt_token_ids(real, TOOLS))  # thinking dropped


# ---------------------------------------------------------------- the 20-call loop
def loop_figures(turns=4) -> dict:
    """Prompt and cached tokens of the same 20-call loop under each model, each on a fresh cache."""
    figures = {}
    for name, back in ((PLAIN, False), (REASONER["strip"], False), (REASONER["pass_back"], True),
                       (REASONER["since_last_user"], True)):
        with course.llm.serve() as server:
            usages, history = tool_loop(server.client(), name, turns, back)
        calls = sum(len(m.get("tool_calls") or []) for m in history)
        figures[name] = {"requests": len(usages), "calls": calls,
                         "prompt": sum(u.prompt_tokens for u in usages),
                         "cached": sum(u.prompt_tokens_details.cached_tokens for u in usages),
                         "reasoning": sum(u.completion_tokens_details.reasoning_tokens for u in usages)}
    return figures


def test_the_same_loop_under_each_policy():
    figures = loop_figures()
    plain, strip, back, since = (figures[n] for n in (PLAIN, REASONER["strip"], REASONER["pass_back"],
                                                      REASONER["since_last_user"]))
    assert all(f["calls"] == 20 and f["requests"] == 24 for f in figures.values())
    assert (strip["prompt"], strip["cached"]) == (plain["prompt"], plain["cached"])  # R1: as plain
    assert strip["prompt"] < since["prompt"] < back["prompt"]
    # uncached: since_last_user pays for dropping the thinking at every new user message
    assert since["prompt"] - since["cached"] > back["prompt"] - back["cached"] > strip["prompt"] - strip["cached"]
    assert plain["reasoning"] == 0 < strip["reasoning"] == back["reasoning"] == since["reasoning"]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(policy=st.sampled_from(POLICIES), turns=st.integers(1, 2),
       keep=st.lists(st.booleans(), min_size=12, max_size=12), junk_user=st.booleans())
def test_any_history_is_refused_exactly_by_the_policy_or_counted_exactly(policy, turns, keep, junk_user):
    """A history of rounds, each assistant message sent back with its reasoning or without (as
    `keep` says): a 400 exactly when the policy's rule says so, else the prompt counted exactly."""
    with course.llm.serve() as server:
        client = server.client()
        _, history = tool_loop(client, REASONER["pass_back"], turns)
        assistants = [i for i, m in enumerate(history) if m["role"] == "assistant"]
        for n, i in enumerate(assistants):
            if not keep[n % len(keep)]:
                history[i] = {k: v for k, v in history[i].items() if k != "reasoning_content"}
        history.append({"role": "user", "content": "<tool_response>ok</tool_response>" if junk_user
                        else "Now read the file src/end.py"})
        has = [i for i in assistants if "reasoning_content" in history[i]]
        missing = [i for i in assistants if i not in has and history[i].get("tool_calls")]
        wrong = has[:1] if policy == "strip" else missing[:1] if policy == "pass_back" else []
        try:
            done = client.chat.completions.create(model=REASONER[policy], messages=history, tools=TOOLS)
        except openai.BadRequestError as exc:
            assert wrong, exc.body
            assert exc.body["param"] == f"messages[{wrong[0]}].reasoning_content"
            return
        assert not wrong
        assert done.usage.prompt_tokens == expected_prompt(history, TOOLS, policy)
        assert done.usage.prompt_tokens == len(template.prompt_token_ids(history, TOOLS, reasoning=policy))


# ---------------------------------------------------------------- streaming, limits, listing
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("ask", ["Read the file src/a.py", "Tell me a story about 上下文工程"])
def test_streamed_equals_whole_with_the_reasoning_deltas_first(client, policy, ask):
    model, messages = REASONER[policy], [{"role": "user", "content": ask}]
    whole = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
    chunks = list(client.chat.completions.create(model=model, messages=messages, tools=TOOLS,
                                                 stream=True, stream_options={"include_usage": True}))
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    kinds = [("reasoning" if (d.model_extra or {}).get("reasoning_content") else
              "text" if d.content else "call" if d.tool_calls else None) for d in deltas]
    shown = [k for k in kinds if k]
    assert shown[0] == "reasoning" and shown.index("reasoning") == 0
    assert "reasoning" not in shown[shown.index(next(k for k in shown if k != "reasoning")):]
    reasoning = "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas)
    message = whole.choices[0].message
    assert reasoning == message.reasoning_content
    text, calls, finishes = rebuilt(chunks)
    assert text == (message.content or "") and finishes == [whole.choices[0].finish_reason]
    assert calls == [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                     for c in message.tool_calls or []]
    assert chunks[-1].usage == whole.usage


@pytest.mark.parametrize("limit", [1, 5, 40, 60])
def test_max_tokens_cuts_the_reasoning_first(client, limit):
    model, ask = REASONER["pass_back"], [{"role": "user", "content": "Tell me a story about caching"}]
    whole = client.chat.completions.create(model=model, messages=ask)
    thinks = whole.usage.completion_tokens_details.reasoning_tokens
    cut = client.chat.completions.create(model=model, messages=ask, max_completion_tokens=limit)
    message, usage = cut.choices[0].message, cut.usage
    assert cut.choices[0].finish_reason == "length" and usage.completion_tokens == limit
    if limit - 1 <= thinks:
        assert message.content is None and usage.completion_tokens_details.reasoning_tokens == limit - 1
        assert whole.choices[0].message.reasoning_content.startswith(message.reasoning_content)
        if message.reasoning_content:  # "" when not even "<think>\n" fits
            assert enc(THINK_OPEN + message.reasoning_content) <= limit
    else:
        assert message.reasoning_content == whole.choices[0].message.reasoning_content
        assert usage.completion_tokens_details.reasoning_tokens == thinks
        assert whole.choices[0].message.content.startswith(message.content or "")


def test_models_list_names_every_model_with_its_window_and_policy(client):
    listed = {m.id: m.model_extra for m in client.models.list()}
    assert list(listed) == list(MODELS)
    for name, spec in MODELS.items():
        assert listed[name]["context_window"] == spec.context_window
        assert listed[name].get("history_policy") == spec.reasoning
    by_policy = {extra["history_policy"]: name for name, extra in listed.items() if "history_policy" in extra}
    assert by_policy == REASONER and set(by_policy) == set(POLICIES)
    assert "history_policy" not in listed[PLAIN]


def test_help_lists_the_reasoning_models(capsys):
    from course.llm.__main__ import main

    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    for policy, name in REASONER.items():
        assert name in shown and policy in shown
    assert "reasoning_content" in shown and "reasoning_tokens" in shown


@pytest.mark.parametrize("policy", ["pass_back", "since_last_user"])
def test_context_editing_counts_the_reasoning_it_keeps(client, policy):
    """Anthropic-style clearing (context_editing.py) on a reasoning model: the tokens it frees and
    the prompt after it are counted as the policy renders the reasoning."""
    _, history = tool_loop(client, REASONER[policy], turns=1)
    history.append({"role": "user", "content": "Thanks. Now read the file src/last.py"})
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100},
            "keep": {"type": "tool_uses", "value": 1}}
    done = client.chat.completions.create(model=REASONER[policy], messages=history, tools=TOOLS,
                                          extra_body={"context_management": {"edits": [edit]}})
    applied = done.model_extra["context_management"]["applied_edits"][0]
    assert applied["cleared_tool_uses"] == 4
    before = len(template.prompt_token_ids(history, TOOLS, reasoning=policy))
    assert done.usage.prompt_tokens == before - applied["cleared_input_tokens"]
