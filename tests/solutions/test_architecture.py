"""Chapter 15's answers: the digest always within its limit and keeping its status line and
pointers (hypothesis); run_children's statuses, budgets, failures and shared prefix on the
teaching model; cache_variants = 2^N for N independent switches and one prefix after
move_after_boundary (hypothesis); filter_in_sandbox keeping at most `limit` lines; bad input."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from solutions.architecture import (BOUNDARY, CHILD_TASKS, PROMPT_FRAGMENTS, cache_variants,
                                    count_tokens, digest, filter_in_sandbox, move_after_boundary,
                                    render_prompt, run_children, search_world, self_test)
from solutions.architecture.children import child_budgets
from course.givens.production_compaction import load_run

MODEL = course.llm.MODEL_NAME  # `server`: tests/conftest.py's private teaching model, a fresh cache each test


def transcript(answer: str, results: list[str]) -> list[dict]:
    calls = [{"id": f"c{k}", "type": "function", "function": {"name": "search_code", "arguments": "{}"}}
             for k in range(len(results))]
    return ([{"role": "system", "content": "s"}, {"role": "user", "content": "find it"},
             {"role": "assistant", "content": None, "tool_calls": calls}]
            + [{"role": "tool", "tool_call_id": f"c{k}", "content": r} for k, r in enumerate(results)]
            + [{"role": "assistant", "content": answer}])


# ------------------------------------------------------------------ digest
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400)
paths = st.from_regex(r"src/[a-z]{1,8}/[a-z_]{1,10}\.py:[1-9][0-9]{0,3}", fullmatch=True)


@settings(max_examples=120, deadline=None)
@given(answer=texts, found=st.lists(paths, max_size=30), noise=texts, limit=st.integers(40, 400))
def test_digest_is_always_within_its_limit(answer, found, noise, limit):
    report = digest(transcript(answer, [noise + "\n" + "\n".join(found)]), limit, where="t.jsonl")
    assert count_tokens(report) <= limit
    status = "done" if answer else "incomplete"  # an empty last message is no answer
    assert report.startswith(f"status: {status}; 1 tool call, 0 errors; transcript: t.jsonl")
    shown = report.split("\npointers: ", 1)[1].split(", ") if "\npointers: " in report else []
    assert shown == list(dict.fromkeys(found))[:len(shown)]  # first seen first, none invented


def test_digest_keeps_pointers_when_the_answer_is_long():
    found = [f"src/ledgerline/ingest/reader.py:{n}" for n in range(1, 6)]
    report = digest(transcript("word " * 2000, ["\n".join(found)]), 150)
    assert "pointers: " + ", ".join(found) in report and "…" in report
    assert count_tokens(report) <= 150


def test_digest_status_and_errors():
    unfinished = transcript("x", ['{"error": "down"}'])[:-1]
    report = digest(unfinished, 100)
    assert report.startswith("status: incomplete; 1 tool call, 1 error; transcript: not saved")
    assert digest(unfinished, 100, status="failed", reason="tool down").startswith("status: failed (tool down)")


@pytest.mark.parametrize("bad, limit", [("not a list", 100), ([{"content": "no role"}], 100),
                                        ([], 0), ([], True), ([], 2.5)])
def test_digest_refuses_bad_input(bad, limit):
    with pytest.raises(ValueError):
        digest(bad, limit)


def test_digest_refuses_a_limit_below_its_status_line():
    with pytest.raises(ValueError, match="too small"):
        digest(transcript("a", ["b"]), 5)


# ------------------------------------------------------------------ run_children
def warm(client):
    run = load_run()
    client.chat.completions.create(model=MODEL, messages=[run.head()[0]], tools=run.tools)


def test_children_report_done_with_a_digest_and_hit_the_shared_prefix(server):
    client = server.client()
    warm(client)
    rows = run_children(client, CHILD_TASKS, 4, limit=150)
    assert [r["task"] for r in rows] == CHILD_TASKS
    assert [r["status"] for r in rows] == ["done"] * 3 and all(r["reason"] is None for r in rows)
    for k, r in enumerate(rows, 1):
        assert count_tokens(r["digest"]) <= 150 and f"child-{k}.jsonl" in r["digest"]
        assert r["requests"] == 2 and r["cached_tokens"] >= 2 * 1024 and r["seconds"] > 0
        assert r["transcript"][0]["content"] == load_run().system  # the parent's prefix


def test_a_child_out_of_budget_and_a_failing_child_are_reported(server):
    client = server.client()

    def down(name, arguments):
        raise ConnectionError("index down")

    budget, failed = run_children(client, CHILD_TASKS[:1], 1)[0], run_children(client, CHILD_TASKS[:1], 3, execute=down)[0]
    assert budget["status"] == "budget" and budget["requests"] == 1 and "out of budget" in budget["digest"]
    assert failed["status"] == "failed" and failed["requests"] == 3 and "3 errors" in failed["digest"]
    tokens = run_children(client, CHILD_TASKS[:1], {"requests": 9, "prompt_tokens": 100})[0]
    assert tokens["status"] == "budget" and tokens["requests"] == 1


def test_a_child_whose_request_fails_does_not_stop_the_others(server):
    class Broken:
        class chat:
            class completions:
                @staticmethod
                def create(**_):
                    raise RuntimeError("connection reset")

    rows = run_children(Broken, CHILD_TASKS, 2)
    assert [r["status"] for r in rows] == ["failed"] * 3 and "connection reset" in rows[0]["reason"]


@pytest.mark.parametrize("tasks, budget", [("one task", 2), ([""], 2), (CHILD_TASKS, 0), (CHILD_TASKS, [2, 2]),
                                           (CHILD_TASKS, {"tokens": 5}), (CHILD_TASKS, {"requests": "3"})])
def test_run_children_refuses_bad_input(server, tasks, budget):
    with pytest.raises(ValueError):
        run_children(server.client(), tasks, budget)


def test_budgets_one_per_child():
    assert child_budgets([1, {"requests": 2, "prompt_tokens": 9}], 2) == [{"requests": 1}, {"requests": 2, "prompt_tokens": 9}]


def test_search_world_is_deterministic_and_names_paths():
    a = search_world("search_code", {"query": "Search the code for commit_offset"})
    assert a == search_world("search_code", {"query": "commit_offset please"})
    assert a.startswith("found 40 matches for 'commit_offset'") and "src/ledgerline/" in a
    assert json.loads(search_world("nope", {}))["error"]


# ------------------------------------------------------------------ cache_variants
def switch(name, n):
    return {"name": name, "texts": [f"{name} option {k}" for k in range(n)]}


@settings(max_examples=80, deadline=None)
@given(layout=st.lists(st.sampled_from(["static", "switch"]), max_size=9))
def test_n_independent_switches_make_two_to_the_n_prefixes(layout):
    fragments = [switch(f"f{k}", 2) if kind == "switch" else {"name": f"f{k}", "texts": [f"static {k}"]}
                 for k, kind in enumerate(layout)]
    n = layout.count("switch")
    got = cache_variants(fragments, max_listed=1024)
    assert got["count"] == 2 ** n == len(set(got["prefixes"]))
    assert got["dynamic"] == [f["name"] for f in fragments if len(f["texts"]) > 1]
    moved = move_after_boundary(fragments)
    assert cache_variants(moved)["count"] == 1
    assert sorted(json.dumps(f) for f in moved if f["texts"] != [BOUNDARY]) == sorted(json.dumps(f) for f in fragments)
    assert move_after_boundary(moved) == moved  # moving twice changes nothing


def test_only_fragments_before_the_boundary_count():
    boundary = {"name": "boundary", "texts": [BOUNDARY]}
    assert cache_variants([switch("a", 3), boundary, switch("b", 2)])["count"] == 3
    assert cache_variants([switch("a", 3), switch("b", 2)])["count"] == 6
    assert cache_variants([{"name": "same", "texts": ["x", "x"]}])["count"] == 1  # distinct texts
    assert len(cache_variants([switch(f"s{k}", 2) for k in range(12)], max_listed=10)["prefixes"]) == 10


def test_the_lesson_scheme_has_three_switches_and_renders():
    assert cache_variants(PROMPT_FRAGMENTS)["count"] == 8
    moved = move_after_boundary(PROMPT_FRAGMENTS)
    prompt = render_prompt(moved, {"date": 1})
    assert prompt.index(BOUNDARY) < prompt.index("2026-03-15")


@pytest.mark.parametrize("bad", ["x", [{"name": "a"}], [{"name": "a", "texts": []}], [{"name": 1, "texts": ["t"]}],
                                 [{"name": "b", "texts": [BOUNDARY]}, {"name": "c", "texts": [BOUNDARY]}]])
def test_cache_variants_refuses_bad_schemes(bad):
    with pytest.raises(ValueError):
        cache_variants(bad)
    with pytest.raises(ValueError):
        move_after_boundary(bad)


def test_moving_dynamic_fragments_leaves_one_cached_prefix(server):
    """Measured: after the move, every variant shares the whole static part in the cache."""
    client, run = server.client(), load_run()
    moved = move_after_boundary(PROMPT_FRAGMENTS)
    cached = []
    for choice in ({"date": 0, "plan": 0}, {"date": 1, "plan": 1}, {"date": 0, "plan": 1, "verbose": 1}):
        usage = client.chat.completions.create(model="teaching-model-variants", tools=run.tools, messages=[
            {"role": "system", "content": render_prompt(moved, choice)}, {"role": "user", "content": "Hi"}]).usage
        cached.append(usage.prompt_tokens_details.cached_tokens)
    assert cached[0] == 0 and cached[1] == cached[2] >= 1024


# ------------------------------------------------------------------ filter_in_sandbox
def test_filter_keeps_at_most_limit_lines(tmp_path: Path):
    (tmp_path / "log.txt").write_text("".join(f"line {k} status={500 if k % 3 == 0 else 200}\n" for k in range(90)))
    got = filter_in_sandbox("grep status=500 log.txt", 5, tmp_path)
    assert got["lines"] == 30 and got["shown"] == 5
    assert got["text"].splitlines()[-1] == "[25 more lines not shown: narrow the filter]"
    assert got["tokens"] == count_tokens(got["text"])
    small = filter_in_sandbox("grep -c status=500 log.txt", 5, tmp_path)
    assert small == {"text": "30", "lines": 1, "shown": 1, "tokens": count_tokens("30")}


def test_filter_refuses_outside_paths_and_bad_limits(tmp_path: Path):
    refused = filter_in_sandbox("cat /etc/passwd", 5, tmp_path)
    assert refused["text"].startswith("Refused:") and refused["shown"] == 1
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError):
            filter_in_sandbox("ls", bad, tmp_path)


def test_self_test_answers_are_given():
    assert set(self_test()) == {"q1", "q2", "q3", "q4"}


def test_the_labs_log_is_big_logs_output(tmp_path: Path):
    from course.givens.architecture import LAB_LOGS, LOG_NAME, big_log

    made = big_log(tmp_path, 0.25, every=97)
    assert made.read_bytes() == (LAB_LOGS / LOG_NAME).read_bytes()
