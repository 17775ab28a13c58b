"""Check verdicts for labs: a check cell reports instead of stopping (the otter-grader style).

A lab's check cell is one `with` block:

    with check("check-validate-good-history", hint="validate_messages must accept a correct history"):
        problems = validate_messages(GOOD)
        assert problems == [], f"a correct history was reported as broken: {problems}"

Run in a notebook, it shows a verdict and never ends the cell in an error, so Run All goes on
to the end of the lab:

    ✓ check-validate-good-history                         (the same text every run)
    ✗ check-validate-good-history                         (and what to fix:)
      a correct history was reported as broken: ['messages[3]: ...']

When the student's code raises an exception (an `AssertionError` too: only the check's own
asserts are the check's verdict), the verdict shows the check's `hint` first, then the
exception's type and message, and the line of the student's function that raised it. The verdict is also a
display output of MIME type `application/vnd.course.check+json` carrying
`{"key", "passed", "message"}` (and `"error"`, the exception's type name or null). The lab's
last cell calls `tally("NN_slug_lab")`: "K of N checks pass" and the failing ones.

These verdicts are feedback for the student, nothing more: the student's code runs in the same
Python and could replace this module. Grading never asks it: `course.labs.graded` runs each
check cell's asserts bare (`check_body`) and judges them from outside the kernel.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import signal
import textwrap
from dataclasses import dataclass

from course.check_messages import localised
from course.i18n import _

MIME = "application/vnd.course.check+json"
PASS, FAIL = "✓", "✗"


@dataclass(frozen=True)
class Verdict:
    key: str
    passed: bool
    message: str = ""       # what to fix ("" on a pass)
    error: str | None = None  # the exception's type name, None on a pass
    where: str = ""         # the line of the student's function that raised (shown, not graded)

    @property
    def text(self) -> str:
        if self.passed:
            return f"{PASS} {self.key}"
        message = localised(self.key, self.message)     # the payload keeps the English
        shown = f"{message}\n{self.where}" if self.where else message
        return f"{FAIL} {self.key}\n" + textwrap.indent(shown, "  ")

    def payload(self) -> dict:
        return {"key": self.key, "passed": self.passed, "message": self.message, "error": self.error}


class StudentAssertionError(AssertionError):
    """An AssertionError raised inside the student's own code, not by a check's assert. The
    judge of a graded lab raises it for one the worker reports from an exercise (so the grader,
    which sees only the type's name, can tell it from the check's verdict)."""


def failure_message(error: str, detail: str, hint: str = "", theirs: bool | None = None) -> str:
    """What a failing check tells the student; the grader builds the same text from outside.

    `error` is the exception's type name and `detail` its message; `theirs`, whether the
    student's code raised it (by default, any type but AssertionError). A check's own assert
    says what to fix in its message, so it is shown as it is. Anything the student's code
    raised, an AssertionError too, shows the check's hint first, then the type and message.
    """
    if error == StudentAssertionError.__name__:
        error, theirs = "AssertionError", True
    if theirs is None:
        theirs = error != "AssertionError"
    if not theirs and detail:
        return detail
    raised = f"{error}: {detail}" if detail else error
    return f"{hint}\n{raised}" if hint else raised


# ------------------------------------------------------------------------ in the notebook
_verdicts: dict[str, Verdict] = {}


CHECK_SECONDS = 300  # a check's time limit in the student's kernel (COURSE_CHECK_SECONDS)


class CheckTimeout(Exception):
    """A check that did not finish within its time limit (an endless loop, a wait)."""


class check:
    """`with check("check-key", hint="..."):` — run the block's asserts and show a verdict.

    Exceptions (`Exception` and its subclasses) end the block and become a failing verdict;
    a KeyboardInterrupt (the student pressed stop) still stops the notebook after its verdict.
    A block that runs longer than `CHECK_SECONDS` is stopped and fails, so Run All always
    reaches the tally (where the process has timers: the main thread, on Unix).
    """

    def __init__(self, key: str, hint: str = ""):
        self.key, self.hint = key, hint
        self._previous = None

    def __enter__(self):
        seconds = _check_seconds()
        try:
            self._previous = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        except (AttributeError, ValueError):  # no SIGALRM here, or not the main thread
            self._previous = None
        return self

    def _expired(self, signum, frame):
        raise CheckTimeout(_("the check did not finish within {seconds} s (an endless loop, or a "
                             "wait that never ends?): it was stopped")
                           .format(seconds=f"{_check_seconds():g}"))

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._previous = None
        if exc_type is None:
            verdict = Verdict(self.key, True)
        else:
            owner, frame = _students_part(tb)
            theirs = owner or not isinstance(exc, AssertionError)
            message = failure_message(type(exc).__name__, _exception_text(exc), self.hint, theirs)
            where = _notebook_line(frame) if frame is not None else ""
            if not isinstance(exc, Exception):
                message += "\n" + _("(interrupted: the check did not finish)")
            verdict = Verdict(self.key, False, message, type(exc).__name__, where)
        _verdicts[self.key] = verdict
        show(verdict)
        return exc is None or isinstance(exc, Exception)  # swallow errors, not interrupts


def _students_part(tb) -> tuple[bool, object]:
    """(whether the exception was raised in the student's code, the last frame of the traceback
    in a function the student wrote, or None). Of the traceback's frames in functions defined in
    notebook cells, the last one says whose the exception is: the student's, unless that
    function is in the check's own cell or in a cell as the lab released it (a set-up helper
    whose asserts are the check's)."""
    import traceback

    frames = traceback.extract_tb(tb)
    if not frames:
        return False, None
    check_cell = frames[0].filename  # the `with check(...)` block's own cell
    owner, last = None, None
    for frame in frames:
        if frame.name == "<module>" or not _in_notebook(frame.filename):
            continue
        students = frame.filename != check_cell and not _released_cell(frame.filename)
        owner = students
        last = frame if students else last
    return bool(owner), last


