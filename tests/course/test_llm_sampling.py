"""Sampling with a seed (course/llm/sampling.py), through the real openai SDK: `temperature`,
`top_p` and `seed` as the OpenAI API takes them. Temperature 0, or none, is the reply the decision
list always gave; above 0 the rules' scored choices are drawn from a softmax, the same seed and
request giving the same reply; better tool descriptions make the right tool more likely."""
import collections
import json

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.sampling import nucleus, softmax, uniform
from tests.course.test_llm_model import VANCOUVER, VANCOUVER_TOOLS
from tests.course.test_llm_policy import paris_conversation
from tests.course.test_llm_stream_chunks import rebuilt

MODEL = course.llm.MODEL_NAME
SEEDS = range(200)


def tool(name, about=None, param="order_id", kind="integer"):
    fn = {"name": name, "parameters": {"type": "object", "properties": {param: {"type": kind}},
                                       "required": [param]}}
    if about:
        fn["description"] = about
    return {"type": "function", "function": fn}


# A shop's tools, described as a good tool definition describes them (the textbook, part 9) ...
DESCRIBED = [
    tool("get_order_status", "Where an order is now: shipped, in transit or delivered, with its "
                             "tracking number."),
    tool("cancel_order", "Cancel an order that has not shipped yet; nothing is charged."),
    tool("refund_order", "Refund an order that arrived broken, damaged or wrong, or never "
                         "arrived: the money goes back to the customer's card."),
    tool("change_shipping_address", "Change where an order that has not shipped yet will be "
                                    "delivered."),
]
# ... and the same tools with their signatures only (experiment 2-4's "no tool descriptions")
BARE = [tool(t["function"]["name"]) for t in DESCRIBED]
REFUND = [{"role": "user", "content": "My order 1234 arrived broken so I want my money back"}]
# Two tools the request fits equally well: at temperature 0 the first offered, above 0 either.
AMBIGUOUS = [tool("search_web", "Search the web", "query", "string"),
             tool("search_files", "Search the files of the workspace", "query", "string")]
RELEASE = [{"role": "user", "content": "Search for the release notes of version 2"}]


@pytest.fixture(scope="module")
def client():
    with course.llm.serve() as server:
        yield server.client()


def create(client, messages, tools=None, **kwargs):
    return client.chat.completions.create(model=MODEL, messages=messages,
                                          **({"tools": tools} if tools else {}), **kwargs)


def names(completion) -> list[str]:
    return [c.function.name for c in completion.choices[0].message.tool_calls or []]


def reply(completion) -> dict:
    """What a sampled reply is: its id, message and finish reason."""
    choice = completion.choices[0]
    return {"id": completion.id, "message": choice.message.model_dump(exclude_none=True),
            "finish": choice.finish_reason}


def trace(completion) -> list[dict]:
    return completion.model_extra["teaching_trace"]


def draws(completion) -> list[dict]:
    return [step["draw"] for step in trace(completion) if step["rule"] == "sampling" and "draw" in step]


def tally(client, messages, tools, **kwargs) -> collections.Counter:
    """Which tools the reply calls, over SEEDS."""
    return collections.Counter(" + ".join(names(create(client, messages, tools, seed=seed,
                                                       **kwargs))) or "(text)"
                               for seed in SEEDS)


# ------------------------------------------------------------------ temperature 0 is the old reply

ASKS = [VANCOUVER, REFUND, RELEASE,
        [{"role": "user", "content": "What's the weather in Boston in fahrenheit?"}],
        [{"role": "user", "content": "Hello! What are you?"}]]
TOOL_SETS = [VANCOUVER_TOOLS, DESCRIBED, BARE, AMBIGUOUS, DESCRIBED + AMBIGUOUS]


@settings(max_examples=60)
@given(st.sampled_from(ASKS), st.sampled_from(TOOL_SETS),
       st.none() | st.integers(-2 ** 63, 2 ** 63 - 1),
       st.none() | st.floats(0, 1, exclude_min=True))
