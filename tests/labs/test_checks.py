"""Check verdicts: what a student sees, what the grader runs, and that checks stay independent.

- `course.checks` turns a check cell's asserts into a verdict (✓ / ✗ and what to fix, the hint
  before an exception from the student's code), never an error, and `tally` counts them;
- every lab's check cells are one `with check(...)` block whose asserts all say what to fix,
  and the lab ends with its tally;
- no check reads a variable only another check defines (checked statically for every lab, and
  by running lab 01 with a first check that fails before it assigns anything);
- the grader (the answer key under nbval) reaches the same verdict, with the same message, as
  the form the student runs.
"""
from __future__ import annotations

import ast

import nbformat
import pytest

import course.checks as checks
from course.checks import (MIME, CheckCellError, Verdict, check, check_source, failure_message,
                           parse_check_cell, tally)
from course.labs import cell_key, cell_kind, load_lab, run, verdict_of
from course.paths import LABS_DIR

from tests.labs.conftest import grade_one

LABS = sorted(LABS_DIR.glob("*_lab.ipynb"))


@pytest.fixture(autouse=True)
def fresh_verdicts():
    checks._verdicts.clear()
    yield
    checks._verdicts.clear()


# ------------------------------------------------------------------------ the verdict machinery
def test_a_passing_check_prints_its_key_and_nothing_else(capsys):
    with check("check-one", hint="one must be 1"):
        assert 1 == 1, "one is one"
    assert capsys.readouterr().out == "✓ check-one\n"
    assert checks.verdicts()["check-one"] == Verdict("check-one", True)


def test_a_failing_assert_shows_its_message_and_the_cell_goes_on(capsys):
    with check("check-two", hint="two must be 2"):
        raise AssertionError("expected 2, got 1: add one more")  # (pytest rewrites a plain assert)
    after = "reached"  # the with block swallowed the failure: Run All goes on
    assert after == "reached"
    assert capsys.readouterr().out == "✗ check-two\n  expected 2, got 1: add one more\n"
    assert checks.verdicts()["check-two"].error == "AssertionError"


def test_an_exception_from_the_students_code_shows_the_hint_first(capsys):
    def run_agent():
        raise ConnectionError("weather service unavailable")

    with check("check-agent", hint="run_agent must turn a tool's exception into an error result"):
        run_agent()
    assert capsys.readouterr().out == ("✗ check-agent\n"
                                       "  run_agent must turn a tool's exception into an error result\n"
                                       "  ConnectionError: weather service unavailable\n")


def _cell(source: str, namespace: dict, number: int) -> None:
    """Run `source` as a notebook cell: compiled under a kernel's cell file name, its lines
    where IPython keeps them, so tracebacks name it as they would in Jupyter."""
    import linecache

    filename = f"/tmp/ipykernel_4242/{number}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the test's own code


CHECK_CELL = 'with check("check-short", hint="shorten(text) returns at most 5 characters"):\n    {body}\n'


def test_an_assert_in_the_students_function_is_theirs_with_the_hint_and_line(capsys):
    """Issue 46 item 11: it read as the check's verdict ("✗ check / too long", no hint, no line)."""
    ns = {"check": check}
    _cell("def shorten(text):\n    assert len(text) < 5, 'too long'\n    return text\n", ns, 1)
    _cell(CHECK_CELL.format(body='shorten("a long text")'), ns, 2)
    assert capsys.readouterr().out == (
        "✗ check-short\n  shorten(text) returns at most 5 characters\n  AssertionError: too long\n"
        "  (raised in your shorten, line 2 of its cell: assert len(text) < 5, 'too long')\n")
    assert checks.verdicts()["check-short"].error == "AssertionError"


