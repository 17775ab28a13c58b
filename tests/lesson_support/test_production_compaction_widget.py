"""Chapter 11's widget logic and lesson support: configuration lookup from toggles, saw-tooth
points with cache hits, the probe panel, the breaker line; transcript search; the strategies
and delegation keep pairing."""
import json
from types import SimpleNamespace

import pytest

from course.givens.production_compaction import load_run
from lesson_support.production_compaction import (CONFIGS, Measurement, ProbeResult, score_probes,
                                                  search_transcript, transcript_jsonl)
from lesson_support.production_compaction_strategies import (STRATEGIES, delegated_steps,
                                                             run_strategy, subagent_messages)
from lesson_support.widgets.production_compaction import (breaker_state, config_for,
                                                          probe_rows, sawtooth_points)
from solutions.compaction import check_pairing
from solutions.production_compaction import Event


@pytest.fixture(scope="module")
def run():
    return load_run()


def test_config_for_toggles():
    assert config_for([]) == "no compaction"
    assert config_for(["noise", "budget"]) == "1+2 noise"
    assert config_for(["budget", "full"]) is None
    assert all(config_for(layers) == name for name, layers in CONFIGS.items())


def test_sawtooth_points_split_hits_and_misses():
    m = Measurement("x", ())
    m.sizes = [100, 200, 50, 120]
    m.sent = [(2, 200, 150), (4, 120, 0)]
    xs, ys, hits, misses = sawtooth_points(m)
    assert xs == [1, 2, 3, 4] and ys == [100, 200, 50, 120]
    assert hits == [(2, 200)] and misses == [(4, 120)]
    assert sawtooth_points(m, upto=3)[3] == []


def test_probe_rows_and_breaker_line(run):
    m = Measurement("x", ())
    m.probes = [ProbeResult(p["id"], p["kind"], i == 0, i == 1) for i, p in enumerate(run.probes)]
    rows = probe_rows(m, run)
    assert [r[2] for r in rows[:3]] == ["answered", "called again", "lost"]
    m.events = [Event(5, "full", "summariser failed (breaker closed)", 10, 10),
                Event(9, "drop", "2 oldest turns dropped", 10, 5)]
    m.compactor = SimpleNamespace(breaker=SimpleNamespace(state="closed", max_failures=3))
    assert breaker_state(m) == "breaker closed; layer 5 ran 0 times, failed 1 times; 1 drops"
    assert "0 drops" in breaker_state(m, upto=6)


def test_visible_probes_all_answered_on_the_full_transcript(run):
    results = score_probes(run, run.history())
    assert all(r.answered for r, p in zip(results, run.probes) if p["how"] == "visible")


def test_search_transcript_finds_whole_lines(run):
    jsonl = transcript_jsonl(run.history())
    found = search_transcript(jsonl, "offset 4096 != 4097")
    assert found.startswith("found ") and "test_stream_resume" in found
    assert "no line" in search_transcript(jsonl, "no such phrase anywhere")


def test_delegation_keeps_pairing_and_shares_the_head(run):
    parent, child, tool = delegated_steps(run)
    assert len(parent) == len(run.steps) - len(child) + 1
    history = run.head() + [m for s in parent for m in s["messages"]]
    assert check_pairing(history)
    sub = subagent_messages(run, child, 3)
    assert sub[0] == run.head()[0] and check_pairing(sub)
    assert json.loads(tool["function"]["parameters"]["properties"]["task"]["type"].join('""')) == "string"


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategies_keep_pairing(run, name):
    assert run_strategy(name, run)["pairing_ok"]