def test_temperature_0_or_none_is_the_same_reply_whatever_seed_and_top_p(client, messages, tools,
                                                                          seed, top_p):
    plain = create(client, messages, tools)
    extra = {k: v for k, v in (("seed", seed), ("top_p", top_p)) if v is not None}
    for sent in ({"temperature": 0, **extra}, extra):
        same = create(client, messages, tools, **sent)
        assert reply(same) == reply(plain), f"{sent} changed the reply of temperature 0"
        assert (same.usage.prompt_tokens, same.usage.completion_tokens) == (
            plain.usage.prompt_tokens, plain.usage.completion_tokens)


def test_a_request_that_sets_no_sampling_field_has_no_sampling_step(client):
    """The traces the lessons print are as they were."""
    assert all(step["rule"] != "sampling" for step in trace(create(client, VANCOUVER, VANCOUVER_TOOLS)))


def test_an_omitted_temperature_is_said_to_be_0_unlike_openai(client):
    steps = [s["why"] for s in trace(create(client, RELEASE, AMBIGUOUS, seed=5)) if s["rule"] == "sampling"]
    assert steps[0].startswith("temperature omitted: 0 for the teaching model (OpenAI's default is 1)")
    assert "seed 5 change nothing" in steps[0]
    assert "temperature 0, so the best -> search_web" in steps[1]  # the scores, shown at 0 too


# ------------------------------------------------------------------ seeds

@settings(max_examples=60)
@given(st.sampled_from(ASKS), st.sampled_from(TOOL_SETS), st.floats(0.05, 2),
       st.floats(0.05, 1), st.integers(-2 ** 63, 2 ** 63 - 1), st.booleans())
def test_the_same_seed_and_request_give_the_same_reply(client, messages, tools, temperature, top_p,
                                                       seed, streamed):
    kwargs = {"temperature": temperature, "top_p": top_p, "seed": seed}
    first = create(client, messages, tools, **kwargs)
    again = create(client, messages, tools, **kwargs)
    assert reply(again) == reply(first) and trace(again) == trace(first)
    assert first.system_fingerprint == "teaching-model-1"
    if streamed:  # streamed, the same sampled reply
        text, calls, finishes = rebuilt(list(create(client, messages, tools, stream=True, **kwargs)))
        message = first.choices[0].message
        assert text == (message.content or "") and finishes == [first.choices[0].finish_reason]
        assert calls == [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                         for c in message.tool_calls or []]


def test_different_seeds_give_different_tool_choices_for_an_ambiguous_request(client):
    assert names(create(client, RELEASE, AMBIGUOUS)) == ["search_web"]  # temperature 0: the first
    counts = tally(client, RELEASE, AMBIGUOUS, temperature=1)
    assert set(counts) == {"search_web", "search_files"}
    assert min(counts.values()) >= 70, counts  # an even split of 200, give or take


def test_without_a_seed_one_is_derived_from_the_request_and_sending_it_gives_the_same_reply(client):
    derived = create(client, RELEASE, AMBIGUOUS, temperature=1)
    said = [s["why"] for s in trace(derived) if s["rule"] == "sampling"][0]
    assert "no seed sent, so one derived from the request" in said
    seed = int(said.split("send seed=")[1].split(" ")[0])
    assert reply(create(client, RELEASE, AMBIGUOUS, temperature=1)) == reply(derived)
    assert reply(create(client, RELEASE, AMBIGUOUS, temperature=1, seed=seed)) == reply(derived)


def test_the_streamed_reply_is_the_sampled_reply(client):
    for seed in range(20):
        whole = create(client, REFUND, BARE, temperature=1.5, seed=seed)
        text, calls, _ = rebuilt(list(create(client, REFUND, BARE, temperature=1.5, seed=seed,
                                             stream=True)))
        assert [c["name"] for c in calls] == names(whole)
        assert [c["id"] for c in calls] == [c.id for c in whole.choices[0].message.tool_calls or []]


# ------------------------------------------------------------------ the scores come from the context