def _in_notebook(filename: str) -> bool:
    return "ipykernel_" in filename or filename.startswith("<ipython-input")


def _released_cell(filename: str) -> bool:
    """Is the cell compiled as `filename` a set-up or check cell of a released lab, unchanged?"""
    import linecache

    source = "".join(linecache.getlines(filename)).strip()
    return bool(source) and source in _released_sources()


@functools.lru_cache(maxsize=1)
def _released_sources() -> frozenset[str]:
    """The source of every code cell of the released labs (both editions) but their exercises."""
    from course.paths import CHINESE_EDITION, LABS_DIR

    sources = set()
    for path in [*LABS_DIR.glob("*_lab.ipynb"), *(LABS_DIR.parent / CHINESE_EDITION / "labs").glob("*_lab.ipynb")]:
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for cell in cells:
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            if cell.get("cell_type") == "code" and "exercise" not in cell.get("metadata", {}).get("tags", []):
                sources.add(source.strip())
    return frozenset(sources)


def _notebook_line(frame) -> str:
    """Where in the student's own function the exception was raised (a frame of `_students_part`)."""
    if frame.line:
        return _("(raised in your {function}, line {line} of its cell: {code})").format(
            function=frame.name, line=frame.lineno, code=frame.line.strip())
    return _("(raised in your {function}, line {line} of its cell)").format(
        function=frame.name, line=frame.lineno)


def _check_seconds() -> float:
    try:
        seconds = float(os.environ.get("COURSE_CHECK_SECONDS", CHECK_SECONDS))
    except ValueError:
        return CHECK_SECONDS
    return seconds if seconds > 0 else CHECK_SECONDS


def _exception_text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a student's exception whose __str__ itself fails
        return f"<{type(exc).__name__} whose message cannot be shown>"


def show(verdict: Verdict) -> None:
    """Display the verdict: plain text for the student, JSON for tools; print outside IPython."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython is always installed with the course
        get_ipython = lambda: None  # noqa: E731
    if get_ipython() is None:
        print(verdict.text)
        return
    display({"text/plain": verdict.text, MIME: verdict.payload()}, raw=True)


def verdicts() -> dict[str, Verdict]:
    """The latest verdict of every check run in this kernel, by key."""
    return dict(_verdicts)


class TallyText(str):
    """The tally's text, returned for code to read. `tally()` has printed it already, so as the
    last value of a cell it shows nothing (a plain str would show a second, quoted copy)."""

    def _ipython_display_(self):
        pass


def tally(lab_id: str | None = None) -> TallyText:
    """Print "K of N checks pass", the failing ones with their whole messages, those not run
    yet, and exercises that would be graded as the stub (the reference answer imported).

    With a lab id, N counts every check of the released lab (`labs/<lab_id>.ipynb`); without
    one, the checks run so far.
    """
    keys = lab_check_keys(lab_id) if lab_id else []
    keys += [k for k in _verdicts if k not in keys]
    passed = [k for k in keys if k in _verdicts and _verdicts[k].passed]
    lines = [_("{passed} of {total} checks pass").format(passed=len(passed), total=len(keys))]
    failing = [k for k in keys if k in _verdicts and not _verdicts[k].passed]
    missing = [k for k in keys if k not in _verdicts]
    if failing:
        lines.append(_("failing:"))
        for k in failing:
            first, *rest = localised(k, _verdicts[k].message).splitlines() or [""]
            lines.append(f"  {FAIL} {k}: {first}")
            lines += [f"      {line}" for line in rest]
    if missing:
        lines.append(_("not run yet (run their cells; a check cell you edited no longer reports: "
                       "restore it, grading runs the released one):"))
        lines += [f"  · {k}" for k in missing]
    borrowed = _reference_answers_in_use(lab_id) if lab_id else []
    if borrowed:
        lines.append(_("graded as the stub (the reference answer is imported, not yours):"))
        lines += [f"  · {name}" for name in borrowed]
    if keys and len(passed) == len(keys) and not borrowed:
        lines[0] = _("{tally}: every check passes.").format(tally=lines[0])
    text = TallyText("\n".join(lines))
    print(text)
    return text


def _reference_answers_in_use(lab_id: str) -> list[str]:
    """The lab's exercises whose name, in the notebook, is a function from `solutions`."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython is always installed with the course
        shell = None
    if shell is None:
        return []
    names = lab_cell_keys(lab_id, "exercise")
    return [n for n in names
            if str(getattr(shell.user_ns.get(n), "__module__", "") or "").split(".")[0] == "solutions"]


