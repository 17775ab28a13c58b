"""Chapter 11's compactor keeps its promises on other agents' transcripts (issue 25): layer 3
never overwrites what layer 1 saved, reused call ids are neither mixed up by the budget nor
accepted by LayeredCompactor, and a context over the window is never returned silently.
Properties run over `lesson_support.foreign_transcripts` (every shape, mixed)."""
import pytest
from hypothesis import given, settings, strategies as st

from lesson_support.foreign_transcripts import SHAPES, transcripts
from solutions.compaction import check_pairing, rule_based_summary, unique_call_ids
from solutions.production_compaction import (CLEARED_MARK, LAYERS, ContextOverflow,
                                             LayeredCompactor, ResultStore, Settings,
                                             archive_turn, budget_tool_results, is_preview,
                                             micro_compact)
from solutions.compaction import text_of
from tests.messages import calling, tool_call, tool_result, user

PROPERTY = settings(max_examples=25, deadline=None, derandomize=True)
HEAD = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Go."}]
BIG = "\n".join(f"line {k}: " + "x" * 60 for k in range(300))


def turn(call_id: str, content: str, name: str = "run_command") -> list[dict]:
    return [calling(tool_call(call_id, name, {"command": "make"})), tool_result(call_id, content)]


def marker_path(content: str) -> str:
    """The file a preview or a cleared marker points to."""
    if is_preview(content):
        return content[len("[output saved to "):].split(":", 1)[0]
    return content.split("the full text is at ", 1)[1].split(",", 1)[0]


def replay(compactor, messages):
    """Call the compactor before each request (after every complete turn), as an agent does."""
    context = None
    for end in range(1, len(messages) + 1):
        if end < len(messages) and messages[end].get("role") == "tool":
            continue
        context = compactor(messages[:end])
    return context


def originals_of(messages) -> dict:
    return {m["tool_call_id"]: text_of(m["content"]) for m in messages if m.get("role") == "tool"}


# ------------------------------------------------------------------ item 1: micro keeps layer 1's file
def test_micro_never_overwrites_a_saved_output():
    messages = HEAD + turn("call_0", BIG) + [m for k in range(1, 6) for m in turn(f"call_{k}", "ok")]
    compactor = LayeredCompactor(("budget", "micro"),
                                 Settings(window=600, budget_chars=1_000, micro_keep=1))
    context = compactor(messages)
    assert any(e.layer == "micro" for e in compactor.events)
    cleared = next(m["content"] for m in context if m.get("tool_call_id") == "call_0")
    assert cleared.startswith(CLEARED_MARK)
    assert compactor.store.read(marker_path(cleared)) == BIG  # the full output, not the preview


def test_store_never_replaces_a_full_output_by_its_preview():
    store = ResultStore()
    shown = budget_tool_results(HEAD + turn("c1", BIG), 1_000, store)[-1]["content"]
    assert store.save("c1", shown) == marker_path(shown)
    assert store.files == {marker_path(shown): BIG}


def test_micro_saves_the_original_not_the_noise_free_text():
    noisy = "\n".join([f"[ {k:>2}%] Building C object o{k}.o" for k in range(50)]
                      + [f"warning {k}: unused variable" for k in range(100)] + ["[exit code: 0]"])
    messages = HEAD + turn("c0", noisy) + [m for k in range(1, 4) for m in turn(f"c{k}", "ok")]
    compactor = LayeredCompactor(("noise", "micro"), Settings(window=900, micro_keep=1))
    context = compactor(messages)
    cleared = next(m["content"] for m in context if m.get("tool_call_id") == "c0")
    assert compactor.store.read(marker_path(cleared)) == noisy


# ------------------------------------------------------------------ item 3: reused ids
def test_budget_does_not_mix_up_reused_ids():
    store = ResultStore()
    second = "second output\n" + BIG
    out = budget_tool_results(HEAD + turn("call_0", BIG) + turn("call_0", second), 1_000, store)
    first_path, second_path = marker_path(out[3]["content"]), marker_path(out[5]["content"])
    assert first_path != second_path
    assert store.read(first_path) == BIG and store.read(second_path) == second


def test_budget_decision_of_a_reused_id_is_its_own():
    store = ResultStore()
    out = budget_tool_results(HEAD + turn("call_0", "short") + turn("call_0", BIG), 1_000, store)
    assert out[3]["content"] == "short" and is_preview(out[5]["content"])


def test_layered_compactor_refuses_reused_ids_and_names_the_fix():
    messages = HEAD + turn("call_0", "a") + turn("call_0", "b")
    with pytest.raises(ValueError, match=r"unique_call_ids"):
        LayeredCompactor(("budget",))(messages)
    context = LayeredCompactor(("budget",))(unique_call_ids(messages))
    assert check_pairing(context)


def test_layered_compactor_refuses_broken_pairing():
    messages = HEAD + turn("c1", "a")[:1]  # a call without its result
    with pytest.raises(ValueError, match="pairing is broken"):
        LayeredCompactor(LAYERS, summarize=rule_based_summary)(messages)


# ------------------------------------------------------------------ item 5: over the window
def test_over_the_window_raises_with_the_parts():
    huge = [{"role": "system", "content": "rule " * 3_000}, {"role": "user", "content": "Go."}]
    compactor = LayeredCompactor(LAYERS, Settings(window=1_000), summarize=rule_based_summary)
    with pytest.raises(ContextOverflow) as caught:
        compactor(huge + turn("c1", "ok"))
    error = caught.value
    assert error.tokens > error.window == 1_000 and compactor.meter(error.context) == error.tokens
    assert "the head" in str(error) and "1,000" in str(error)
    assert compactor.events[-1].layer == "over"