def test_an_assert_of_the_check_or_of_the_labs_own_helper_stays_the_checks_verdict(capsys, monkeypatch):
    setup = "def check_short(f, text):\n    got = f(text)\n    assert len(got) <= 5, f'{text!r} gave {got!r}: cut it to 5'\n"
    monkeypatch.setattr(checks, "_released_sources", lambda: frozenset({setup.strip()}))
    ns = {"check": check}
    _cell(setup, ns, 1)  # a set-up cell as the lab released it
    _cell("def shorten(text):\n    return text\n", ns, 2)
    _cell(CHECK_CELL.format(body='check_short(shorten, "a long text")'), ns, 3)
    _cell('with check("check-short", hint="h"):\n    def own():\n        raise AssertionError("the check\'s own")\n    own()\n', ns, 4)
    assert capsys.readouterr().out == ("✗ check-short\n  'a long text' gave 'a long text': cut it to 5\n"
                                       "✗ check-short\n  the check's own\n")


def test_a_labs_set_up_helpers_are_known_as_the_labs():
    lab02 = next(c.source for c in load_lab(LABS_DIR / "02_counting_tokens_lab.ipynb").notebook.cells
                 if "def check_cut(" in c.source)
    assert lab02.strip() in checks._released_sources()
    assert not any("def truncate_to_tokens(" in s for s in checks._released_sources()), "an exercise is the student's"


def test_failure_message_says_whose_an_assertion_error_is():
    assert failure_message("AssertionError", "got 4", "hint") == "got 4"
    assert failure_message("AssertionError", "too long", "hint", theirs=True) == "hint\nAssertionError: too long"
    assert failure_message("StudentAssertionError", "too long", "hint") == "hint\nAssertionError: too long"


def test_an_interrupt_still_stops_the_notebook(capsys):
    with pytest.raises(KeyboardInterrupt):
        with check("check-slow", hint="h"):
            raise KeyboardInterrupt
    assert capsys.readouterr().out.startswith("✗ check-slow\n")


def test_an_exception_whose_message_cannot_be_shown_is_still_a_verdict(capsys):
    class Odd(Exception):
        def __str__(self):
            raise RuntimeError("no")

    with check("check-odd", hint="h"):
        raise Odd()
    assert "Odd" in capsys.readouterr().out


@pytest.mark.parametrize("error,detail,hint,expected", [
    ("AssertionError", "say what to fix", "the hint", "say what to fix"),
    ("AssertionError", "", "the hint", "the hint\nAssertionError"),
    ("NotImplementedError", "write add", "add returns a sum", "add returns a sum\nNotImplementedError: write add"),
    ("KeyError", "'x'", "", "KeyError: 'x'"),
])
def test_failure_messages(error, detail, hint, expected):
    assert failure_message(error, detail, hint) == expected


def test_tally_counts_passes_and_lists_failures_and_checks_not_run(capsys, monkeypatch):
    monkeypatch.setattr(checks, "lab_check_keys", lambda lab_id: ["check-a", "check-b", "check-c"])
    with check("check-a", hint="h"):
        pass
    with check("check-b", hint="b must work"):
        raise ValueError("nope")
    capsys.readouterr()
    text = tally("00_some_lab")
    assert text == ("1 of 3 checks pass\nfailing:\n  ✗ check-b: b must work\n"
                    "      ValueError: nope\n"
                    "not run yet (run their cells; a check cell you edited no longer reports: "
                    "restore it, grading runs the released one):\n  · check-c")
    assert capsys.readouterr().out == text + "\n"


def test_tally_of_a_released_lab_counts_all_its_checks():
    lab = load_lab(LABS[0])
    assert checks.lab_check_keys(lab.lab_id) == [cell_key(c) for _, c in lab.checks()]
    assert tally(lab.lab_id).startswith(f"0 of {len(lab.checks())} checks pass")


# ------------------------------------------------------------------------ check cells
def test_parse_and_write_a_check_cell():
    body = 'total = add(2, 3)\nassert total == 5, f"got {total}"'
    source = check_source("check-add", "add returns the sum", body)
    parsed = parse_check_cell(source)
    assert (parsed.key, parsed.hint, parsed.body) == ("check-add", "add returns the sum", body)
    long = check_source("check-add", "a hint " * 20, body)
    assert long.splitlines()[1].lstrip().startswith("hint=") and parse_check_cell(long).hint == "a hint " * 20


