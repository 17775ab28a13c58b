"""What the judge accepts from the worker, attacked (issue 47 items 5-8, issue 46 items 11 and 13).

The judge is the one process grading leaves unconfined: whatever crosses the wire from the
student's worker must stay data it bounds, never code it runs, a verdict it takes or a change to
the checks' own values. Each attack below won before its fix:

- a class name the worker sends (`$exception`, `$obj`, an exception's class list) made the judge
  import a module: `course.grade.__main__` ran the grader's command line inside the judge;
- the student's code raised the judge's own `StudentTimeout`, and a failed check read "timeout";
- one line of `[{}] * N` grew the judge by about 160 bytes a value (978 MiB for 18 MB);
- a function that emptied the list it was given emptied the check's list too (the wire mirrored
  it), so a check that computed its expectation from that list afterwards expected nothing;
- `$same` named arguments by id() without keeping them alive: an argument the call dropped gave
  its id to a new object, and the judge answered with its own, wrong, object;
- and, not attacks but the same boundary: a student's own AssertionError read as the check's
  verdict (no hint), and one endless loop cost a full timeout in every check that called it.

The class below is graded the documented way (`course.grade`), each student's trick in the
exercise `add` or `total` of a tiny lab graded in the worker.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap

import nbformat
import pytest

import course.grade
from course.checks import check_source
from course.labs import confinement
from course.labs.wire import MAX_VALUES, ArgumentChanged, Endpoint, MessageTooLarge, WireError
from tests.labs.conftest import SOLVED, TINY_LAB, tiny_lab_notebook
from tests.labs.test_wire import pair  # noqa: F401 - the judge and a worker on in-memory pipes

# ------------------------------------------------------------------ item 5: never import, never a verdict
FORGED_NAMES = ["course.grade.__main__:main", "course.grade.cli:main", "course.release:main",
                "lesson_support.sandbox_attacks:Attack", "openai.cli:main", "yaml:load"]


def test_a_forged_class_name_never_makes_the_judge_import_a_module():
    """In a fresh judge process (so no module is loaded by chance), every way the worker names a
    class: as an exception's value, its class list, an object, a marked dict."""
    script = textwrap.dedent(f"""
        import json, sys
        from course.labs.wire import Endpoint, WireError
        judge = Endpoint(None, None)
        before = set(sys.modules)
        outcomes = []
        for name in {FORGED_NAMES!r}:
            error = {{"type": "X", "message": "m", "classes": [name],
                      "exception": {{"$exception": name, "args": []}}}}
            outcomes.append(type(judge._error_of(error)).__name__)
            for data in ({{"$obj": name, "fields": {{}}}}, {{"$obj": name, "items": []}},
                         {{"$enum": name, "value": 1}}, {{"$model": name, "data": {{}}}},
                         {{"$dict": [], "class": name}}):
                try:
                    judge.codec.decode(data)
                    outcomes.append("built")
                except WireError:
                    outcomes.append("refused")
        print(json.dumps({{"outcomes": outcomes, "imported": sorted(set(sys.modules) - before)}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the judge's process ended: {done.stderr[-1500:]}"
    found = json.loads(done.stdout)
    assert found["imported"] == [], "decoding imported modules"
    assert set(found["outcomes"]) == {"RemoteError", "refused"}, found["outcomes"]


def test_the_data_types_are_the_givens_and_each_names_a_class():
    """The allow-list is explicit; a lab's new given must be added to it (or cross as a handle)."""
    import dataclasses
    import enum
    import importlib
    import pkgutil

    import course.givens
    from course.labs.wire import DATA_TYPES, STATE_TYPES, data_class

    givens = set()
    for found in pkgutil.walk_packages(course.givens.__path__, "course.givens."):
        module = importlib.import_module(found.name)
        for cls in vars(module).values():
            if isinstance(cls, type) and cls.__module__ == module.__name__ and (
                    dataclasses.is_dataclass(cls) or issubclass(cls, (enum.Enum, BaseException, dict))
                    or (issubclass(cls, tuple) and hasattr(cls, "_fields"))):
                givens.add(f"{module.__name__}:{cls.__qualname__}")
    assert givens - DATA_TYPES == set(), "givens the wire would not rebuild"
    for name in DATA_TYPES:
        assert data_class(name, may_import=True) is not None, name
    assert STATE_TYPES <= DATA_TYPES


def test_the_worker_cannot_raise_the_judges_verdicts(pair):  # noqa: F811
    from course.labs.remote import StudentTimeout, WorkerStopped

    judge, ns = pair
    exec("from course.labs.remote import StudentTimeout, WorkerStopped\n"
         "def says_timeout():\n    raise StudentTimeout('your code did not return within 60 s')\n"
         "def says_dead():\n    raise WorkerStopped('the worker was killed')\n"
         "def says_stop():\n    raise KeyboardInterrupt()\n"
         "def says_exit():\n    raise SystemExit(3)\n", ns)
    with pytest.raises(TimeoutError) as raised:
        judge.lookup("says_timeout")()
    assert type(raised.value) is TimeoutError, "a StudentTimeout is decided by the judge, not sent by the worker"
    with pytest.raises(RuntimeError) as raised:
        judge.lookup("says_dead")()
    assert not isinstance(raised.value, WorkerStopped)
    for name in ("says_stop", "says_exit"):
        with pytest.raises(BaseException) as raised:
            judge.lookup(name)()
        assert isinstance(raised.value, Exception), "an ordinary failure of the call, never a stop"
    forged = {"type": "StudentTimeout", "message": "forged", "classes": ["course.labs.remote:StudentTimeout"],
              "exception": {"$exception": "course.labs.remote:StudentTimeout", "args": ["forged"]}}
    assert not isinstance(judge._error_of(forged), StudentTimeout)


# ------------------------------------------------------------------ item 6: bounded expansion
def test_a_message_of_too_many_values_is_refused_before_it_is_parsed(monkeypatch):
    read = iter([json.dumps({"re": 1, "value": [{}] * (MAX_VALUES + 1)}).encode() + b"\n"])
    judge = Endpoint(type("R", (), {"readline": lambda self, limit: next(read)})(), None)
    monkeypatch.setattr(json, "loads", lambda *a, **k: pytest.fail("the line was parsed"))
    with pytest.raises(MessageTooLarge, match="values"):
        judge.receive()


def test_a_long_text_with_commas_is_not_many_values():
    text = "a, b: [c] {d}" * (MAX_VALUES // 2)
    read = iter([json.dumps({"re": 1, "value": text}).encode() + b"\n"])
    judge = Endpoint(type("R", (), {"readline": lambda self, limit: next(read)})(), None)
    assert judge.receive()["value"] == text


def test_too_deep_a_message_is_the_wire_s_error_not_the_parser_s():
    read = iter([b'{"re": 1, "value": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"])
    judge = Endpoint(type("R", (), {"readline": lambda self, limit: next(read)})(), None)
    with pytest.raises(WireError):
        judge.receive()


JUDGE_MEMORY = """
import json, sys, tempfile
from pathlib import Path
from course.labs.remote import Worker

def high_water():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

cells = [{"kind": "exercise", "key": "flood", "source": "def flood():\\n    return [{}] * %d\\n"}]
worker = Worker(cells, Path(tempfile.mkdtemp()), confined=False, timeout=120)
names = {}
worker.bind(names, "flood", ["flood"])
before = high_water()
try:
    outcome = "returned %%d values" %% len(names["flood"]())
except Exception as exc:
    outcome = f"{type(exc).__name__}: {exc}"
grown = high_water() - before
worker.stop()
print(json.dumps({"outcome": outcome, "grown": grown}))
"""


def test_one_flooding_answer_does_not_grow_the_judge():
    """The judge is a process of its own here, its peak memory read from /proc."""
    done = subprocess.run([sys.executable, "-c", JUDGE_MEMORY % 2_000_000], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["outcome"].startswith("WorkerStopped") and f"{MAX_VALUES:,} values" in found["outcome"], found
    assert found["grown"] < 64 * 2**20, f"the judge grew by {found['grown'] / 2**20:.0f} MiB"


# ------------------------------------------------------------------ item 7: no write-back
def test_a_call_never_changes_the_judges_list_and_fails_when_it_tried(pair):  # noqa: F811
    judge, ns = pair
    exec("def empty(xs, d=None):\n    xs.clear()\n    return 0\n"
         "def tidy(xs, d):\n    d['seen'] = len(xs)\n    return 1\n", ns)
    numbers, box = [1, 2, 3], {}
    with pytest.raises(ArgumentChanged, match="empty changed the argument 1 it was given"):
        judge.lookup("empty")(numbers)
    assert numbers == [1, 2, 3]
    with pytest.raises(ArgumentChanged, match="argument 'd'"):
        judge.lookup("tidy")(numbers, d=box)
    assert box == {}


def test_state_made_to_record_a_call_still_takes_its_changes(pair):  # noqa: F811
    """Lab 11 hands the student's function a ResultStore and reads what it recorded there."""
    from course.givens.production_compaction import ResultStore

    judge, ns = pair
    exec("def keep(store):\n    store.save('call_1', 'the full output')\n    return None\n", ns)
    store = ResultStore()
    judge.lookup("keep")(store)
    assert list(store.files.values()) == ["the full output"]


def test_a_check_s_callback_still_changes_what_the_student_passed_it(pair):  # noqa: F811
    """Lab 12: the check's agent marks the database the student's run_trials gave it."""
    judge, ns = pair
    exec("def trial(agent):\n    db = {'marks': 0}\n    agent(db)\n    return db['marks']\n", ns)

    def agent(db):
        db["marks"] += 1

    assert judge.lookup("trial")(agent) == 1


# ------------------------------------------------------------------ item 8: $same and freed ids
def test_an_argument_the_call_dropped_never_stands_for_a_new_object(pair):  # noqa: F811
    judge, ns = pair
    exec("def fresh(xs):\n"
         "    made = []\n"
         "    for i in range(len(xs)):\n"
         "        xs[i] = dict(xs[i])  # an equal copy: the argument is unchanged, the old dict freed\n"
         "        made.append({'new': i})  # in the memory the old dict had\n"
         "    return made\n", ns)
    given = [{"old": i} for i in range(50)]
    assert judge.lookup("fresh")(given) == [{"new": i} for i in range(50)]
    assert given == [{"old": i} for i in range(50)]


# ------------------------------------------------------------------ a class graded the documented way
TOTAL_STUB = 'def total(numbers):\n    """The sum of a list of numbers."""\n    raise NotImplementedError("write total")'
TOTAL_HINT = "total(numbers) returns the sum of the numbers"
TOTAL_CHECK = ("numbers = [4, 5, 6]\ngot = total(numbers)\n"
               "assert got == sum(numbers), f\"total({numbers}) should be {sum(numbers)}; got {got!r}\"")
STUDENTS = {
    "honest": {"add": SOLVED["add"], "total": "def total(numbers):\n    return sum(numbers)\n"},
    "forges_a_timeout": {"add": "from course.labs.remote import StudentTimeout\n\n"
                                "def add(a, b):\n    raise StudentTimeout('your code did not return within 5 s')\n"},
    "empties_the_checks_list": {"total": "def total(numbers):\n    numbers.clear()\n    return 0\n"},
    "asserts_in_its_code": {"add": "def add(a, b):\n    assert a < 0, 'only negative numbers here'\n    return a + b\n"},
    "never_returns": {"add": "def add(a, b):\n    while True:\n        pass\n"},
}


def worker_lab() -> nbformat.NotebookNode:
    """The tiny lab graded in the worker, with one more exercise that takes a list."""
    nb = tiny_lab_notebook()
    nb.metadata["course"]["worker"] = True
    new = nbformat.v4.new_code_cell
    at = len(nb.cells) - 1  # before the tally
    nb.cells[at:at] = [
        new(TOTAL_STUB, metadata={"tags": ["exercise"], "course": {"key": "total"}}),
        new(check_source("check-total", TOTAL_HINT, TOTAL_CHECK), metadata={"tags": ["check"], "course": {"key": "check-total"}}),
    ]
    return nb


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    labs = tmp_path_factory.mktemp("wire_labs")
    nbformat.write(worker_lab(), labs / f"{TINY_LAB}.ipynb")
    subs = tmp_path_factory.mktemp("wire_class")
    for name, answers in STUDENTS.items():
        copy = worker_lab()
        for cell in copy.cells:
            key = cell.metadata.get("course", {}).get("key")
            if "exercise" in cell.metadata.get("tags", []) and key in answers:
                cell.source = answers[key]
            elif "exercise" in cell.metadata.get("tags", []) and key in SOLVED:
                cell.source = SOLVED[key]
        nbformat.write(copy, subs / f"{name}.ipynb")
    out = tmp_path_factory.mktemp("wire_out")
    unconfined = ["--unconfined"] if confinement.problem() is not None else []
    assert course.grade.main([str(subs), "--labs", str(labs), "--timeout", "10", "--jobs", "2",
                              "--output", str(out), *unconfined]) == 0
    rows = list(csv.DictReader((out / "gradebook.csv").open(encoding="utf-8")))
    return {(r["student"], r["check"]): r for r in rows}


def test_the_honest_student_scores_every_check(graded_class):
    assert {c: r["status"] for (s, c), r in graded_class.items() if s == "honest"} == {
        "check-add-pair": "pass", "check-add-negative": "pass", "check-shout": "pass", "check-total": "pass"}


def test_a_forged_timeout_is_a_plain_failure(graded_class):
    row = graded_class[("forges_a_timeout", "check-add-pair")]
    assert (row["status"], row["earned"]) == ("fail", "0"), row
    assert "TimeoutError: your code did not return within 5 s" in row["detail"]


def test_a_function_that_empties_the_checks_list_does_not_pass(graded_class):
    row = graded_class[("empties_the_checks_list", "check-total")]
    assert (row["status"], row["earned"]) == ("fail", "0"), row
    assert "total changed the argument 1 it was given" in row["detail"]


def test_an_assert_in_the_students_code_is_reported_as_theirs_with_the_hint(graded_class):
    row = graded_class[("asserts_in_its_code", "check-add-pair")]
    assert row["status"] == "fail"
    assert row["detail"] == "add(a, b) returns the sum of its two numbers\nAssertionError: only negative numbers here"
    assert graded_class[("asserts_in_its_code", "check-add-negative")]["status"] == "pass"


def test_an_endless_exercise_costs_one_timeout_not_one_per_check(graded_class):
    rows = {c: r for (s, c), r in graded_class.items() if s == "never_returns"}
    assert [rows[c]["status"] for c in ("check-add-pair", "check-add-negative")] == ["timeout", "timeout"]
    details = [rows[c]["detail"] for c in ("check-add-pair", "check-add-negative")]
    assert sum("did not return within 10 s" in d for d in details) == 1, details
    assert "add timed out earlier" in details[1], details
    assert rows["check-shout"]["status"] == "pass", "the other exercise is called as before"
