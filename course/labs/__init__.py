"""Run labs three ways: solved, unsolved, and graded.

A lab is a notebook (`labs/NN_slug_lab.ipynb`) whose metadata names it and its solution
module, with tagged cells (see AUTHORING.md, Labs):

- `exercise` cells hold stubs; `metadata.course.key` names the function they define;
- `check` cells are one `with check("check-key", hint="..."):` block of asserts
  (`course.checks`); `metadata.course.key` is the same key, `points` optional;
- a `tally` cell (the last) prints "K of N checks pass".

    solved    every exercise cell replaced by an import from the solution module; every
              check's verdict must pass and no cell may end in an error
    unsolved  the lab as released; every check's verdict must fail (a check that passes on
              the stubs cannot tell right from wrong), and no cell may end in an error
    grade     a student's copy: only the exercise cells are taken from it (`graded_exercises`),
              everything else from the released lab's answer key; the exercises run in a
              confined worker and the checks, bare, beside them under strict nbval
              (`nbval_graded`); scored by check

Solved and unsolved runs read the verdicts the student sees (`application/vnd.course.check+json`
outputs). A graded run never does: its verdicts are nbval's comparison with the answer key,
decided in a kernel where no student code has run.

Where each part lives:

    lab.py           the Lab record, cell tags and points, reading and matching lab notebooks
    screening.py     exercise code that imports the answers or reaches into the machinery
    variants.py      the solved notebook, the exercises a grader takes from a student
    answer_keys.py   the answer key and the graded copies nbval runs against it
    running.py       running a notebook in a fresh kernel; CellResult, LabRun
    judging.py       judging a check of a solved or unsolved run from its verdict
    run_problems.py  what is wrong with a solved or an unsolved run
    wire.py          what crosses between the judge and the worker: JSON, handles, no pickles
    worker.py        the worker process that runs a graded student's exercises
    remote.py        the judge's side: starting the worker, binding the exercises' names
    confinement.py   the bubblewrap sandbox and limits the worker runs in
    observe.py       what the judge sees of the workers from outside: their processes, memory
"""
from course.labs.answer_keys import (answer_key, nbval_check_source, nbval_graded, nbval_solved,
                                     nbval_unsolved)
from course.labs.confinement import answer_modules
from course.labs.judging import NO_VERDICT, verdict_of
from course.labs.lab import (LAB_NAME, Lab, LabError, cell_key, cell_kind, cell_points,
                             checks_only, find_released_labs, load_lab, match_lab, read_notebook,
                             whole)
from course.labs.run_problems import solved_problems, unsolved_problems
from course.labs.running import SETUP_TIMEOUT, LabRun, cell_problem, run, run_solved, run_unsolved
from course.labs.screening import imports_answers
from course.labs.variants import exercises_worked, graded_exercises, not_attempted, solved

__all__ = [
    "LAB_NAME", "Lab", "LabError", "LabRun", "NO_VERDICT", "SETUP_TIMEOUT", "answer_key",
    "answer_modules", "cell_key", "cell_kind", "cell_points", "cell_problem", "checks_only",
    "exercises_worked", "find_released_labs", "graded_exercises", "imports_answers", "load_lab",
    "match_lab", "nbval_check_source", "nbval_graded", "nbval_solved", "nbval_unsolved",
    "not_attempted", "read_notebook", "run", "run_solved", "run_unsolved", "solved",
    "solved_problems", "unsolved_problems", "verdict_of", "whole",
]