def test_described_tools_pick_the_right_tool_far_more_often_than_bare_signatures(client):
    """The same request, 200 seeds at temperature 1: with descriptions refund_order wins almost
    every draw; with signatures only the four tools score nearly alike (and at temperature 0
    the first offered, get_order_status, wins: wrong)."""
    described = tally(client, REFUND, DESCRIBED, temperature=1)
    bare = tally(client, REFUND, BARE, temperature=1)
    print("described:", dict(described), "bare:", dict(bare))
    assert described["refund_order"] >= 180, described
    assert bare["refund_order"] <= 90, bare
    assert described["refund_order"] - bare["refund_order"] >= 100
    assert names(create(client, REFUND, DESCRIBED)) == ["refund_order"]
    assert names(create(client, REFUND, BARE)) == ["get_order_status"]


def test_a_lower_temperature_makes_the_best_choice_more_likely_but_cannot_break_a_tie(client):
    hot, cool = (tally(client, REFUND, DESCRIBED, temperature=t)["refund_order"] for t in (2, 0.3))
    assert hot < cool == 200, (hot, cool)
    # bare signatures: three tools score alike at any temperature; cooling only drops the fourth
    bare = tally(client, REFUND, BARE, temperature=0.3)
    assert set(bare) == {"refund_order", "cancel_order", "get_order_status"}
    assert max(bare.values()) < 100, bare


def test_a_unit_the_request_names_is_almost_always_the_value_drawn(client):
    def units(content):
        got = collections.Counter()
        for seed in SEEDS:
            calls = create(client, [{"role": "user", "content": content}], VANCOUVER_TOOLS,
                           temperature=1, seed=seed).choices[0].message.tool_calls
            got[json.loads(calls[0].function.arguments).get("unit")] += 1
        return got
    named, unnamed = units("What's the weather in Boston in fahrenheit?"), units("What's the weather in Boston?")
    assert named["fahrenheit"] >= 180 and unnamed["fahrenheit"] < named["fahrenheit"], (named, unnamed)
    assert unnamed["celsius"] > unnamed["fahrenheit"]  # the enum's first, the default


def test_whether_a_skill_is_loaded_is_drawn_too(client):
    """A request sharing one word with a skill: at temperature 0 no skill (two are needed); at
    temperature 1, "no skill" is only the likeliest candidate."""
    messages = [{"role": "system", "content": "<available_skills>\n- release-notes: Write release "
                                              "notes from the commits\n- fix-flaky-test: Diagnose "
                                              "and fix a flaky unit test\n</available_skills>"},
                {"role": "user", "content": "Write a haiku"}]
    tools = [tool("load_skill", "Load a skill's instructions by name", "name", "string")]
    assert names(create(client, messages, tools)) == []
    loaded = collections.Counter(
        json.loads(c.function.arguments)["name"] if c else "no skill"
        for c in (next(iter(create(client, messages, tools, temperature=1, seed=s)
                            .choices[0].message.tool_calls or [None])) for s in range(100)))
    assert loaded["no skill"] > loaded["release-notes"] > loaded["fix-flaky-test"] > 0, loaded


def test_whether_an_earlier_result_answers_is_drawn_too(client):
    """No offered tool fits; an earlier result shares two words with the question: at
    temperature 0 it answers, at temperature 1 it does most of the time, "none" otherwise."""
    messages, clock = paris_conversation("Remind me about cloudy Paris"), VANCOUVER_TOOLS[:1]
    assert trace(create(client, messages, clock))[-1]["rule"] == "memory"
    rules = collections.Counter(trace(create(client, messages, clock, temperature=1,
                                             seed=s))[-1]["rule"] for s in range(100))
    assert rules["memory"] > rules["default"] > 0, rules


# ------------------------------------------------------------------ top_p, the trace, usage

def test_top_p_cuts_the_unlikely_candidates(client):
    assert set(tally(client, REFUND, DESCRIBED, temperature=2, top_p=0.3)) == {"refund_order"}
    assert len(tally(client, REFUND, DESCRIBED, temperature=2)) > 1
    step = draws(create(client, REFUND, DESCRIBED, temperature=2, top_p=0.3, seed=1))[0]
    assert [c[2] for c in step["candidates"]] == [1.0, 0.0, 0.0, 0.0]


