"""The capstone (chapter 19) in `python -m course.grade`: after lab 19's checks, each student's
manager runs on the development set and on the hidden set, in the confined worker, and is scored
there (`course.givens.capstone`: the loop, the judge, score_runs, check_traces).

    is_capstone(lab)    the lab whose `next_request` is run on the hidden set (metadata
                        course.capstone, or the lab id 19_capstone_lab)
    Sets                which tasks: the hidden file (the instructor's), and for a trial run of
                        the grading fewer and shorter tasks (--capstone-tasks, --capstone-size)
    grade_capstones     every student's run, `jobs` at a time, each in a process of its own;
                        the baselines' rows, computed once per hidden set (cached by digest)
    leaderboard_markdown, feedback_markdown, capstone_score   what the gradebook, the feedback
                        and the export show

What a student's run keeps, and so what any file shows: on the development set (public, in the
lab) every task's outcome, its tokens and cost, and the manager's error message; on the hidden
set totals only (score, success, pass^k, leaks, tokens, cost, cache hit) and how many runs ended
for which reason, in the judge's words (timed out, stopped, not a request, raised, budget spent):
never a hidden task's id, seed, text, canary or per-task result, nor anything the student's code
said during a hidden run (its error message could quote the hidden task). The development set
runs first, in a worker of its own; the hidden set then runs in a fresh worker, so nothing the
manager saw of a hidden task can reach the development set's detailed results.

Each student's run is a process of its own (`python -m course.grade.capstone JOB RESULT`): the
teaching model it talks to is private (its prompt cache starts empty, so a student's cache hit
rate does not depend on who was graded before), what the manager's requests cost the model
(memory, time) is that process's, and a run that outlives its limit is killed without touching
the others'. The student's code itself runs only in the confined worker, called over the wire.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from course.grade.student_text import DETAIL_LIMIT, capped, md, visible
from course.labs import Lab

CAPSTONE_LAB = "19_capstone_lab"
MANAGER = "next_request"            # the exercise whose function is run
BASELINES = ("naive", "assembled")  # the reference managers on the leaderboard
BASELINE_MODULE = "lesson_support.capstone"   # where the reference managers live (MANAGERS)
CAPSTONE_CHECK = "capstone (hidden set)"  # gradebook.csv's row of a student's hidden-set run
BASELINES_FILE = "capstone-baselines.json"  # in --output: the baselines' rows, by digest
CALL_TIMEOUT = 30      # seconds one call of a manager may take (building a request takes ms)
BUDGET = 900           # CPU seconds of a student's worker over both sets (see INSTRUCTORS.md)
MODEL_ALLOWANCE = 3600  # seconds beyond the budget before a student's whole run is killed
MAX_REQUEST_BYTES = 4 * 2**20  # a request this large is far over the model's window

# Why a run ended early, in the judge's words: the only thing a hidden run reports of an error.
ENDINGS = {"timeout": "your manager did not return within the time for one call",
           "stopped": "the worker running your manager stopped (a crash, a limit, a message too large)",
           "not a request": "your manager returned something that is not a request",
           "raised": "your manager raised an exception",
           "budget": "your manager's CPU time budget was spent",
           "model": "the model refused or failed on your request"}


def is_capstone(lab: Lab) -> bool:
    return bool(lab.notebook.metadata.get("course", {}).get("capstone")) or lab.lab_id == CAPSTONE_LAB


# ------------------------------------------------------------------ which tasks
@dataclass(frozen=True)
class Sets:
    """The tasks a grading run uses: the hidden file's (every task, full size, by default) and
    the development set's; `tasks` (the first N of each) and `size` (user turns per task) make
    a trial run of the grading quicker. Its scores are not the term's."""
    hidden: str = ""            # the hidden set's file ("" means course.givens.capstone.HIDDEN_FILE)
    tasks: int | None = None
    size: int | None = None
    budget: float = BUDGET
    call_timeout: float = CALL_TIMEOUT

    def hidden_path(self) -> Path:
        from course.givens.capstone import HIDDEN_FILE
        return Path(self.hidden) if self.hidden else HIDDEN_FILE

    def hidden_tasks(self) -> list[dict]:
        from course.givens.capstone import hidden_tasks
        return hidden_tasks(self.hidden_path(), size=self.size)[:self.tasks]

    def dev_tasks(self) -> list[dict]:
        from course.givens.capstone import dev_tasks
        return dev_tasks(size=self.size)[:self.tasks]

    def digest(self) -> str:
        """What the baselines' rows depend on: the hidden file, these settings, and the code of
        the world, the references and the teaching model (a change to any recomputes them)."""
        from course.paths import REPO_ROOT
        h = hashlib.sha256(self.hidden_path().read_bytes())
        h.update(json.dumps([self.tasks, self.size]).encode())
        for folder in ("course/givens", "course/llm", "lesson_support/capstone", "solutions/capstone",
                       "solutions/compaction", "solutions/tokens"):
            for path in sorted((REPO_ROOT / folder).rglob("*.py")):
                h.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes())
        return h.hexdigest()


