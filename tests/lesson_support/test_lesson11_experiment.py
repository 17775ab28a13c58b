"""Lesson 11: the 32K teaching model that refuses the uncompacted run, the replay that reuses a
configuration whose requests are identical, and experiment 2-9's context-aware strategy (a
summary for what the task needs now, by stage)."""
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.models import WINDOW_32K_MODEL, model_spec
from course.givens.production_compaction import load_run
from lesson_support.production_compaction import (CONFIGS, Progress, _offline, _replay_interleaved,
                                                  Measurement, replay_config)
from lesson_support.production_compaction_strategies import (GATHER_LINES, VERIFY_LINES,
                                                             guided_summary, run_strategy,
                                                             strategy_context, task_stage)
from solutions.production_compaction import Settings, TokenMeter


@pytest.fixture(scope="module")
def run():
    return load_run()


@pytest.fixture(scope="module")
def server():
    with course.llm.serve() as handle:
        yield handle


# ------------------------------------------------------------------ the 32K window
def test_the_32k_model_refuses_a_request_over_32768_tokens(server):
    assert model_spec(WINDOW_32K_MODEL).context_window == 32_768
    client = server.client()
    small = [{"role": "user", "content": "word " * 30_000}]
    assert client.chat.completions.create(model=WINDOW_32K_MODEL, messages=small).usage.prompt_tokens < 32_768
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=WINDOW_32K_MODEL,
                                       messages=[{"role": "user", "content": "word " * 33_000}])
    assert caught.value.code == "context_length_exceeded"
    assert "maximum context length is 32768 tokens" in caught.value.body["message"]


# ------------------------------------------------------------------ replaying a configuration
def test_the_offline_replay_sends_what_the_interleaved_one_sends(run):
    steps, layers = run.steps[:60], CONFIGS["1-4 archive"]
    model = course.llm.MODEL_NAME
    with course.llm.serve() as a, course.llm.serve() as b:  # a cold cache for each
        fast = replay_config(run, "x", layers, a.client(), model, history_steps=steps)
        slow = _replay_interleaved(run, Measurement("x", layers), layers, b.client(), model,
                                   {20, 40, 60}, Settings(), None, True, steps)
    assert fast.sizes == slow.sizes and fast.sent == slow.sent and fast.final == slow.final
    assert [p.answered for p in fast.probes] == [p.answered for p in slow.probes]
    assert len(fast.events) == len(slow.events) and fast.same_as is None


def test_identical_requests_take_the_earlier_figures_and_different_ones_do_not(run):
    steps, model = run.steps[:60], course.llm.MODEL_NAME
    measured = {}
    for name in ("1+2 noise", "1-4 archive", "all five"):
        with course.llm.serve() as server:
            measured[name] = replay_config(run, name, CONFIGS[name], server.client(), model,
                                           history_steps=steps, measured=measured)
    assert measured["all five"].same_as == "1-4 archive"
    assert measured["all five"].sent == measured["1-4 archive"].sent
    assert measured["1-4 archive"].same_as is None  # its requests differ from 1+2 noise's
    assert measured["1+2 noise"].sizes != measured["1-4 archive"].sizes


def test_layer_5_calling_its_summariser_is_replayed_in_order(run):
    assert _offline(run, ("full",), Settings(), run.steps, {20}) is None
    assert _offline(run, ("budget",), Settings(), run.steps[:5], {5}) is not None


def test_progress_counts_each_step():
    progress = Progress(2, "replaying")
    progress.step("no compaction")
    assert progress.bar.value == 1 and progress.label.value == "1 of 2: no compaction"


# ------------------------------------------------------------------ context-aware, by stage
def test_the_stage_follows_the_agents_milestones(run):
    def stage_after(k):
        return task_stage(run.history(k))

    assert stage_after(54) == ("gather", set())
    stage, focus = stage_after(55)  # step 55 names the root cause
    assert stage == "verify" and {"commit_offset", "flush_batch"} <= focus
    assert stage_after(200)[0] == "verify" and stage_after(201)[0] == "synthesise"


CONTENT = ("found 4 matches for 'flush_batch':\nsrc/a.py:1: flush_batch(x)\nsrc/b.py:2: other()\n"
           "src/c.py:3: y = flush_batch(z)\n[exit code: 0]")


def test_a_result_is_summarised_for_the_stage_it_arrives_in():
    gather = guided_summary(CONTENT, "Searching for flush_batch", "gather", set(), set())
    verify = guided_summary(CONTENT, "Searching for flush_batch", "verify", {"other"}, set())
    done = guided_summary(CONTENT, "Searching for flush_batch", "synthesise", {"other"}, set())
    assert gather.splitlines()[1:] == ["src/a.py:1: flush_batch(x)", "src/c.py:3: y = flush_batch(z)"]
    assert verify.splitlines()[1:] == ["src/b.py:2: other()"]
    assert len(done.splitlines()) == 1 and done.startswith("[synthesise] ok: found 4 matches")
    shown = {"src/a.py:1: flush_batch(x)"}  # already in the context: not repeated
    again = guided_summary(CONTENT, "flush_batch", "gather", set(), shown)
    assert again.splitlines()[1:] == ["src/c.py:3: y = flush_batch(z)"]


LINE = st.text(st.sampled_from("abc_ flush"), max_size=12)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(lines=st.lists(LINE, min_size=1, max_size=20), query=LINE,
       stage=st.sampled_from(["gather", "verify", "synthesise"]),
       focus=st.sets(st.sampled_from(["flush", "abc", "ab_c"])),
       shown=st.sets(LINE, max_size=5))
def test_a_guided_summary_keeps_only_new_lines_of_the_result_within_the_stage_limit(
        lines, query, stage, focus, shown):
    content = "\n".join(lines)
    before = set(shown)
    summary = guided_summary(content, query, stage, focus, shown).splitlines()
    kept = summary[1:] if summary[0].startswith(f"[{stage}]") else None
    assert kept is not None, "the summary starts with the stage and the result's outcome"
    limit = {"gather": GATHER_LINES, "verify": VERIFY_LINES, "synthesise": 0}[stage]
    assert len(kept) <= limit and not set(kept) & before
    assert all(line in {x.strip() for x in lines[1:]} for line in kept)
    assert shown == before | set(kept)


def test_context_aware_freezes_each_summary_and_stays_in_the_window(run):
    meter, state, history, seen = TokenMeter(run.tools), {}, run.head(), {}
    for step in run.steps[:70]:
        history = history + step["messages"]
        for m in strategy_context("context-aware", run, history, state, meter):
            if m["role"] == "tool":
                assert seen.setdefault(m["tool_call_id"], m["content"]) == m["content"]
    row = run_strategy("context-aware", run)
    assert row["over_window"] == 0 and row["probes"] == row["of"] and row["pairing_ok"]
