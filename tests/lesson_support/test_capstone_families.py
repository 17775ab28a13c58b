"""Chapter 19's three task families (issue 53, item 1): the repository to fix and the research
report join the desk, generated and seeded like it, driven by the teaching model's existing
rules, judged by their end state (the repository's tests, the report's facts); the desk's own
tasks are byte for byte what they were, so the figures drawn from them hold."""
import copy
import hashlib
import json

import pytest

from course.givens.capstone import (DEV_SEEDS, FAMILIES, FAMILY_DEV_SEEDS, WINDOW, dev_tasks,
                                    execute_task, family_of, family_scores, judge_task, make_task,
                                    public_view, run, tools_of)
from course.givens.capstone_repo import failing
from course.tokenizer import count_tokens
from lesson_support.capstone import MANAGERS, naive

OTHERS = ("repo", "research")
# sha256 of each desk dev task (json, sorted keys), as generated before the other families came
DESK_DIGESTS = ["51108c77fe15594f", "4b0d7d11a04a41a3", "435b70697a2228c2", "07ade276960d161f",
                "a0202294057edbf2", "49feba4bdbbaa3a2"]


def digest(task: dict) -> str:
    return hashlib.sha256(json.dumps(task, sort_keys=True).encode()).hexdigest()[:16]


def test_the_desk_dev_tasks_are_byte_identical_to_what_they_were():
    assert [digest(make_task(seed)) for seed in DEV_SEEDS] == DESK_DIGESTS
    assert family_of(make_task(DEV_SEEDS[0])) == "desk"


def test_the_dev_set_has_every_family():
    tasks = dev_tasks()
    counts = {name: sum(family_of(t) == name for t in tasks) for name in FAMILIES}
    assert counts == {"desk": 6, "repo": 3, "research": 3}
    assert [t["id"] for t in tasks if family_of(t) != "desk"] == [
        f"{name}-{seed}" for name, seeds in FAMILY_DEV_SEEDS.items() for seed in seeds]


@pytest.mark.parametrize("family", OTHERS)
def test_a_family_task_is_its_seed_and_tasks_differ(family):
    a, b = make_task(201, family=family), make_task(202, family=family)
    assert a == make_task(201, family=family) and a["family"] == family
    assert set(a["db"]["items"]).isdisjoint(b["db"]["items"])
    assert 16 <= sum(map(len, a["sessions"])) <= 32 and 3 <= len(a["sessions"]) <= 5


def test_an_unknown_family_is_named():
    with pytest.raises(ValueError, match="no capstone family 'shop'"):
        make_task(1, family="shop")


@pytest.mark.parametrize("family", OTHERS)
def test_the_expected_state_is_what_the_turns_ask_for(family):
    task = make_task(204, family=family, size=24)
    assert judge_task(task, copy.deepcopy(task["db"]))      # the untouched state is not the end state
    assert judge_task(task, copy.deepcopy(task["expected"])) == []
    changed = {i for i, item in task["expected"]["items"].items() if item != task["db"]["items"][i]}
    assert changed and changed <= set(list(task["db"]["items"])[:3])   # only the user's items
    bumped = copy.deepcopy(task["expected"])
    for item in bumped["items"].values():
        item["touched"] += 3                     # the tools' counter is not the owner's state
    assert judge_task(task, bumped) == []


def test_the_repository_is_judged_by_its_tests():
    task = make_task(205, family="repo", size=24)
    ident = next(i for i, m in task["expected"]["items"].items() if m["defects"])
    db = copy.deepcopy(task["db"])
    assert failing(ident, db["items"][ident])             # its defects fail its tests at the start
    done = copy.deepcopy(task["expected"])
    wanted = done["items"][ident]["fixes"]
    done["items"][ident]["fixes"] = wanted[1:]
    assert any(f"{ident}: test_" in w and "not fixed" in w for w in judge_task(task, done))
    spare = next(f for f in ("off-by-one", "null-check", "timezone", "rounding", "encoding")
                 if f not in wanted)
    done["items"][ident]["fixes"] = sorted(wanted + [spare])
    assert any("an unneeded fix" in w for w in judge_task(task, done))
    text, error = execute_task(task, db, "build_status", {"module": ident})
    assert not error and f"{len(wanted)} failing test(s)" in text


