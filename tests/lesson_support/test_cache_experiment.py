"""Chapter 05: prompt caching measured on the teaching model, strategy by strategy."""
import json

import pytest

import course.llm
from lesson_support import cache_experiment as K
from lesson_support.cache_experiment.building import RunState
from solutions.costs import OPENAI_RULES
from solutions.tokens import count_request_tokens


@pytest.fixture(scope="module")
def measured():
    """Every strategy replayed once on a private server with an empty cache."""
    with course.llm.serve() as server:
        yield K.measure_strategies(server.client())


def test_counts_and_cache_hits_match_the_server_on_every_call(measured):
    for strategy, records in measured.items():
        assert len(records) == 12
        for r in records:
            assert r.counted_tokens == r.prompt_tokens, (strategy, r)
            assert 0 <= r.cached_tokens <= r.prompt_tokens, (strategy, r)
            # our own longest-shared-prefix prediction agrees with the server's prefix cache
            assert r.cached_tokens == r.expected_cached, (strategy, r)
            assert r.cached_tokens % 128 == 0 and (r.cached_tokens == 0 or r.cached_tokens >= 1024)


def test_the_first_call_of_every_run_is_a_miss(measured):
    assert all(records[0].cached_tokens == 0 for records in measured.values())


def test_append_only_reuses_all_of_the_previous_request(measured):
    records = measured["append-only"]
    for previous, current in zip(records, records[1:]):
        assert current.cached_tokens == OPENAI_RULES.cached(previous.prompt_tokens)


def test_cache_breakers_lose_to_append_only(measured):
    rates = {row["strategy"]: row["hit_rate"] for row in K.hit_rate_table(measured)}
    best = rates["append-only"]
    assert best > 0.75
    for breaker in ("timestamp in system prompt", "tools reordered", "unstable JSON keys",
                    "sliding window", "compact every step"):
        assert rates[breaker] < best - 0.2, breaker
    assert rates["timestamp in system prompt"] == 0.0
    # the fixes: time at the end costs almost nothing, compacting rarely keeps most hits
    assert rates["timestamp at the end"] > best - 0.02
    assert rates["compact every step"] < rates["compact at threshold"] < best


def test_compaction_and_sliding_window_send_fewer_tokens(measured):
    sent = {row["strategy"]: row["prompt_tokens"] for row in K.hit_rate_table(measured)}
    for shorter in ("sliding window", "compact every step", "compact at threshold"):
        assert sent[shorter] < sent["append-only"]


def test_threshold_compaction_keeps_requests_near_the_threshold(measured):
    records = measured["compact at threshold"]
    assert max(r.prompt_tokens for r in records) <= K.COMPACT_THRESHOLD_TOKENS
    assert any(b.prompt_tokens < a.prompt_tokens for a, b in zip(records, records[1:])), \
        "the run should compact at least once"


def test_strategies_do_not_warm_each_others_cache():
    """Measured alone on a fresh server, a strategy gives the same numbers as in the batch."""
    with course.llm.serve() as first:
        batch = K.measure_strategies(first.client(), strategies=["append-only", "sliding window"],
                                     steps=6)
    with course.llm.serve() as second:
        alone = K.run_strategy(second.client(), "sliding window", steps=6)
    assert batch["sliding window"] == alone


def test_tool_block_alone_is_below_the_cache_minimum():
    """Tools come before the session line; alone they must never count as a hit across runs."""
    tools_only = count_request_tokens([], K.TOOLS) - count_request_tokens([])
    assert tools_only < OPENAI_RULES.minimum


def test_every_request_is_valid_and_pairs_calls_with_results():
    script = K.scripted_steps(12)
    for strategy in K.STRATEGIES:
        state = RunState()
        for k in range(12):
            messages, tools = K.build_request(strategy, k, script, state)
            pending = set()
            for m in messages:
                for call in m.get("tool_calls") or ():
                    pending.add(call["id"])
                if m["role"] == "tool":
                    assert m["tool_call_id"] in pending, (strategy, k)
                    pending.remove(m["tool_call_id"])
            assert not pending, (strategy, k)


def test_breakers_really_change_what_they_claim_to_change():
    script = K.scripted_steps(6)
    a, tools_a = K.build_request("tools reordered", 4, script, RunState())
    b, tools_b = K.build_request("tools reordered", 5, script, RunState())
    assert sorted(t["function"]["name"] for t in tools_a) == sorted(t["function"]["name"] for t in tools_b)
    assert tools_a != tools_b
    # the first call's arguments, as re-serialised by each later request: same data, new text
    first_args = [K.build_request("unstable JSON keys", k, script)[0][2]["tool_calls"][0]
                  ["function"]["arguments"] for k in range(1, 6)]
    assert len({json.dumps(json.loads(a), sort_keys=True) for a in first_args}) == 1
    assert len(set(first_args)) > 1


def test_expected_cached_tokens_uses_the_longest_shared_prefix():
    earlier = [[1] * 1100 + [2] * 200, [1] * 1500]
    assert K.expected_cached_tokens(earlier, [1] * 1400 + [3]) == 1280
    assert K.expected_cached_tokens(earlier, [1] * 1000) == 0
    assert K.expected_cached_tokens([], [1] * 5000) == 0


def test_table_and_chart(measured):
    import matplotlib
    matplotlib.use("Agg")
    rows = K.hit_rate_table(measured)
    assert [r["strategy"] for r in rows] == list(K.STRATEGIES)
    text = K.format_hit_rate_table(rows)
    assert all(name in text for name in K.STRATEGIES)
    ax = K.plot_hit_rates(rows)
    assert len(ax.patches) == len(rows)
    labels = [t.get_text() for t in ax.texts]
    assert labels == [f"{100 * r['hit_rate']:.0f} %" for r in sorted(rows, key=lambda r: r["hit_rate"])]
    # green for the best strategies, red for those that lose more than half of the best's hits
    from matplotlib.colors import same_color
    names = [t.get_text() for t in ax.get_yticklabels()]
    colour = dict(zip(names, (bar.get_facecolor() for bar in ax.patches)))
    assert same_color(colour["append-only"], "tab:green")
    assert same_color(colour["timestamp in system prompt"], "tab:red")


def test_bad_input():
    with pytest.raises(ValueError, match="choose one of"):
        K.build_request("cache nothing", 0, K.scripted_steps(2))
    with pytest.raises(ValueError):
        K.scripted_steps(0)


def test_a_provider_that_reports_no_cache_gives_none_not_zero():
    # Ollama's usage has no cache field: read_usage gives None, and the table must say so.
    records = [K.RequestRecord(1, 1300, None, 5, 1300, 0), K.RequestRecord(2, 1800, None, 5, 1800, 1152)]
    row = K.hit_rate_table({"append-only": records})[0]
    assert row["prompt_tokens"] == 3100
    assert row["cached_tokens"] is None and row["hit_rate"] is None
    assert "not reported by this provider" in K.format_hit_rate_table([row])


def test_requests_send_max_completion_tokens():
    sent = []

    class Completions:
        def create(self, **kwargs):
            sent.append(kwargs)

            class Response:
                usage = {"prompt_tokens": 10, "completion_tokens": 1}
            return Response()

    class Client:
        chat = type("Chat", (), {"completions": Completions()})()

    records = K.run_strategy(Client(), "append-only", model="m", steps=2)
    assert all("max_completion_tokens" in s and "max_tokens" not in s for s in sent)
    assert [r.cached_tokens for r in records] == [None, None]
