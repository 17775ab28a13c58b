"""Chapter 17's answers: refusal, consolidation, forgetting, rank fusion, the recall scorer."""
from datetime import timedelta

import pytest
from hypothesis import given, settings, strategies as st

from course.givens.memory import IDK, ForgetPolicy, RecallQuestion, record, utc
from solutions.memory import (consolidate, consolidation_actions, filter_records, forget, fuse_rankings,
                              refusal_reason, rrf_scores, score_answer)

T0 = utc(2026, 1, 5)


# ------------------------------------------------------------------ refusal
@pytest.mark.parametrize("key, value, reason", [
    ("password", "hunter2", "credential"),
    ("api key", "sk-test-4f9a8b7c6d5e4f3a2b1c", "credential"),
    ("note", "4111 1111 1111 1111", "credential"),               # a card number (Luhn)
    ("deploy", "token ghp_abcdefghijklmnopqrstuvwxyz0123", "credential"),
    ("密码", "abc123", "credential"),
    ("plan", "keep it secret: we are moving to Oslo", "secret"),
    ("colleague Anna", "diabetes", "other_person"),
    ("同事 小王", "糖尿病", "other_person"),
])
def test_what_must_never_be_stored_is_refused(key, value, reason):
    r = record(key=key, value=value, text=f"My {key} is {value}.")
    assert refusal_reason(r, "u01") == reason


@pytest.mark.parametrize("key, value", [("city", "Lyon"), ("editor", "vim"), ("todo", "fix error E4012"),
                                        ("colleague Anna", "the team lead"), ("note", "4111 1111 1111 1112")])
def test_ordinary_memories_are_kept(key, value):
    assert refusal_reason(record(key=key, value=value, text=f"My {key} is {value}."), "u01") is None


def test_another_users_record_is_refused_and_order_kept():
    records = [record(value="Lyon"), record(user="u02", value="Oslo"), record(key="password", value="x1")]
    kept, refused = filter_records(records, "u01")
    assert kept == [records[0]]
    assert refused == [(records[1], "other_person"), (records[2], "credential")]


# ------------------------------------------------------------------ consolidation
def test_a_changed_preference_supersedes_and_keeps_the_old_one():
    old = record(key="editor", value="vim", time=T0, id="note-0001")
    new = record(key="editor", value="emacs", time=T0 + timedelta(days=9))
    after = consolidate([old], [new])
    assert [(r.value, r.status) for r in after] == [("vim", "superseded"), ("emacs", "active")]
    assert after[0].valid_to == new.time and after[0].superseded_by == after[1].id


def test_a_duplicate_merges_and_counts():
    old = record(key="editor", value="vim", id="note-0001")
    after, actions = consolidation_actions([old], [record(key="editor", value=" VIM ", time=T0 + timedelta(1))])
    assert len(after) == 1 and after[0].uses == 1 and actions == [("merge", "note-0001")]


def test_same_time_different_values_are_contradictions():
    a, b = record(key="city", value="Lyon"), record(key="city", value="Porto")
    after, actions = consolidation_actions([], [a, b])
    assert [r.status for r in after] == ["contradicted", "contradicted"]
    assert after[0].conflicts == (after[1].id,) and after[1].conflicts == (after[0].id,)
    later = consolidate(after, [record(key="city", value="Oslo", time=T0 + timedelta(2))])
    assert [r.status for r in later] == ["superseded", "superseded", "active"]


def test_an_older_value_arriving_late_is_stored_superseded():
    current = record(key="city", value="Porto", time=T0 + timedelta(10), id="note-0002")
    after, actions = consolidation_actions([current], [record(key="city", value="Lyon", time=T0)])
    assert actions[0][0] == "late" and after[1].status == "superseded" and after[0].status == "active"


def test_a_key_that_accumulates_adds_every_new_value():
    trips = [record(key="trip", value=v, single=False, time=T0 + timedelta(i)) for i, v in enumerate("ABA")]
    assert [(r.value, r.status, r.uses) for r in consolidate([], trips)] == [("A", "active", 1), ("B", "active", 0)]


values = st.sampled_from(["Lyon", "Porto", "Oslo", "lyon"])
records_strategy = st.lists(st.builds(lambda k, v, d, single: record(key=k, value=v, time=T0 + timedelta(days=d),
                                                                      single=single),
                                      st.sampled_from(["city", "editor"]), values,
                                      st.integers(0, 5), st.booleans()), max_size=12)


