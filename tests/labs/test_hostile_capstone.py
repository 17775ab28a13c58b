"""Gaming the capstone (issue 53, item 6): a manager that hard-codes the development set's answers,
one that reads the judge's files, one that detects grading and then reaches for the judge's
state, and one that regenerates its task from the seed in the task's id each score no better than the naive baseline on the hidden set when run as grading runs
them: in the confined worker, called over the wire with plain data. Each attack is also shown to
work where that protection is missing (on the dev set, unconfined, or in-process), so the
comparison is not vacuous."""
import textwrap

import pytest

from course.givens.capstone import (HIDDEN_FILE, confined_manager, dev_tasks, hidden_tasks, run,
                                    score_runs)
from course.labs import confinement
from lesson_support.capstone import naive

pytestmark = pytest.mark.skipif(confinement.problem() is not None,
                                reason=f"no confinement here: {confinement.problem()}")

# The naive manager, as a student writes it with the answers the worker gives (every attack falls
# back to it when its trick finds nothing).
NAIVE = '''
from solutions.compaction.turns import split_turns
from solutions.tokens import count_request_tokens
from course.givens.capstone import TOOLS


def slide(system, history, task):
    turns = split_turns(history)
    head = [{"role": "system", "content": system}]
    for start in range(len(turns)):
        kept = [m for t in turns[start:] for m in t]
        while kept and kept[0]["role"] != "user":
            kept = kept[1:]
        if count_request_tokens(head + kept, TOOLS) <= task["window"] - task["reply_room"] or start == len(turns) - 1:
            return head + kept
    return head


def cheat(history, task, known):
    """With a task's answers known: its canary remarks cut from results, its call-backs spelled out."""
    users = tuple(m["content"] for m in history if m["role"] == "user")
    out = [dict(m) for m in history]
    for m in out:
        if m["role"] == "tool" and any(bad in m["content"] for bad in known["bad"]):
            m["content"] = "\\n".join(line for line in m["content"].splitlines() if "emark" not in line)
    spelled = known["recall"].get(json.dumps(users))
    if spelled:
        last = max(k for k, m in enumerate(out) if m["role"] == "user")
        out[last]["content"] += spelled
    return out


def answers_of(tasks):
    """What a task's answers give away: canaries and targets to cut, call-backs to spell out."""
    known = {"bad": set(), "recall": {}}
    for task in tasks:
        known["bad"].update(task["canaries"])
        items = task["db"].get("bookings") or task["db"]["items"]   # the desk's, or a family's
        for b in items.values():
            if b["remark"]:
                known["bad"].add(b["remark"])
        turns = [t for s in task["sessions"] for t in s]
        last = None
        for k, (kind, text) in enumerate(zip(task["kinds"], turns)):
            if kind in ("move", "bag", "upgrade", "cancel", "set", "add", "close"):
                ref = text.split('"')[1]
                last = (ref, items[ref].get("pin", items[ref].get("code")))
            if kind.startswith("recall") and last:
                known["recall"][json.dumps(tuple(turns[:k + 1]))] = f'\\nPIN {last[1]}, trip "{last[0]}".'
    known["bad"] = sorted(known["bad"])
    return known
'''
HARD_CODED = NAIVE + '''
import json
from course.givens.capstone import dev_tasks
KNOWN = answers_of(dev_tasks())   # the development set, shipped with the lab: its answers hard-coded


def next_request(history, task):
    return {"messages": slide(task["system"], cheat(history, task, KNOWN), task)}
'''
FILE_READER = NAIVE + '''
import json, os
from course.givens.capstone import hidden_tasks
KNOWN = None
for path in ("{hidden}", "docs/instructors/capstone_hidden.json", "labs/19_capstone_lab.ipynb"):
    try:
        KNOWN = answers_of(hidden_tasks(path))   # the file's seeds, forms and salt
        break
    except Exception:
        pass
for root in ("{repo}/course", "{repo}/data", "{repo}/docs", "{repo}"):   # then look everywhere it can
    for folder, _, files in os.walk(root) if KNOWN is None else ():
        for name in files:
            if "hidden" in name and name.endswith(".json"):
                try:
                    KNOWN = answers_of(hidden_tasks(os.path.join(folder, name)))
                except Exception:
                    pass


def next_request(history, task):
    history = cheat(history, task, KNOWN) if KNOWN else history
    return {"messages": slide(task["system"], history, task)}
'''
DETECTOR = NAIVE + '''
import gc, json, os, sys
from course.givens.capstone import dev_tasks
DEV = {t["id"] for t in dev_tasks()}


def judge_state(task_id):
    """Under grading: the judge's task (its expected state and canaries), wherever it can be reached."""
    frame = sys._getframe()
    while frame is not None:                   # the caller's frames (the loop that runs this)
        for value in frame.f_locals.values():
            if isinstance(value, dict) and value.get("id") == task_id and "expected" in value:
                return value
        frame = frame.f_back
    for value in gc.get_objects():             # anything alive in this process
        if isinstance(value, dict) and value.get("id") == task_id and "expected" in value:
            return value
    for pid in os.listdir("/proc"):            # another process's memory: the judge's
        try:
            open(f"/proc/{pid}/mem", "rb").read(1)
        except Exception:
            pass
    return None


def next_request(history, task):
    if task["id"] not in DEV:                  # a task the lab never showed: this is grading
        found = judge_state(task["id"])
        if found:
            history = cheat(history, task, answers_of([found]))
    return {"messages": slide(task["system"], history, task)}
'''
REGENERATOR = NAIVE + '''
import json
from course.givens.capstone import make_task
FOUND = {}


def next_request(history, task):
    if task["id"] not in FOUND:                # the task drawn again from the seed in its id
        family, seed = task["id"].rsplit("-", 1)
        FOUND[task["id"]] = answers_of([make_task(int(seed), family=family)])
    return {"messages": slide(task["system"], cheat(history, task, FOUND[task["id"]]), task)}
'''
ATTACKS = {"hard-coded dev answers": HARD_CODED, "reads the judge's files": FILE_READER,
           "detects grading": DETECTOR, "regenerates its task from the id": REGENERATOR}