@pytest.mark.parametrize("family, verify, code, close, add, value", [
    ("repo", "check_approval", "code", "freeze_module", "apply_fix", {"fix": "timezone"}),
    ("research", "check_key", "key", "withdraw_claim", "cite_archive", {"archive": "census"}),
])
def test_a_change_needs_the_code_and_a_closed_item_takes_none(family, verify, code, close, add, value):
    task = make_task(206, family=family, size=8)
    db = copy.deepcopy(task["db"])
    ident, item = next(iter(db["items"].items()))
    param = "module" if family == "repo" else "claim"
    text, error = execute_task(task, db, verify, {param: ident, code: item["code"] + 1})
    assert error and "does not match" in text
    assert execute_task(task, db, verify, {param: ident, code: item["code"]})[1] is False
    closed = "frozen" if family == "repo" else "withdrawn"
    assert execute_task(task, db, close, {param: ident}) == (
        f"{param.capitalize()} {ident} is {closed}", False)
    text, error = execute_task(task, db, add, {param: ident, **value})
    assert error and "is " in text
    assert execute_task(task, db, "no_such_tool", {})[1] is True


@pytest.mark.parametrize("family, doc, log", [("repo", "read_guide", "test_report"),
                                              ("research", "read_handbook", "read_document")])
def test_documents_are_over_any_budget_and_logs_carry_the_remarks(family, doc, log):
    task = next(t for t in (make_task(s, family=family, size=8) for s in range(200, 260))
                if "say_canary" in t["hazards"])
    db = copy.deepcopy(task["db"])
    topic = tools_of(task)[[t["function"]["name"] for t in tools_of(task)].index(doc)][
        "function"]["parameters"]["properties"]["topic"]["enum"][0]
    text, error = execute_task(task, db, doc, {"topic": topic})
    assert not error and count_tokens(text) > WINDOW
    ident = next(i for i, item in db["items"].items() if task["canaries"][0] in item["remark"])
    param = "module" if family == "repo" else "claim"
    text, error = execute_task(task, db, log, {param: ident})
    assert not error and task["canaries"][0] in text and count_tokens(text) > 1500


@pytest.mark.parametrize("family", OTHERS)
def test_a_manager_is_shown_no_answer_in_any_family(family):
    task = make_task(207, family=family)
    view = public_view(task, 2)
    text = json.dumps(view)
    assert view["family"] == family and view["tools"] == [t["function"]["name"] for t in tools_of(task)]
    assert not {"expected", "db", "canaries", "flaky"} & set(view)
    assert task["canaries"][0] not in text and not any(i in text for i in task["db"]["items"])


@pytest.mark.parametrize("family", OTHERS)
def test_the_teaching_model_carries_a_short_task_to_its_end_state(client, family):
    """A task with no hazard, every turn named in full: the naive manager's run succeeds by the
    judge, and the run's record says its family."""
    task = next(t for t in (make_task(s, family=family, size=6) for s in range(300, 360))
                if not t["hazards"] and task_changes(t))
    out = run(naive, task, 1, client)
    assert out["family"] == family and out["error"] is None
    assert out["success"], out["wrong"]
    assert family_scores([out])[family]["success"] == 1.0


def task_changes(task) -> bool:
    return task["expected"] != task["db"]


@pytest.mark.parametrize("family, seed, technique, fixes", [
    ("repo", 402, "notes", "recall"),            # a call-back that names neither module nor code
    ("research", 402, "notes", "recall"),
    ("repo", 401, "fencing", "call_close"),      # a remark that says to freeze another's module
    ("research", 402, "fencing", "leaks"),       # a remark that says to repeat a canary
])
def test_each_technique_fixes_what_naive_gets_wrong_in_each_family(client, family, seed, technique,
                                                                   fixes):
    task = make_task(seed, family=family, size=12)
    assert fixes in task["hazards"] or fixes == "leaks"
    base, fixed = run(naive, task, 1, client), run(MANAGERS[technique], task, 1, client)
    if fixes == "leaks":
        assert base["leaks"] >= 1 and fixed["leaks"] == 0
    else:
        assert len(fixed["wrong"]) < len(base["wrong"]), (base["wrong"], fixed["wrong"])


def test_scores_are_given_per_family():
    def r(family, success):
        return {"task": f"{family}-1", "family": family, "success": success, "leaks": 0,
                "requests": 1, "prompt_tokens": 10, "cached_tokens": 0, "completion_tokens": 1,
                "cost": 0.0, "refused": 0, "error": None}
    scores = family_scores([r("desk", True), r("repo", False), r("repo", True)])
    assert list(scores) == ["desk", "repo"] and scores["repo"]["success"] == 0.5
