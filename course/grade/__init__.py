"""Grade a folder of student lab notebooks: `python -m course.grade SUBMISSIONS_DIR`.

SUBMISSIONS_DIR holds one entry per student: a folder (the student's name) with their lab
notebooks in it, or a single notebook file (named after the student). Each notebook is matched
to its released lab (`course.labs.match_lab`: the lab id in its metadata, else its file name),
then graded: only its exercise cells are used, every other cell comes from the released lab,
each check runs bare and is judged from outside the kernel, each cell has a timeout, and every
check scores its points or nothing. A lab whose exercises are all untouched stubs is "not
attempted" (scored 0 without running it). A broken submission is reported with its reason and
never stops the others.

There is one grading path, nbval: each notebook becomes a graded copy of its lab's answer key
(the release with `✓ check-key` stored under each check, the student's exercise cells put in),
run by pytest and strict nbval with the course's plugin; each check's result comes from the
JUnit XML report.

A student's copy of a lesson (`01_agent_loop.ipynb`, by the released lesson's file name) is
not graded: the text of its `answer` cells, the student's answers to "Things to think about",
goes into the gradebook's Reflections for the instructor to read (`course.reflections`).

Writes into --output (default: SUBMISSIONS_DIR; re-runs skip what it wrote): gradebook.csv (one
row per student, lab and check, and per reflection), gradebook.md (a total per student, a score
per lab, the reason for each failed check, the reflections), gradebook.json (everything, for
`merge`), feedback/<student>.md (to hand back: the student's scores, each failed check's reason,
the notes on their notebooks) and graded-notebooks/<student>/ (the graded copies, which show
under each check the gradebook's verdict, ✓ or ✗ with the reason: to hand back too, or to run
with `pytest --nbval` by hand). What a student controls (names, metadata, the values the checks
quote, reflections) is capped and escaped in all of them. Every entry of SUBMISSIONS_DIR gets a
row: links are not followed, and a file named like a student's folder is graded apart.

    --timeout S     seconds per cell (default 60)
    --notebook-timeout S
                    seconds for all the cells of one notebook together (default: 300, or 5 x
                    --timeout if more); once spent, its remaining checks fail at once as
                    timeouts, saying so: one notebook cannot hold the class
    --jobs N        grade N notebooks at a time (default: the machine's cores); the same
                    gradebook as one at a time
    --shard K/N     grade only the K-th of N parts of the class (by student, stable hashing),
                    so a large class is N jobs on any batch system; then
    python -m course.grade merge DIR... --output DIR
                    combines the shards' gradebooks into one, identical to a single run

The capstone (chapter 19's lab): after its checks, each student's `next_request` runs in the
confined worker on the development set and then on the hidden set (the instructor's
docs/instructors/capstone_hidden.json, or --capstone-hidden FILE), each student in a process of
their own with a private teaching model. gradebook.md gets a leaderboard (students ranked by
hidden-set score, with the naive and assembled baselines, computed once per hidden set and
cached in capstone-baselines.json); each feedback file gets the student's development-set
breakdown and hidden-set totals, never a hidden task; --export adds the hidden-set score.
The capstone's score is not added to the total.
"""
# That docstring is the command's --help (course/grade/cli.py). Where each part lives:
#   submissions.py    Submission; finding the class and matching each notebook to its lab
#   nbval_engine.py   the one grading path: graded copies under pytest + strict nbval
#   gradebook.py      gradebook.csv, gradebook.md and gradebook.json
#   feedback.py       feedback/<student>.md and the verdicts shown in the graded notebooks
#   student_text.py   what a student controls, capped and escaped for each file
#   shards.py         --shard K/N and merge
#   capstone.py       the capstone lab's managers on the hidden set, the leaderboard
#   cli.py            main and main_merge; __main__.py runs main
from course.grade.cli import default_jobs, main
from course.grade.nbval_engine import run_nbval
from course.grade.shards import shard_of
from course.grade.submissions import collect

__all__ = ["collect", "default_jobs", "main", "run_nbval", "shard_of"]