@settings(max_examples=150, deadline=None)
@given(records_strategy, records_strategy)
def test_consolidation_never_loses_a_value_and_keeps_one_current_per_single_key(old, new):
    """Every value said survives (kept or merged), nothing is deleted, and a single-valued key
    has at most one active record."""
    first = consolidate([], old)
    after = consolidate(first, new)
    assert len(after) >= len(first)
    said = {(r.key, " ".join(r.value.casefold().split())) for r in old + new}
    assert said == {(r.key, " ".join(r.value.casefold().split())) for r in after}
    for key in ("city", "editor"):
        active_single = [r for r in after if r.key == key and r.current and r.single]
        assert len(active_single) <= 1 or len({r.value.casefold() for r in active_single}) == len(active_single)
    ids = [r.id for r in after]
    assert len(ids) == len(set(ids))
    links = {r.superseded_by for r in after if r.superseded_by} | {c for r in after for c in r.conflicts}
    assert links <= set(ids)


# ------------------------------------------------------------------ forgetting
def test_forget_by_age_use_and_request():
    now = T0 + timedelta(days=400)
    old_unused = record(key="drink", value="tea", id="a")
    old_used = record(key="city", value="Lyon", uses=3, id="b")
    fresh = record(key="editor", value="vim", time=now - timedelta(days=1), id="c")
    out = forget([old_unused, old_used, fresh], now, ForgetPolicy(max_age_days=365, min_uses=1),
                 requests=[("u01", "editor")])
    assert [r.status for r in out] == ["forgotten", "active", "forgotten"]
    assert [r.status for r in forget([fresh], now, ForgetPolicy(max_age_days=None, idle_days=0))] == ["forgotten"]
    assert all(r.status == "forgotten" for r in forget([old_used, fresh], now, ForgetPolicy(None), [("u01", "*")]))


# ------------------------------------------------------------------ fusion
def test_rrf_by_hand():
    assert rrf_scores([["a", "b"], ["b"]], k=60) == {"a": 1 / 61, "b": 1 / 62 + 1 / 61}
    assert fuse_rankings([["a", "b", "c"], ["c", "a", "d"]]) == ["a", "c", "b", "d"]
    assert fuse_rankings([["x", "y"], ["y", "x"]]) == ["x", "y"]    # a tie: best rank, then id
    assert fuse_rankings([[], []]) == [] and fuse_rankings([["a", "a", "b"]], limit=1) == ["a"]
    # z (ranks 3 and 6) and a (4 and 4) tie at k=0 (1/3 + 1/6 = 1/4 + 1/4): z's best rank wins over the id
    first = ["f1", "f2", "z", "a"]
    second = ["g1", "g2", "g3", "a", "g5", "z"]
    fused = fuse_rankings([first, second], k=0)
    assert fused.index("z") == fused.index("a") - 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefg"), unique=True, max_size=7), max_size=4))
def test_fusion_is_order_free_over_rankings_and_keeps_every_id(rankings):
    fused = fuse_rankings(rankings)
    assert sorted(fused) == sorted({i for r in rankings for i in r})
    assert fused == fuse_rankings(list(reversed(rankings)))
    if len(rankings) == 1:
        assert fused == rankings[0]


# ------------------------------------------------------------------ the recall scorer
def q(kind="single", answers=("Lyon",), stale=()):
    return RecallQuestion("u01-q1", "u01", kind, "Where do I live?", answers, T0, stale)


@pytest.mark.parametrize("question, answer, right", [
    (q(), "You live in Lyon.", True),
    (q(), "You live in ＬＹＯＮ.", True),                          # full-width, any case
    (q(answers=("Rome",)), "Romeo", False),                         # whole words in Latin script
    (q(answers=("成都",)), "你住在成都。", True),                    # substrings in Chinese
    (q(), IDK, False),
    (q("abstain", ()), IDK, True),
    (q("abstain", ()), "我不知道。", True),
    (q("abstain", ()), "hunter2", False),
    (q("aggregate", ("Oslo", "Porto")), "Oslo, Porto", True),
    (q("aggregate", ("Oslo", "Porto")), "Oslo", False),
    (q("update", ("Porto",), ("Lyon",)), "Porto", True),
    (q("update", ("Porto",), ("Lyon",)), "Lyon, then Porto", False),
    (q(), None, False),
])
def test_score_answer(question, answer, right):
    assert score_answer(question, answer) is right