# ------------------------------------------------------------------ one student's run (in its process)
class BudgetSpent(RuntimeError):
    """The student's manager used its CPU time budget: the remaining runs fail at once."""


class WorkerClock:
    """CPU seconds of a worker's process tree, read from /proc (the judge's view, which the
    student's code cannot forge): a budget in CPU time does not shrink on a loaded machine."""

    def __init__(self, worker):
        self.worker, self.pids, self.of = worker, [], None

    def __call__(self) -> float:
        from course.labs import observe

        process = self.worker.process
        if process is None:
            return 0.0
        if self.of != process.pid:  # a fresh worker (after a crash): its tree, once
            self.of, self.pids = process.pid, sorted(observe.tree(process.pid))
        ticks = 0
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                ticks += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
            except (OSError, IndexError, ValueError):
                continue  # it ended while we looked
        return ticks / os.sysconf("SC_CLK_TCK")


class Judged:
    """The student's manager as the loop calls it: each call counted against the budget, each
    request checked to be plain JSON data of a sane size, and the reason of any failure kept in
    the judge's words (`ENDINGS`), since the error's own text is the student's. `clock`: the
    worker's CPU time (`WorkerClock`), or, without a worker, this process's wall clock."""

    def __init__(self, manager, budget: float, clock=time.monotonic):
        self.manager, self.left, self.clock = manager, budget, clock
        self.ending: str | None = None

    def __call__(self, history, task):
        from course.givens.capstone import ManagerError, check_request
        from course.labs.remote import StudentTimeout, WorkerStopped

        if self.left <= 0:
            self.ending = "budget"
            raise BudgetSpent("the CPU time budget for your manager is spent")
        start = self.clock()
        try:
            request = self.manager(history, task)
        except StudentTimeout:
            self.ending = "timeout"
            raise
        except WorkerStopped:
            self.ending = "stopped"
            raise
        except Exception:
            self.ending = "raised"
            raise
        finally:
            self.left -= max(0.0, self.clock() - start)  # a restarted worker's clock starts at 0
        try:
            check_request(request)
            text = json.dumps(request, allow_nan=False)  # handles and other objects are not data
        except (ManagerError, TypeError, ValueError) as exc:
            self.ending = "not a request"
            raise ManagerError(f"not a request: {exc}") from None
        if len(text) > MAX_REQUEST_BYTES:
            self.ending = "not a request"
            raise ManagerError(f"a request of {len(text) / 2**20:.0f} MB: far over the model's window")
        return json.loads(text)


def _run_all(manager, tasks, client, judged: Judged | None) -> list[dict]:
    """Every task and trial: the loop's records, without their histories; a run the loop itself
    could not finish (the model failed on the request) is a failed run, not the grader's end."""
    from course.givens.capstone import TRIALS, run

    runs = []
    for task in tasks:
        for trial in TRIALS:
            if judged is not None:
                judged.ending = None
            try:
                r = run(manager, task, trial, client)
                r.pop("history", None)
            except Exception as exc:  # noqa: BLE001 - e.g. the model's 500 on a malformed message
                r = {"task": task["id"], "trial": trial, "success": False, "wrong": ["the run failed"],
                     "leaks": 0, "requests": 0, "refused": 0, "prompt_tokens": 0, "cached_tokens": 0,
                     "completion_tokens": 0, "cost": 0.0, "error": f"{type(exc).__name__}: {exc}"[:300],
                     "trace": None}
                if judged is not None:
                    judged.ending = "model"
            r["ending"] = (judged.ending or "raised") if (judged is not None and r["error"]) else None
            runs.append(r)
    return runs


def _worker_manager(job: dict, scratch: Path, timeout: float = CALL_TIMEOUT):
    """The student's next_request, bound in a worker that runs `job`'s program: (proxy, worker)."""
    from course.labs.remote import Worker

    worker = Worker(job["cells"], scratch, confined=job["confined"], timeout=timeout,
                    answers=tuple(job["answers"]))
    namespace: dict = {}
    worker.bind(namespace, MANAGER, [MANAGER])
    if MANAGER not in namespace:
        worker.stop()
        raise NameError(f"your exercise cells do not define {MANAGER}")
    return namespace[MANAGER], worker