@pytest.mark.parametrize("source,reason", [
    ("assert add(1, 2) == 3", "single `with check"),
    ('with check("k"):\n    pass\nprint(1)', "single `with check"),
    ('with open("x"):\n    pass', "must call `check"),
    ('with check("k") as c:\n    pass', "no `as`"),
    ('with check(KEY, hint="h"):\n    pass', "plain string literal"),
    ('with check("k", hint="h", points=2):\n    pass', "a key and a hint only"),
    ('with check(:\n', "does not parse"),
])
def test_malformed_check_cells_are_refused_with_a_reason(source, reason):
    with pytest.raises(CheckCellError, match=reason):
        parse_check_cell(source)


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_lab_check_cells_are_verdict_blocks_whose_asserts_say_what_to_fix(path):
    lab = load_lab(path)
    problems = []
    for _, cell in lab.checks():
        key = cell_key(cell)
        try:
            parsed = parse_check_cell(cell.source)
        except CheckCellError as exc:
            problems.append(f"{key}: {exc}")
            continue
        if parsed.key != key:
            problems.append(f"{key}: the cell's with check({parsed.key!r}) differs from its metadata key")
        if not parsed.hint.strip():
            problems.append(f"{key}: no hint (shown when the student's code raises)")
        bare = [ast.unparse(n)[:60] for n in ast.walk(ast.parse(parsed.body))
                if isinstance(n, ast.Assert) and n.msg is None]
        problems += [f"{key}: `{a}` has no message saying what to fix" for a in bare]
        with_body = ast.Module(body=ast.parse(cell.source).body[0].body, type_ignores=[])
        if ast.dump(with_body) != ast.dump(ast.parse(parsed.body)):
            problems.append(f"{key}: the bare body the grader runs differs from the block")
    code = [c for c in lab.notebook.cells if c.cell_type == "code"]
    if not (cell_kind(code[-1]) == "tally" and code[-1].source.strip() == f'tally("{lab.lab_id}")'):
        problems.append(f'the last code cell must be tagged `tally` and be tally("{lab.lab_id}")')
    setup = next(c for c in code if cell_kind(c) is None)
    if "from course.checks import check, tally" not in setup.source:
        problems.append("the first set-up cell must import check and tally from course.checks")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------ independence
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
          ast.SetComp, ast.DictComp, ast.GeneratorExp)


def module_bound(tree) -> set[str]:
    """Names a cell binds at its top level (not inside functions, lambdas or comprehensions)."""
    names, stack = set(), list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, SCOPES):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names