def lab_check_keys(lab_id: str) -> list[str]:
    """The check keys of a released lab, in order; [] if the lab cannot be read."""
    return lab_cell_keys(lab_id, "check")


def lab_cell_keys(lab_id: str, kind: str) -> list[str]:
    """The keys of a released lab's cells tagged `kind`, in order; [] if it cannot be read."""
    from course.paths import LABS_DIR

    try:
        nb = json.loads((LABS_DIR / f"{lab_id}.ipynb").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    keys = []
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {})
        if kind in meta.get("tags", []) and meta.get("course", {}).get("key"):
            keys.append(meta["course"]["key"])
    return keys


# ------------------------------------------------------------------------ self-test answers
_LETTER_TOKENS = re.compile(r"[\s,;/&]+|\band\b")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?")


def normalised_answer(value) -> str:
    """The form a self-test answer is compared in, so that the same answer written differently
    matches: option letters ignore case, spaces, separators and order ("B", " b", "(b)" match
    "b"; "c, a" matches "ac"); a number is compared by value, written as a string or not
    (1152.0, "1,152" and 1152 match; non-integers to 12 significant digits); other text is
    lower-cased with its spaces collapsed."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return _number_text(value)
    if not isinstance(value, str):
        return " ".join(str(value).split()).lower()
    text = " ".join(value.split()).lower().strip("()[]{}.'\" ").rstrip(")")
    plain = text.replace(",", "").replace("_", "").replace(" ", "")
    if _NUMBER.fullmatch(plain):
        return _number_text(float(plain))
    tokens = [t.strip("()") for t in _LETTER_TOKENS.split(text) if t.strip("()")]
    if tokens and all(len(t) == 1 and t.isalpha() for t in tokens):
        return "".join(sorted(set(tokens)))
    if len(tokens) == 1 and 1 < len(text) <= 8 and set(text) <= set("abcdefgh") and len(set(text)) == len(text):
        return "".join(sorted(text))  # "ca": letters written together
    return text


def _number_text(number) -> str:
    number = float(number)
    if number.is_integer():
        return str(int(number))
    return f"{number:.12g}"


def answer_digest(value) -> str:
    """sha256 of `normalised_answer(value)`: a lab's self-test checks compare digests, so the
    released lab does not show its answers in clear (they are not secret: the reference
    solution holds them, and a student can try every option; it is feedback, like any check)."""
    return hashlib.sha256(normalised_answer(value).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------ for the grader
class CheckCellError(ValueError):
    """A check cell not written as one `with check("key", hint="..."):` block."""


@dataclass(frozen=True)
class CheckCell:
    key: str
    hint: str
    body: str  # the block's statements, dedented: the bare asserts the grader runs


def parse_check_cell(source: str) -> CheckCell:
    """Split a check cell into its key, hint and bare body (see AUTHORING.md, Labs).

    The cell must be exactly one `with check("key", hint="..."):` statement (comments around
    it are fine) whose key and hint are string literals.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise CheckCellError(f"the check cell does not parse: {exc.msg} (line {exc.lineno})") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.With):
        raise CheckCellError("a check cell must be a single `with check(\"key\", hint=...):` block")
    node = tree.body[0]
    if len(node.items) != 1 or node.items[0].optional_vars is not None:
        raise CheckCellError("a check cell's `with` takes exactly one `check(...)` and no `as`")
    call = node.items[0].context_expr
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "check"):
        raise CheckCellError("a check cell's `with` must call `check(...)`")
    args = {kw.arg: kw.value for kw in call.keywords}
    if call.args:
        args.setdefault("key", call.args[0])
    if len(call.args) > 1:
        args.setdefault("hint", call.args[1])
    if set(args) - {"key", "hint"} or None in args:
        raise CheckCellError("check(...) takes a key and a hint only")
    values = {}
    for name, value in args.items():
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            raise CheckCellError(f"check(...)'s {name} must be a plain string literal")
        values[name] = value.value
    if not values.get("key"):
        raise CheckCellError("check(...) needs a key")
    lines = source.splitlines()
    first, last = node.body[0].lineno, node.body[-1].end_lineno
    body = textwrap.dedent("\n".join(lines[first - 1:last]))
    try:
        ast.parse(body)
    except SyntaxError as exc:  # e.g. a multi-line string less indented than the block
        raise CheckCellError(f"the check's body cannot stand alone: {exc.msg}") from None
    return CheckCell(values["key"], values.get("hint", ""), body)


def check_source(key: str, hint: str, body: str) -> str:
    """The source of a check cell (the inverse of `parse_check_cell`)."""
    key_text, hint_text = json.dumps(key, ensure_ascii=False), json.dumps(hint, ensure_ascii=False)
    header = f"with check({key_text}, hint={hint_text}):"
    if len(header) > 100:
        header = f"with check({key_text},\n           hint={hint_text}):"
    return header + "\n" + textwrap.indent(body.strip("\n"), "    ")
