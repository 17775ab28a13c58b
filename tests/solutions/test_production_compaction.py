"""Chapter 11's answers (solutions.production_compaction): each layer alone, the breaker, the
layered compactor on the course's run, and properties over random transcripts (pairing never
broken, replaced bytes stable across calls, identifiers whole in archive records)."""
import json

import pytest
from hypothesis import given, settings, strategies as st

from course.identifiers import identifiers
from course.givens.production_compaction import load_run, visible
from solutions.compaction import check_pairing, is_summary, rule_based_summary
from solutions.production_compaction import (LAYERS, NOISE_RULES, CircuitBreaker,
                                             LayeredCompactor, ResultStore, Settings,
                                             archive_turn, budget_tool_results,
                                             compact_with_breaker, drop_noise, is_preview,
                                             micro_compact)

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True)
HEAD = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Go."}]


@pytest.fixture(scope="module")
def run():
    return load_run()


@st.composite
def transcripts(draw, max_turns=30):
    messages, n = list(HEAD), 0
    for t in range(draw(st.integers(1, max_turns))):
        if draw(st.booleans()):
            messages.append({"role": "assistant", "content": f"Decision {t}: keep call_{n}."})
            continue
        ids = [f"c{n + j}" for j in range(draw(st.integers(1, 3)))]
        n += len(ids)
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "build",
                                                       "arguments": json.dumps({"path": f"src/{i}.c"})}}
            for i in ids]})
        for i in ids:
            lines = draw(st.integers(0, 120))
            body = [f"[{k:3d}%] Building o{k}.o" if k % 2 else f"src/{i}.c:{k}: note" for k in range(lines)]
            messages.append({"role": "tool", "tool_call_id": i, "content": "\n".join(body + ["[exit code: 0]"])})
    return messages


# ------------------------------------------------------------------ layer 1
def test_budget_replaces_large_results_and_saves_them(run):
    store = ResultStore()
    history = run.history(20)
    out = budget_tool_results(history, 4_000, store)
    assert history == run.history(20)
    for before, after in zip(history, out):
        if before["role"] == "tool" and len(before["content"]) > 4_000:
            assert is_preview(after["content"])
            path = after["content"].split()[3].rstrip(":")
            assert store.read(path) == before["content"]
        else:
            assert after == before


def test_budget_decisions_frozen_even_with_another_limit(run):
    store = ResultStore()
    first = budget_tool_results(run.history(30), 4_000, store)
    second = budget_tool_results(run.history(90), 500, store)
    assert [json.dumps(m) for m in first] == [json.dumps(m) for m in second[:len(first)]]


def test_budget_writes_files(tmp_path, run):
    store = ResultStore(tmp_path)
    budget_tool_results(run.history(10), 4_000, store)
    assert store.files and all((tmp_path / p).read_text() == t for p, t in store.files.items())


def test_budget_rejects_bad_limit():
    with pytest.raises(ValueError):
        budget_tool_results([], 0, ResultStore())


@PROPERTY
@given(transcripts(), st.integers(50, 3_000), st.integers(50, 3_000))
def test_budget_properties(messages, limit, later_limit):
    store = ResultStore()
    cut = len(messages) // 2
    while cut < len(messages) and messages[cut]["role"] == "tool":
        cut += 1
    first = budget_tool_results(messages[:cut], limit, store)
    second = budget_tool_results(messages, later_limit, store)
    assert check_pairing(second)
    assert [json.dumps(m) for m in first] == [json.dumps(m) for m in second[:cut]]


# ------------------------------------------------------------------ layer 2
def test_noise_removed_with_a_note(run):
    log = next(m for m in run.history(40) if m["role"] == "tool" and "Building C object" in m["content"])
    out = drop_noise([log], NOISE_RULES)[0]["content"]
    assert "Building C object" not in out and out.endswith("download meter lines]")
    assert "[exit code: 0]" in out


def test_noise_accepts_a_list_of_patterns():
    m = {"role": "tool", "tool_call_id": "a", "content": "keep\ndrop me\nkeep too"}
    assert drop_noise([m], [r"^drop"])[0]["content"].splitlines()[:2] == ["keep", "keep too"]


@PROPERTY
@given(transcripts())
def test_noise_properties(messages):
    out = drop_noise(messages, NOISE_RULES)
    assert len(out) == len(messages) and check_pairing(out)
    assert all(a == b for a, b in zip(messages, out) if a["role"] != "tool")
    assert drop_noise(out, NOISE_RULES) == out  # nothing left to remove