def test_the_trace_shows_the_candidates_their_scores_probabilities_and_the_draw(client):
    completion = create(client, REFUND, DESCRIBED, temperature=1, seed=7)
    text = " ".join(str(course.llm.explain(completion)).split())
    assert ("temperature 1: each choice among scored candidates is drawn from softmax(score / 1); "
            "top_p 1 (all candidates); seed 7") in text
    assert ("which tool fits the ask \"My order 1234 arrived broken so I want my money back\": "
            "refund_order 7 (p 0.962), get_order_status 3 (p 0.018), cancel_order 3 (p 0.018), "
            "change_shipping_address 1 (p 0.002); draw u =") in text
    (step,) = draws(completion)
    assert [c[:2] for c in step["candidates"]] == [["refund_order", 7], ["get_order_status", 3],
                                                   ["cancel_order", 3], ["change_shipping_address", 1]]
    assert abs(sum(c[2] for c in step["candidates"]) - 1) < 1e-3 and 0 <= step["u"] < 1
    assert step["chosen"] == names(completion)[0]


def test_usage_and_the_prompt_cache_do_not_depend_on_sampling():
    long_system = {"role": "system", "content": "You are a shop's assistant. " * 400}
    messages = [long_system] + REFUND
    with course.llm.serve() as server:
        client = server.client()
        first = create(client, messages, BARE)
        others = [create(client, messages, BARE, temperature=2, seed=s) for s in range(6)]
    assert len({tuple(names(c)) for c in others}) > 1  # the replies differ ...
    for other in others:  # ... the prompt, its count and its cache hits do not
        assert other.usage.prompt_tokens == first.usage.prompt_tokens
        assert other.usage.prompt_tokens_details.cached_tokens == others[0].usage.prompt_tokens_details.cached_tokens > 1024


# ------------------------------------------------------------------ 400s, as OpenAI answers them

@pytest.mark.parametrize("field,value,code", [
    ("temperature", "hot", "invalid_type"), ("temperature", True, "invalid_type"),
    ("temperature", 2.5, "decimal_above_max_value"), ("temperature", -0.1, "decimal_below_min_value"),
    ("top_p", 1.01, "decimal_above_max_value"), ("top_p", -1, "decimal_below_min_value"),
    ("top_p", [1], "invalid_type"), ("seed", "7", "invalid_type"), ("seed", 1.5, "invalid_type"),
    ("seed", True, "invalid_type"), ("seed", 2 ** 63, "integer_above_max_value"),
    ("seed", -(2 ** 63) - 1, "integer_below_min_value"),
])
def test_a_bad_sampling_value_is_a_400_naming_the_field(client, field, value, code):
    with pytest.raises(openai.BadRequestError) as info:
        create(client, RELEASE, AMBIGUOUS, extra_body={field: value})
    assert info.value.body["param"] == field and info.value.body["code"] == code
    assert f"'{field}'" in info.value.message


def test_the_extremes_are_accepted(client):
    for kwargs in ({"temperature": 2, "top_p": 0, "seed": 2 ** 63 - 1},
                   {"temperature": 1e-300, "seed": -(2 ** 63)}, {"temperature": 0, "top_p": 1}):
        assert names(create(client, REFUND, DESCRIBED, **kwargs)) == ["refund_order"]


# ------------------------------------------------------------------ the arithmetic

@given(st.lists(st.integers(-5, 12) | st.floats(-5, 12), min_size=1, max_size=12),
       st.floats(1e-6, 2), st.floats(0, 1))
def test_softmax_sums_to_1_and_the_nucleus_keeps_the_best(scores, temperature, top_p):
    p = softmax(scores, temperature)
    assert abs(sum(p) - 1) < 1e-9
    kept = nucleus(p, top_p)
    assert kept[0] == max(range(len(p)), key=lambda i: (p[i], -i))
    assert sum(p[i] for i in kept[:-1]) < top_p or len(kept) == 1


def test_draws_are_uniform_enough_and_fixed():
    values = [uniform(42, k) for k in range(2000)]
    assert all(0 <= u < 1 for u in values) and values == [uniform(42, k) for k in range(2000)]
    assert all(180 <= sum(t / 10 <= u < (t + 1) / 10 for u in values) <= 220 for t in range(10))