def free_names(tree) -> set[str]:
    """Names a cell reads that nothing in it binds: what it needs from elsewhere."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def dependencies(setup_sources: list[str], check_bodies: dict[str, str]) -> list[str]:
    """Checks that read a variable only another check defines, or that another check rebinds."""
    setup = set().union(*(module_bound(ast.parse(s)) for s in setup_sources))
    trees = {key: ast.parse(body) for key, body in check_bodies.items()}
    found = []
    for key, tree in trees.items():
        for other, other_tree in trees.items():
            if other == key:
                continue
            for name in sorted((free_names(tree) - setup) & module_bound(other_tree)):
                found.append(f"{key} reads {name!r}, which only {other} defines")
            for name in sorted(free_names(tree) & setup & module_bound(other_tree)):
                found.append(f"{key} reads {name!r}, which {other} rebinds")
    return found


def test_the_dependency_finder_finds_what_lab_01_used_to_have():
    before = {"check-vancouver": "result = run_agent(GOOD)\nassert result, 'x'",
              "check-parallel": "history = result['messages']\nassert history, 'x'"}
    assert dependencies(["GOOD = []"], before) == ["check-parallel reads 'result', which only check-vancouver defines"]
    rebinding = {"check-a": "GOOD = None\nassert 1, 'x'", "check-b": "assert GOOD == [], 'x'"}
    assert dependencies(["GOOD = []"], rebinding) == ["check-b reads 'GOOD', which check-a rebinds"]
    independent = {"check-a": "[s for s in GOOD]\nf = lambda q: q\nassert 1, 'x'",
                   "check-b": "s = 1\nq = 2\nassert s + q, 'x'"}
    assert dependencies(["GOOD = []"], independent) == []


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_no_check_depends_on_another_check(path):
    lab = load_lab(path)
    setup = [c.source for c in lab.notebook.cells if c.cell_type == "code" and cell_kind(c) != "check"]
    bodies = {cell_key(c): parse_check_cell(c.source).body for _, c in lab.checks()}
    assert dependencies(setup, bodies) == []


# ------------------------------------------------------------------------ running: the tiny lab
HALF_SOLVED = {"add": "def add(a, b):\n    return a + b",
               "shout": 'def shout(text):\n    raise ValueError(f"cannot shout {text!r}")'}


@pytest.fixture(scope="module")
def half_solved_run(tiny):
    """The tiny lab half solved, run as the student runs it (Run All) and as the grader does."""
    lab = load_lab(tiny.lab_path)
    student = tiny.submission(HALF_SOLVED)
    return lab, student, run(lab, student, timeout=30), grade_one(lab, student)


def test_run_all_shows_every_verdict_and_never_stops(half_solved_run):
    _, _, outcome, _ = half_solved_run
    assert [r.status for r in outcome.results if r.kind != "check"] == ["passed"] * 4  # set-up, 2 exercises, tally
    assert [(r.key, r.status) for r in outcome.checks()] == [
        ("check-add-pair", "passed"), ("check-add-negative", "passed"), ("check-shout", "failed")]
    assert outcome.tally_text() == ("2 of 3 checks pass\nfailing:\n"
                                    "  ✗ check-shout: shout(text) returns the text in capitals followed by '!'\n"
                                    "      ValueError: cannot shout 'hi'")


def test_a_verdict_is_text_for_the_student_and_json_for_tools(tiny):
    lab = load_lab(tiny.lab_path)
    nb = tiny.submission(HALF_SOLVED)
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=30, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(tiny.labs_dir)}}).execute()
    shown = {cell_key(c): c.outputs for c in nb.cells if cell_kind(c) == "check"}
    assert all(not any(o.output_type == "error" for o in outputs) for outputs in shown.values())
    passed = shown["check-add-pair"]
    assert [o.output_type for o in passed] == ["display_data"]
    assert passed[0].data["text/plain"] == "✓ check-add-pair"
    assert passed[0].data[MIME] == {"key": "check-add-pair", "passed": True, "message": "", "error": None}
    failed = shown["check-shout"][0].data
    where = "(raised in your shout, line 2 of its cell: raise ValueError(f\"cannot shout {text!r}\"))"
    assert failed["text/plain"] == ("✗ check-shout\n  shout(text) returns the text in capitals followed by '!'\n"
                                    "  ValueError: cannot shout 'hi'\n  " + where)
    assert failed[MIME] == {"key": "check-shout", "passed": False, "error": "ValueError",
                            "message": "shout(text) returns the text in capitals followed by '!'\n"
                                       "ValueError: cannot shout 'hi'"}
    assert verdict_of(nb.cells[3]) == passed[0].data[MIME] and lab.lab_id == "00_tiny_lab"
    tally_cell = next(c for c in nb.cells if cell_kind(c) == "tally")
    assert [o.output_type for o in tally_cell.outputs] == ["stream"], "the tally is shown once, unquoted"


def test_the_tally_says_when_an_exercise_is_the_reference_answer():
    """Grading scores an exercise that imports the answers as the stub: the tally says so."""
    from nbclient import NotebookClient
    new = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[new("from course.checks import tally"),
                                         new("from solutions.agent_loop import validate_messages"),
                                         new('tally("01_agent_loop_lab")')])
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    text = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert "graded as the stub (the reference answer is imported, not yours):\n  · validate_messages" in text
    assert "every check passes" not in text


def test_in_the_students_kernel_their_own_assert_shows_the_hint(tiny):
    """Issue 46 item 11, in Jupyter itself (graded: tests/labs/test_hostile_wire.py)."""
    student = tiny.submission({**HALF_SOLVED, "shout": "def shout(text):\n    assert text.isupper(), 'lower case'\n    return text + '!'"})
    outcome = run(load_lab(tiny.lab_path), student, timeout=30)
    shout = next(r for r in outcome.checks() if r.key == "check-shout")
    assert (shout.status, shout.error) == (
        "failed", "shout(text) returns the text in capitals followed by '!'\nAssertionError: lower case")


def test_the_grader_reaches_the_verdicts_the_student_sees(half_solved_run):
    _, _, as_student, as_grader = half_solved_run
    assert as_grader == {r.key: ("pass" if r.status == "passed" else "fail", r.error)
                         for r in as_student.checks()}


# ------------------------------------------------------------------------ running: lab 01
def flaky_run_agent() -> str:
    """run_agent that raises on its first call only: the first check fails before it assigns
    anything, the next one (which calls run_agent itself) works."""
    import inspect

    import solutions.agent_loop as reference

    source = inspect.getsource(reference.run_agent)
    return ("_calls = []\n\n" + source.replace("def run_agent(", "def _working_run_agent(", 1) +
            "\n\ndef run_agent(*args, **kwargs):\n"
            "    _calls.append(1)\n"
            "    if len(_calls) == 1:\n"
            "        raise ConnectionError('the network dropped the first request')\n"
            "    return _working_run_agent(*args, **kwargs)\n")


@pytest.fixture(scope="module")
def lab01_flaky():
    import inspect

    import solutions.agent_loop as reference

    lab = load_lab(LABS_DIR / "01_agent_loop_lab.ipynb")
    student = nbformat.read(lab.path, as_version=4)
    module_source = inspect.getsource(reference)
    for cell in student.cells:
        if cell_kind(cell) == "exercise":
            cell.source = module_source if cell_key(cell) == "validate_messages" else \
                module_source + "\n\n" + flaky_run_agent()
    as_student = {r.key: ("pass" if r.status == "passed" else "fail", r.error)
                  for r in run(lab, student, timeout=60).checks()}
    return as_student, grade_one(lab, student)


@pytest.mark.parametrize("form", ["student", "grader"])
def test_a_failing_check_never_causes_a_name_error_in_another(lab01_flaky, form):
    status = lab01_flaky[0 if form == "student" else 1]
    assert status["check-agent-vancouver"] == (
        "fail", "run_agent must answer the Vancouver question in 2 API calls and return the "
                "history, without changing the caller's list\n"
                "ConnectionError: the network dropped the first request"), "the hint, then the exception"
    assert status["check-agent-parallel-results-match-calls"][0] == "pass", \
        status["check-agent-parallel-results-match-calls"]
    assert [key for key, (s, _) in status.items() if s != "pass"] == ["check-agent-vancouver"]


def test_a_check_that_never_ends_is_stopped_and_fails(monkeypatch, capsys):
    """Run All reaches the tally: an endless loop costs its own check only."""
    monkeypatch.setenv("COURSE_CHECK_SECONDS", "0.2")
    with check("check-endless", hint="must end"):
        while True:
            pass
    verdict = checks.verdicts()["check-endless"]
    assert not verdict.passed and verdict.error == "CheckTimeout"
    assert "did not finish within 0.2 s" in verdict.message
    import signal
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0), "the timer is off once the check ends"
    with check("check-after", hint="h"):
        pass
    assert checks.verdicts()["check-after"].passed
