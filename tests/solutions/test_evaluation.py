"""Chapter 12's answers (solutions/evaluation): the judge, the trials, the intervals, the
ablation and the prompt lint, with properties over generated inputs."""
import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from course.givens import task_world as world
from solutions.evaluation import (ablate, judge_task, lint_prompt, pass_hat_k, run_trials, sign_test,
                                  success_interval, trials_needed, wilson)

SECTIONS = {name: world.SECTIONS[name][world.BASELINE[name]] for name in world.SECTION_ORDER}


def test_judge_accepts_the_expected_change_and_nothing_else():
    before = world.fresh_db()
    after = copy.deepcopy(before)
    after["bookings"]["QZKLMA"]["day"] = "friday"
    assert judge_task(before, after, {"bookings": {"QZKLMA": {"day": "friday"}}})
    assert not judge_task(before, after, {}), "an unexpected change is a failure"
    assert not judge_task(before, before, {"bookings": {"QZKLMA": {"day": "friday"}}}), "a missing change"
    after["bookings"]["TRVWXE"]["bags"] = 2
    assert not judge_task(before, after, {"bookings": {"QZKLMA": {"day": "friday"}}})


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(world.fresh_db()["bookings"])), st.integers(0, 50),
       st.sampled_from(world.WEEKDAYS))
def test_judge_ignores_irrelevant_fields(ref, counter, day):
    before = world.fresh_db()
    after = copy.deepcopy(before)
    after["bookings"][ref]["last_viewed"] = counter
    after["bookings"][ref]["day"] = day
    assert judge_task(before, after, {"bookings": {ref: {"day": day}}})


def _fake_agent(task, config, seed, db):
    """Makes the task's expected changes when seed is even, and marks the database it got (in
    an irrelevant field, which the judge ignores)."""
    assert all(b["last_viewed"] == 0 for b in db["bookings"].values()), "a trial saw another's database"
    db["bookings"]["QZKLMA"]["last_viewed"] += 1
    if seed % 2 == 0:
        for ref, fields in task["expected"].get("bookings", {}).items():
            db["bookings"][ref].update(fields)
        db["seats"].update(task["expected"].get("seats", {}))
    return {"tool_errors": seed, "turns": 1}


def test_run_trials_gives_each_trial_its_own_database_and_judges_it():
    tasks = [t for t in world.load_tasks() if t["expected"]["bookings"]][:3]
    saved = copy.deepcopy(tasks)
    results = run_trials(_fake_agent, tasks, {}, [0, 1, 2])
    assert [(r["task"], r["seed"]) for r in results] == [(t["id"], s) for t in tasks for s in (0, 1, 2)]
    assert [r["success"] for r in results] == [True, False, True] * 3
    assert [r["tool_errors"] for r in results] == [0, 1, 2] * 3
    assert tasks == saved, "run_trials changed the tasks"


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_contains_the_rate_and_stays_in_unit_interval(pair, level):
    k, n = pair
    low, high = wilson(k, n, level)
    assert 0.0 <= low <= high <= 1.0
    if n:
        assert low <= k / n <= high
        assert high - low > 0, "never a zero-width interval, even at 0 or 100%"


def test_wilson_at_zero_and_at_one_hundred_percent():
    assert wilson(0, 20)[0] == 0.0 and 0.1 < wilson(0, 20)[1] < 0.2
    assert wilson(20, 20)[1] == 1.0 and 0.8 < wilson(20, 20)[0] < 0.9


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=8))
def test_pass_k_never_exceeds_pass_1_and_falls_with_k(outcomes):
    results = [{"task": f"t{i}", "seed": s, "success": ok}
               for i, row in enumerate(outcomes) for s, ok in enumerate(row)]
    summary = success_interval(results)
    values = [summary["pass_k"][k] for k in range(1, 5)]
    assert abs(values[0] - summary["rate"]) < 1e-12, "pass^1 is the success rate"
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:]))
    assert pass_hat_k(results, 4) == sum(all(row) for row in outcomes) / len(outcomes)


def test_sign_test_and_trials_needed():
    assert sign_test(0, 0) == 1.0 and sign_test(5, 5) == 1.0
    assert sign_test(0, 10) < 0.01 and sign_test(10, 0) == sign_test(0, 10)
    assert trials_needed(0.9, 0.6) < trials_needed(0.9, 0.8)


def test_ablate_is_paired_and_reports_no_effect_for_a_factor_that_changes_nothing():
    def evaluate(config):
        bad = config.get("structure") == "unordered"
        return [{"task": f"t{i}", "seed": s, "success": not (bad and i % 2), "tool_errors": 0}
                for i in range(10) for s in range(3)]
    rows = ablate({"tone": "neutral", "structure": "procedures"},
                  {"tone": ["neutral", "casual"], "structure": ["procedures", "unordered"]}, evaluate)
    assert [(r["factor"], r["variant"]) for r in rows] == [("baseline", ""), ("tone", "casual"),
                                                           ("structure", "unordered")]
    tone, structure = rows[1], rows[2]
    assert tone["delta"] == 0 and not tone["effect"] and tone["wins"] == tone["losses"] == 0
    assert structure["losses"] == 15 and structure["effect"] and structure["delta"] == -0.5


def test_lint_finds_each_defect_and_passes_the_baseline():
    assert lint_prompt(SECTIONS) == []
    kinds = lambda sections: sorted({p["kind"] for p in lint_prompt(sections)})  # noqa: E731
    assert kinds({**SECTIONS, "structure": world.SECTIONS["structure"]["unordered"]}) == ["unordered"]
    assert kinds({**SECTIONS, "rules": world.SECTIONS["rules"]["vague"]}) == ["no_trigger"]
    assert kinds({**SECTIONS, "date": "Today is 2026-12-04."}) == ["dynamic"]
    assert kinds({**SECTIONS, "copy": "Rules:\n- NEVER use `card_refund` for cancelled trips; use "
                                      "`voucher_refund` instead."}) == ["duplicate"]
    assert kinds({**SECTIONS, "billing": "Always use `card_refund` for cancelled trips."}) == ["contradiction"]
    assert kinds({"steps": "To cancel:\n1. Verify with `verify_identity`.\n3. Cancel with `cancel`.\n"
                           "2. Tell the customer."}) == ["unordered"]


def test_the_task_world_is_consistent():
    tasks = world.load_tasks()
    assert len(tasks) >= 30 and len({t["id"] for t in tasks}) == len(tasks)
    assert any(len(t["turns"]) > 1 for t in tasks)
    for task in tasks + world.load_tasks(hidden=True):
        assert set(task["tools"]) <= set(world.TOOL_NAMES)
        for ref in task["expected"].get("bookings", {}):
            assert ref in task["db"]["bookings"]
    assert [t["function"]["name"] for t in world.BARE_TOOLS] == world.TOOL_NAMES
    assert all("description" not in t["function"] for t in world.BARE_TOOLS)