def hidden_totals(runs: list[dict], trace_problems: list[str]) -> dict:
    """What is kept of the hidden set: score_runs' totals, the runs' endings counted, and how
    many runs their trace contradicts (never which)."""
    from course.givens.capstone import score_runs

    endings: dict[str, int] = {}
    for r in runs:
        if r.get("ending"):
            endings[r["ending"]] = endings.get(r["ending"], 0) + 1
    return {**score_runs(runs), "endings": dict(sorted(endings.items())),
            "trace_problems": len(trace_problems)}


def dev_rows(runs: list[dict]) -> list[dict]:
    """The development set's breakdown: per task, its trials' successes, leaks, tokens and cost
    per run, and the first error (the student's message: the task is public)."""
    rows: dict[str, dict] = {}
    for r in runs:
        row = rows.setdefault(r["task"], {"task": r["task"], "runs": 0, "succeeded": 0, "leaks": 0,
                                          "tokens": 0, "cost": 0.0, "error": ""})
        row["runs"] += 1
        row["succeeded"] += bool(r["success"] and not r["leaks"])
        row["leaks"] += bool(r["leaks"])
        row["tokens"] += r["prompt_tokens"] + r["completion_tokens"]
        row["cost"] += r["cost"]
        if r["error"] and not row["error"]:
            row["error"] = capped(visible(r["error"]), 300)
    for row in rows.values():
        row["tokens"] = round(row["tokens"] / row["runs"])
        row["cost"] = round(row["cost"] / row["runs"], 6)
    return list(rows.values())


def grade_student(job: dict) -> dict:
    """One student's capstone: the development set in one worker, then the hidden set in a fresh
    one, each on a private teaching model; what is kept of each (`dev_rows`, `hidden_totals`)."""
    import tempfile

    from course.givens.capstone import check_traces, score_runs
    from course.llm import serve
    from course.tracing import requests

    sets = Sets(**job["sets"])
    judged_left = sets.budget
    result: dict = {}
    for name, tasks in (("dev", sets.dev_tasks()), ("hidden", sets.hidden_tasks())):
        with tempfile.TemporaryDirectory(prefix=f"course-capstone-{name}-") as scratch:
            try:
                manager, worker = _worker_manager(job, Path(scratch), sets.call_timeout)
            except Exception as exc:  # noqa: BLE001 - their cells, or no next_request: said once
                return {"problem": _cannot_run(exc)}
            judged = Judged(manager, judged_left, WorkerClock(worker))
            try:
                with serve() as server:
                    runs = _run_all(judged, tasks, server.client(), judged)
            finally:
                worker.stop()
            judged_left = judged.left
        problems = check_traces([r for r in runs if r["trace"]], requests())
        if name == "dev":
            result["dev"] = {"rows": dev_rows(runs), "totals": score_runs(runs),
                             "trace_problems": problems[:5]}
        else:
            result["hidden"] = hidden_totals(runs, problems)
    result["seconds"] = round(sets.budget - judged_left, 1)
    return result


def _cannot_run(exc: BaseException) -> str:
    from course.labs.remote import ExerciseError, StudentTimeout, WorkerStopped

    if isinstance(exc, ExerciseError):
        return f"an exercise cell of yours raised when it ran, so {MANAGER} could not be run: {exc}"
    if isinstance(exc, (StudentTimeout, WorkerStopped, NameError)):
        return f"{MANAGER} could not be run: {exc}"
    return f"{MANAGER} could not be run ({type(exc).__name__}: {exc})"


def grade_baselines(job: dict) -> dict:
    """The reference managers' rows on the hidden set (in this process: they are the course's).
    They are lesson support (layer 3), which the runtime does not import: loaded by name."""
    import importlib

    from course.llm import serve

    MANAGERS = importlib.import_module(BASELINE_MODULE).MANAGERS

    sets = Sets(**job["sets"])
    tasks = sets.hidden_tasks()
    rows = {}
    for name in BASELINES:
        with serve() as server:
            rows[name] = hidden_totals(_run_all(MANAGERS[name], tasks, server.client(), None), [])
    return rows


# ------------------------------------------------------------------ the grader's side
def capstone_job(lab: Lab, nb, confined: bool, sets: Sets) -> dict:
    """What a student's run needs: the worker program nbval grades (the lab's set-up and the
    student's exercise cells, with the answers the lab gives), and the sets."""
    from course.labs import nbval_graded

    _, program, _ = nbval_graded(lab, nb)
    return {"cells": program.cells, "answers": list(program.answers), "confined": confined,
            "sets": asdict(sets)}


