"""Judging a cell of a lab run as the student runs it (solved and unsolved proofs, the
plugin's solved and unsolved modes): the verdict a check displayed (`judge_verdict_check`) and
the exception a cell ended in. Graded work is never judged here: course.grade and the
plugin's grade mode run the answer key under nbval (course.labs.answer_keys)."""
from __future__ import annotations

from course.checks import MIME
from course.labs.lab import cell_key

NO_VERDICT = "the check did not run to its end (the cell was changed or cut short while it ran): no verdict"


def _error_output(cell) -> tuple[str, str] | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", "Error"), output.get("evalue", "")
    return None


def error_of(cell, reply: dict | None) -> tuple[str, str] | None:
    """(type name, message) of the exception a cell ended in: the execute reply says, or, if
    there is no reply, an error output."""
    content = (reply or {}).get("content", {})
    if content.get("status") == "error":
        return content.get("ename") or "Error", content.get("evalue") or ""
    return _error_output(cell)


def error_text(ename: str, evalue: str) -> str:
    return f"{ename}: {evalue}".strip().rstrip(":")


def stdout_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def verdict_of(cell) -> dict | None:
    """The last check verdict a cell displayed (student form), or None."""
    found = None
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output.get("output_type") in ("display_data", "execute_result") and MIME in data:
            found = data[MIME]
    return found


def judge_verdict_check(cell, reply: dict | None) -> tuple[str, str, str | None]:
    """(status, what to fix, exception type) for a check as the student runs it."""
    error = error_of(cell, reply)
    if error:  # the check cell itself broke (it must never)
        return "failed", f"the check cell ended in an error: {error_text(*error)}", error[0]
    verdict = verdict_of(cell)
    if verdict is None:
        return "failed", "the check cell showed no verdict", None
    if verdict.get("key") != cell_key(cell):
        return "failed", f"the verdict is for {verdict.get('key')!r}, not {cell_key(cell)!r}", None
    if verdict.get("passed"):
        return "passed", "", None
    return "failed", verdict.get("message", ""), verdict.get("error")