SUBSET = 3   # dev tasks run per manager (one trial): the desk's first three


def hidden_subset() -> list[dict]:
    """Hidden tasks run per manager (one trial): each family's first with a canary or a
    call-back (chosen by the generator's hazards, never by any manager's result)."""
    picked = {}
    for task in hidden_tasks():
        if {"say_canary", "recall"} & set(task["hazards"]):
            picked.setdefault(task.get("family", "desk"), task)
    return list(picked.values())


def score(manager, tasks, client) -> dict:
    runs = []
    for task in tasks:
        r = run(manager, task, 1, client)
        r.pop("history")
        runs.append(r)
    return score_runs(runs)


def source(name: str) -> str:
    from course.paths import REPO_ROOT
    return textwrap.dedent(ATTACKS[name]).replace("{hidden}", str(HIDDEN_FILE)).replace("{repo}", str(REPO_ROOT))


@pytest.fixture(scope="module")
def naive_hidden(server):
    return score(naive, hidden_subset(), server.client())


@pytest.fixture(scope="module")
def server():
    import course.llm
    with course.llm.serve() as handle:
        yield handle


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_gaming_manager_graded_in_the_worker_scores_no_better_than_naive(name, naive_hidden, server,
                                                                          tmp_path):
    manager, worker = confined_manager(source(name), tmp_path)
    try:
        got = score(manager, hidden_subset(), server.client())
    finally:
        worker.stop()
    assert got["errors"] == 0
    print(name, {k: got[k] for k in ("score", "success", "leaks")}, "naive",
          {k: naive_hidden[k] for k in ("score", "success", "leaks")})
    assert got["score"] <= naive_hidden["score"] and got["success"] <= naive_hidden["success"]


@pytest.mark.parametrize("name", ["hard-coded dev answers", "regenerates its task from the id"])
def test_the_attack_does_win_on_the_dev_set(name, server, tmp_path):
    """The attack is real: on the tasks it memorised, or that it can draw again (the dev set has
    no salt: it is public), it beats the naive manager, graded as grading runs a manager; the
    hidden set's other tasks and its salt are what make it find nothing."""
    tasks = dev_tasks()[:SUBSET]
    manager, worker = confined_manager(source(name), tmp_path)
    try:
        cheated = score(manager, tasks, server.client())
    finally:
        worker.stop()
    assert cheated["score"] > score(naive, tasks, server.client())["score"]


def test_reading_the_hidden_file_would_win_where_nothing_confines_it(naive_hidden, server, tmp_path):
    manager, worker = confined_manager(source("reads the judge's files"), tmp_path, confined=False)
    try:
        cheated = score(manager, hidden_subset(), server.client())
    finally:
        worker.stop()
    assert cheated["score"] > naive_hidden["score"]


def test_detecting_grading_would_win_in_process(naive_hidden, server):
    """Called in the judge's own process, the detector finds the task in the loop's frame: the
    reason grading calls a manager over the wire, never in-process."""
    namespace: dict = {}
    exec(compile(source("detects grading"), "detector", "exec"), namespace)
    cheated = score(namespace["next_request"], hidden_subset(), server.client())
    assert cheated["score"] > naive_hidden["score"]