def _run_job(kind: str, job: dict, limit: float) -> dict:
    """`kind` ("student" or "baselines") in a process of its own; its result, or {"problem"}."""
    import tempfile

    from course.paths import REPO_ROOT
    with tempfile.TemporaryDirectory(prefix="course-capstone-") as work:
        job_file, result_file = Path(work) / "job.json", Path(work) / "result.json"
        job_file.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
        try:
            done = subprocess.run([sys.executable, "-m", "course.grade.capstone", kind, str(job_file),
                                   str(result_file)], cwd=work, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=limit,
                                  env={**os.environ, "COURSE_LANGUAGE": "en",
                                       "PYTHONPATH": str(REPO_ROOT)})
        except subprocess.TimeoutExpired:
            return {"problem": f"the capstone's grading did not finish within {limit:g} s (the "
                               f"grader's limit for one student): not scored"}
        try:
            return json.loads(result_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = " ".join(done.stdout.decode("utf-8", "replace").strip().splitlines()[-3:])
            return {"problem": f"the capstone's grading failed (exit status {done.returncode}): "
                               f"{capped(tail, 600)}; please report it as a bug of course.grade"}


def baselines(sets: Sets, out: Path) -> dict:
    """The baselines' rows for `sets`: from out/BASELINES_FILE when it was written for the same
    digest, else computed (once per class) and written there."""
    digest = sets.digest()
    path = out / BASELINES_FILE
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached.get("digest") == digest and set(cached.get("rows", {})) == set(BASELINES):
            return cached
    except (OSError, ValueError, AttributeError):
        pass
    rows = _run_job("baselines", {"sets": asdict(sets)}, sets.budget * len(BASELINES) + MODEL_ALLOWANCE)
    data = {"digest": digest, "rows": {} if "problem" in rows else rows, "problem": rows.get("problem", "")}
    if not data["problem"]:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return data


def grade_capstones(subs, root: Path, labs: dict[str, Lab], sets: Sets, jobs: int, out: Path,
                    confined: bool = True, report=print) -> dict | None:
    """Run the capstone of every graded, attempted submission of the capstone lab (`sub.capstone`
    gets what is kept of it), and the baselines; the gradebook's capstone section ({"digest",
    "rows", "problem"}: the baselines), or None when no submission is of the capstone lab."""
    from concurrent.futures import ThreadPoolExecutor

    from course.grade.submissions import grader_failed
    from course.labs import read_notebook

    todo = [s for s in subs if s.lab and not s.problem and s.attempted and is_capstone(labs[s.lab])]
    if not todo:
        return None
    jobs_of = {}
    for sub in todo:
        try:
            jobs_of[id(sub)] = capstone_job(labs[sub.lab], read_notebook(root / sub.notebook), confined, sets)
        except Exception as exc:  # noqa: BLE001 - one student's notebook never stops the class's grading
            sub.capstone = {"problem": grader_failed(exc)}
    limit = sets.budget + MODEL_ALLOWANCE
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        base = pool.submit(baselines, sets, out)
        futures = {id(s): pool.submit(_run_job, "student", jobs_of[id(s)], limit)
                   for s in todo if id(s) in jobs_of}
        for n, sub in enumerate(todo, 1):
            if id(sub) in futures:
                sub.capstone = kept(futures[id(sub)].result())
            report(visible(capped(f"[capstone {n}/{len(todo)}] {sub.student}: {summary(sub.capstone)}")))
        data = base.result()
    return data


def kept(result: dict) -> dict:
    """Only the fields a student's result may hold, typed (the result file is the grader's own
    process's, but what it quotes is the student's)."""
    if not isinstance(result, dict):
        return {"problem": "the capstone's grading returned nothing readable"}
    if result.get("problem"):
        return {"problem": capped(visible(str(result["problem"])), DETAIL_LIMIT)}
    return {k: result[k] for k in ("dev", "hidden", "seconds") if k in result}


def summary(capstone: dict) -> str:
    if capstone.get("problem"):
        return f"capstone not scored: {capstone['problem']}"
    h = capstone["hidden"]
    return (f"hidden set {h['score']:+.2f} ({h['success']:.0%} success, {h['leaks']} leaking runs), "
            f"{capstone.get('seconds', 0):.0f} CPU s in the worker")


def capstone_score(capstone: dict | None):
    """The score the export carries: the hidden-set score (-1 to +1), or "" when not scored."""
    if not capstone or "hidden" not in capstone:
        return ""
    return round(capstone["hidden"]["score"], 2)


# ------------------------------------------------------------------ what the files show
def _figures(s: dict) -> list[str]:
    return [f"{s['score']:+.2f}", f"{s['success']:.0%}", f"{s['pass_k']:.0%}", str(s["leaks"]),
            f"{s['tokens']:,.0f}", f"${s['cost']:.3f}", f"{s['cache']:.0%}"]


HEAD = "| score | success | pass^k | leaking runs | tokens/run | cost/run | cache hit |"


def leaderboard_markdown(subs, section: dict | None) -> list[str]:
    """gradebook.md's capstone leaderboard: students ranked by hidden-set score (then success,
    then cost), with the baselines' rows on the same hidden set; the students not scored, and why."""
    if section is None:
        return []
    scored = [s for s in subs if (s.capstone or {}).get("hidden")]
    rows = [(s.capstone["hidden"], md(s.student)) for s in scored]
    rows += [(r, f"*baseline: {name}*") for name, r in section.get("rows", {}).items()]
    rows.sort(key=lambda x: (-x[0]["score"], -x[0]["success"], x[0]["cost"], x[1]))
    first = next(iter(section.get("rows", {}).values()), None) or next(iter(rows), (None,))[0]
    n = first["runs"] // max(1, first["k"]) if first else 0
    size = f"{n} hidden task{'s' * (n != 1)} x {first['k']} trials" if first else ""
    lines = ["", "## Capstone leaderboard (hidden set)", "",
             f"Each student's manager ({MANAGER}) run in the confined worker on the hidden set "
             f"({size}), with the course's baselines on the same tasks. Score per run: +1 success, "
             f"0 failure, -1 for any canary leak or a run the manager broke; not added to the total.", "",
             "| rank | manager " + HEAD, "|---|---|" + "---|" * 7]
    rank = 0
    for figures, who in rows:
        if not who.startswith("*baseline"):
            rank += 1
        lines.append(f"| {rank if not who.startswith('*baseline') else ''} | {who} | "
                     + " | ".join(_figures(figures)) + " |")
    if section.get("problem"):
        lines += ["", f"The baselines could not be computed: {md(section['problem'])}"]
    broken = [s for s in subs if (s.capstone or {}).get("problem")]
    if broken:
        lines += ["", "Not scored on the hidden set:", ""]
        lines += [f"- {md(s.student)}: {md(s.capstone['problem'])}" for s in broken]
    ended = [(s, s.capstone["hidden"]["endings"]) for s in scored if s.capstone["hidden"].get("endings")]
    if ended:
        lines += ["", "Hidden runs that ended early (the manager's own messages are not shown: they "
                      "could quote the hidden tasks):", ""]
        lines += [f"- {md(s.student)}: " + "; ".join(f"{n} {why}" for why, n in e.items()) for s, e in ended]
    return lines


def feedback_markdown(capstone: dict | None, section: dict | None) -> list[str]:
    """A student's feedback on the capstone: the development set task by task, and the hidden
    set's totals only, beside the baselines' (no hidden task is named, shown or counted apart)."""
    if not capstone:
        return []
    lines = ["", "## Capstone: your manager on the development and hidden sets", ""]
    if capstone.get("problem"):
        return lines + [f"Not scored: {md(capstone['problem'])}"]
    dev = capstone["dev"]
    lines += ["On the development set (the lab's tasks, which you can run yourself):", "",
              "| task | runs succeeded | leaking runs | tokens/run | cost/run | error |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {md(r['task'])} | {r['succeeded']} of {r['runs']} | {r['leaks']} | {r['tokens']:,} | "
              f"${r['cost']:.3f} | {md(r['error']) or '—'} |" for r in dev["rows"]]
    h = capstone["hidden"]
    lines += ["", f"On the hidden set (tasks you have not seen, from the same generator; only the "
                  f"totals are given), over {h['runs']} runs:", "", "| " + HEAD.strip("| ").replace(
                      "score |", "manager | score |", 1) + " |", "|---|" + "---|" * 7,
              "| yours | " + " | ".join(_figures(h)) + " |"]
    lines += [f"| {name} (baseline) | " + " | ".join(_figures(r)) + " |"
              for name, r in (section or {}).get("rows", {}).items()]
    if h.get("endings"):
        lines += ["", "Hidden runs that ended early: "
                  + "; ".join(f"{n}: {ENDINGS.get(why, why)}" for why, n in h["endings"].items()) + "."]
    return lines


def main(argv: list[str]) -> int:
    kind, job_file, result_file = argv
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    result = grade_student(job) if kind == "student" else grade_baselines(job)
    Path(result_file).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