# ------------------------------------------------------------------ layer 3
def test_micro_clears_old_results_and_reports_the_edit_point(run):
    history = run.history(30)
    cleared = {}
    out, edit = micro_compact(history, 4, ResultStore(), cleared, clear_now=True)
    tools = [i for i, m in enumerate(history) if m["role"] == "tool"]
    assert edit == tools[0] and len(cleared) == len(tools) - 4
    assert all(out[i] == history[i] for i in tools[-4:]) and check_pairing(out)
    again, edit2 = micro_compact(history, 4, ResultStore(), cleared, clear_now=False)
    assert again == out and edit2 is None


# ------------------------------------------------------------------ layer 4
def test_archive_record_keeps_facts(run):
    assert "ci-run-88213" in archive_turn(run.steps[1]["messages"])
    assert "offset 4096 != 4097" in archive_turn(run.steps[1]["messages"])
    assert "runtime_version" in archive_turn(run.steps[20]["messages"])
    with pytest.raises(ValueError):
        archive_turn([])


def test_archive_identifiers_whole(run):
    for step in run.steps:
        record = archive_turn(step["messages"])
        source = json.dumps(step["messages"], ensure_ascii=False) + "\n".join(
            str(m.get("content")) for m in step["messages"])
        assert all(i in source for i in identifiers(record)), step["step"]
        assert len(record) < 2_000


# ------------------------------------------------------------------ layer 5 and the breaker
def test_breaker_opens_and_stops_calling(run):
    calls = []

    def failing(prefix):
        calls.append(1)
        raise TimeoutError

    breaker = CircuitBreaker(3)
    messages = run.history(40)
    for _ in range(8):
        assert compact_with_breaker(messages, failing, breaker) == messages
    assert len(calls) == 3 and breaker.is_open and breaker.state == "open"


def test_breaker_success_resets(run):
    breaker = CircuitBreaker(3)
    breaker.record_failure()
    breaker.record_failure()
    out = compact_with_breaker(run.history(40), rule_based_summary, breaker, 4)
    assert breaker.failures == 0 and not breaker.is_open and any(is_summary(m) for m in out)
    with pytest.raises(ValueError):
        CircuitBreaker(0)


# ------------------------------------------------------------------ the layers together
def test_layered_compactor_on_the_run(run):
    compactor = LayeredCompactor(LAYERS, summarize=rule_based_summary, tools=run.tools)
    history = run.head()
    for step in run.steps:
        history = history + step["messages"]
        context = compactor(history)
        assert check_pairing(context)
        assert compactor.meter(context) <= Settings().window
    assert compactor.dropped_turns == 0
    assert all(visible(p, context) for p in run.probes if p["how"] == "visible")


@pytest.mark.parametrize("layers", [("budget", "noise", "micro", "archive"), ("full",)])
def test_the_archive_and_the_summary_are_the_summary_part_of_the_context(run, layers):
    # The trace's composition (course.tracing) reads the part from the code that put a message
    # there: lesson 11's archive counted as "history" before, being a user message
    from course.tracing.composition import compose

    compactor = LayeredCompactor(layers, summarize=rule_based_summary, tools=run.tools)
    history, parts = run.head(), set()
    for step in run.steps:
        history = history + step["messages"]
        context = compactor(history)
        memory = compactor._memory()
        assert memory == context[len(run.head()):len(run.head()) + len(memory)]
        parts.update(compose(memory).parts)
    assert parts == {"summary"}  # every archive and summary message the compactor sent


def test_full_layer_needs_a_summariser_and_known_layers():
    with pytest.raises(ValueError):
        LayeredCompactor(("full",))
    with pytest.raises(ValueError):
        LayeredCompactor(("squash",))


def test_no_layer_sends_everything(run):
    compactor = LayeredCompactor((), tools=run.tools)
    assert compactor(run.history(50)) == run.history(50)


def test_hysteresis_full_compaction_waits(run):
    compactor = LayeredCompactor(("full",), Settings(cooldown=5), summarize=rule_based_summary,
                                 tools=run.tools)
    history = run.head()
    for step in run.steps:
        history = history + step["messages"]
        compactor(history)
    fulls = [e.request for e in compactor.events if e.layer == "full"]
    assert fulls and all(b - a >= 5 for a, b in zip(fulls, fulls[1:]))


@PROPERTY
@given(transcripts(max_turns=60))
def test_layered_pairing_and_frozen_previews(messages):
    compactor = LayeredCompactor(LAYERS, Settings(window=3_000, budget_chars=400),
                                 summarize=rule_based_summary)
    shown = {}
    for end in range(3, len(messages) + 1):
        if end < len(messages) and messages[end]["role"] == "tool":
            continue  # send only complete turns, as an agent does
        context = compactor(messages[:end])
        assert check_pairing(context)
        for m in context:
            if m["role"] == "tool" and is_preview(m["content"]):
                assert shown.setdefault(m["tool_call_id"], m["content"]) == m["content"]
