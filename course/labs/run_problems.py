"""What a solved or an unsolved run of a lab must show, as a list of problems (empty when the
lab is sound): the lab tests' verdict on a lab as authored."""
from __future__ import annotations

from course.labs.running import LabRun

def _tally_problems(outcome: LabRun) -> list[str]:
    checks = outcome.checks()
    passed = sum(r.status == "passed" for r in checks)
    text = outcome.tally_text()
    if text is None:
        return ["the lab has no tally cell (tagged `tally`, calling tally(lab_id)) at its end"]
    expected = f"{passed} of {len(checks)} checks pass"
    if not text.startswith(expected):
        return [f"the tally cell printed {text.splitlines()[0] if text else 'nothing'!r}, "
                f"expected {expected!r}"]
    return []


def solved_problems(outcome: LabRun) -> list[str]:
    """What is wrong with a solved run: every check passes, no cell ends in an error."""
    problems = [f"cell {r.index} ({r.kind or 'code'} {r.key or ''}) {r.status}: {r.error}".replace("  ", " ")
                for r in outcome.results if r.status != "passed"]
    return problems + _tally_problems(outcome)


def unsolved_problems(outcome: LabRun) -> list[str]:
    """What is wrong with an unsolved run: checks fail (each for its own reason), every other
    cell passes, and Run All reaches the tally."""
    problems = []
    for r in outcome.results:
        if r.kind == "check" and r.status == "passed":
            problems.append(f"check {r.key!r} (cell {r.index}) passed on the unsolved stubs: it "
                            f"cannot tell a solved lab from an unsolved one")
        elif r.kind == "check" and r.error_type == "NameError":
            problems.append(f"check {r.key!r} (cell {r.index}) failed with a NameError on the "
                            f"stubs: it uses a variable it does not define ({r.error.splitlines()[-1]}); "
                            f"a check may only use what set-up and exercise cells define")
        elif r.kind == "check" and r.error.startswith(("the check cell", "the verdict is for")):
            problems.append(f"check {r.key!r} (cell {r.index}): {r.error}")
        elif r.kind != "check" and r.status != "passed":
            problems.append(f"cell {r.index} ({r.kind or 'code'}) must run on the unsolved lab "
                            f"but {r.status}: {r.error}")
    if not outcome.checks():
        problems.append("the lab has no check cells")
    return problems + _tally_problems(outcome)