def test_no_layer_logs_the_request_over_the_window():
    compactor = LayeredCompactor((), Settings(window=500))
    messages = HEAD + turn("c1", BIG)
    assert compactor(messages) == messages
    assert [e.layer for e in compactor.events] == ["over"]


def test_a_large_last_result_without_layer_1_overflows_loudly():
    compactor = LayeredCompactor(("noise", "micro"), Settings(window=2_000, micro_keep=0))
    context = compactor(HEAD + turn("c1", BIG))  # micro clears it: it fits
    assert compactor.meter(context) <= 2_000
    with pytest.raises(ContextOverflow):
        LayeredCompactor(("noise",), Settings(window=2_000))(HEAD + turn("c1", BIG))


# ------------------------------------------------------------------ properties over real shapes
def _settings(draw_window: int) -> Settings:
    return Settings(window=draw_window, budget_chars=600, micro_keep=2, keep_turns=2, cooldown=1)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_through_all_layers(shape):
    messages = unique_call_ids(SHAPES[shape](7, 4))
    compactor = LayeredCompactor(LAYERS, _settings(6_000), summarize=rule_based_summary)
    context = replay(compactor, messages)
    assert check_pairing(context) and compactor.meter(context) <= 6_000
    assert context[:2] == messages[:2] or context[0] == messages[0]
    _files_hold_full_outputs(compactor, context, messages)


def _files_hold_full_outputs(compactor, context, messages):
    full = originals_of(messages)
    for m in context:
        content = m.get("content")
        if m.get("role") == "tool" and isinstance(content, str) and (
                is_preview(content) or content.startswith(CLEARED_MARK)):
            assert compactor.store.read(marker_path(content)) == full[m["tool_call_id"]]


@PROPERTY
@given(transcripts(max_size=5), st.sampled_from([1_500, 4_000, 20_000]),
       st.sets(st.sampled_from(LAYERS)))
def test_compactor_fits_or_says_so_and_keeps_every_output(messages, window, layers):
    messages = unique_call_ids(messages)
    compactor = LayeredCompactor(tuple(layers), _settings(window), summarize=rule_based_summary)
    try:
        context = replay(compactor, messages)
    except ContextOverflow as error:
        assert error.tokens > window and compactor.events[-1].layer == "over"
        return
    assert check_pairing(context)
    over = compactor.meter(context) > window
    assert not over or (not layers and compactor.events[-1].layer == "over")
    _files_hold_full_outputs(compactor, context, messages)


@PROPERTY
@given(transcripts(features=("reused_ids", "parallel", "content_parts", "huge_result"),
                   max_size=4), st.integers(200, 5_000))
def test_budget_saves_every_replaced_output_whole(messages, limit):
    store = ResultStore()
    out = budget_tool_results(messages, limit, store)
    assert len(out) == len(messages)
    for before, after in zip(messages, out):
        if before.get("role") == "tool" and is_preview(after["content"]):
            assert store.read(marker_path(after["content"])) == text_of(before["content"])
        elif before.get("role") == "tool":
            assert after == before
    assert budget_tool_results(messages, limit, store) == out  # frozen


def test_micro_with_reused_ids_clears_each_result_with_its_own_file():
    messages = HEAD + turn("call_0", "first " + BIG) + turn("call_0", "second " + BIG) + turn("x", "ok")
    store, cleared = ResultStore(), {}
    out, edit = micro_compact(messages, 1, store, cleared, clear_now=True)
    paths = [marker_path(out[i]["content"]) for i in (3, 5)]
    assert edit == 3 and paths[0] != paths[1]
    assert [store.read(p) for p in paths] == ["first " + BIG, "second " + BIG]



# ------------------------------------------------------------------ layer 4: one turn, or a refusal
WHOLE_USER_TURN = [user("Deploy build 4f2a9c1e to staging."),
                   calling(tool_call("call_deploy_17", "deploy", {"build": "4f2a9c1e"})),
                   tool_result("call_deploy_17", "deployed to staging-eu-3 [exit code: 0]"),
                   {"role": "assistant", "content": "Build 4f2a9c1e is on staging-eu-3."}]


@pytest.mark.parametrize("turn", [
    WHOLE_USER_TURN,                                   # user, assistant calls, result, answer
    [user("first"), user("second")],                   # two non-tool messages
    [tool_result("call_1", "orphan"), user("after")],  # a turn must start with its message
    [calling(tool_call("call_1")), tool_result("call_1"), "not a message"],
    [{"role": "assistant", "content": None, "tool_calls": [5]}],
    [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": "deploy"}]}],
], ids=["whole-user-turn", "two-messages", "starts-with-a-result", "not-a-dict", "a-call-not-a-dict",
        "a-function-not-a-dict"])
def test_archive_turn_refuses_what_is_not_one_turn(turn):
    """Issue 46, item 18: given more than one turn, archive_turn kept the first message and
    dropped the rest silently (the deploy's call, its result and the answer, identifiers
    included); a malformed call raised AttributeError. It now says what is wrong instead."""
    with pytest.raises(ValueError, match=r"turn\["):
        archive_turn(turn)


@given(st.lists(st.sampled_from([user("u"), calling(tool_call("c1")), tool_result("c1"),
                                 {"role": "assistant", "content": "a"}]), min_size=1, max_size=5))
@PROPERTY
def test_archive_turn_archives_one_turn_or_refuses(turn):
    """Whatever list it is given: a record for exactly one turn (a message, then only tool
    results), else a ValueError."""
    one_turn = turn[0]["role"] != "tool" and all(m["role"] == "tool" for m in turn[1:])
    if one_turn:
        assert archive_turn(turn).startswith("- ")
    else:
        with pytest.raises(ValueError):
            archive_turn(turn)
