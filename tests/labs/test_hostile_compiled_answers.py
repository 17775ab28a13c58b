"""The release's compiled answers, loaded without an import of `solutions` (issue 47, item 13).

A student release ships the graded chapter's answers compiled (`solutions/**/*.<tag>.pyc`). A
student who puts those files' bytes into an exercise cell, turns them back into code with
`marshal.loads` and serves them from an in-memory import finder has no `import solutions` for
screening to see, and the worker never needs the answers on its disk. Grading must still give
such code nothing: the worker refuses the reference answers' code by what it is
(`course.compiled_answers.refuse`), however it was loaded. Code a student marshals themselves
is not refused.
"""
from __future__ import annotations

import base64
import copy
import os
import subprocess
import sys

import pytest

from course.labs import confinement, load_lab
from course.paths import LABS_DIR, REPO_ROOT
from course.release import release

LAB = "04_compaction_lab"
# The exercise cells of the attack: the first one serves the release's compiled modules by
# name from the notebook itself; each takes its function from them.
FINDER = '''import base64, importlib.util, marshal, sys
_PYC = {pyc!r}
_PACKAGES = {packages!r}

class _FromTheRelease:
    def find_spec(self, name, path=None, target=None):
        if name in _PYC or name == "solu" + "tions":
            return importlib.util.spec_from_loader(name, self, is_package=name in _PACKAGES)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        if module.__name__ in _PYC:
            exec(marshal.loads(base64.b64decode(_PYC[module.__name__])[16:]), module.__dict__)

sys.meta_path.insert(0, _FromTheRelease())
_answers = importlib.import_module("solu" + "tions.compaction")
split_turns = _answers.split_turns
'''
TAKE = "{key} = _answers.{key}\n"


@pytest.fixture(scope="module", autouse=True)
def _needs_confinement():
    if confinement.problem() is not None:
        pytest.skip(f"no confinement here: {confinement.problem()}")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """{module name: .pyc bytes} of a release grading chapter 04, for this Python."""
    out = tmp_path_factory.mktemp("release") / "course"
    release(out, graded=["04"])
    tag = sys.implementation.cache_tag
    found = {}
    for path in (out / "solutions").rglob(f"*.{tag}.pyc"):
        parts = path.relative_to(out).with_suffix("").with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path.read_bytes()
    assert {"solutions.compaction", "solutions.compaction.turns", "solutions.tokens"} <= set(found)
    return found


def graded(lab, nb) -> tuple[dict, str]:
    """check key -> (status, detail), and the grading run's report (which names a failed
    exercise cell and its error), as course.grade grades the copy."""
    from course.grade.nbval_engine import grade_copy
    from course.labs import nbval_graded

    copy_, program, _ = nbval_graded(lab, nb, "student", lab.path.name)
    return grade_copy(lab, copy_, program, 120)


def student(lab, sources: dict[str, str]):
    nb = copy.deepcopy(lab.notebook)
    for cell in nb.cells:
        key = cell.metadata.get("course", {}).get("key")
        if "exercise" in cell.metadata.get("tags", []) and key in sources:
            cell.source = sources[key]
    return nb


def test_the_releases_compiled_answers_earn_nothing_however_they_are_loaded(compiled):
    lab = load_lab(LABS_DIR / f"{LAB}.ipynb")
    packages = sorted({"solutions"} | {n for n in compiled if any(m.startswith(n + ".") for m in compiled)})
    pyc = {name: base64.b64encode(data).decode() for name, data in compiled.items()}
    attack = {"split_turns": FINDER.format(pyc=pyc, packages=packages)}
    attack.update({key: TAKE.format(key=key) for key in ("check_pairing", "compact", "self_test")})
    found, output = graded(lab, student(lab, attack))
    earned = sorted(key for key, (status, _) in found.items() if status == "pass")
    assert earned == [], f"the compiled reference answers passed {earned}"
    assert "ImportError: this is the reference answers' compiled code" in output, output[-3000:]


def test_code_a_student_marshals_themselves_still_runs(compiled):
    """The refusal is of the answers' code, not of marshal: a student's own function, loaded
    the same way, is graded as usual (this one is wrong, so its checks fail on their merits)."""
    lab = load_lab(LABS_DIR / f"{LAB}.ipynb")
    own = ("import marshal, types\n"
           "_code = compile('def split_turns(messages):\\n    turns = []\\n"
           "    for m in messages:\\n        turns.append([m])\\n    return turns\\n', 'mine', 'exec')\n"
           "_ns = {}\n"
           "exec(marshal.loads(marshal.dumps(_code)), _ns)\n"
           "split_turns = _ns['split_turns']\n")
    found, output = graded(lab, student(lab, {"split_turns": own}))
    assert "reference answers' compiled code" not in output
    split = {key: detail for key, (_, detail) in found.items() if key.startswith("check-split")}
    assert split and not any("NotImplementedError" in d or "NameError" in d for d in split.values()), \
        f"the student's own split_turns did not run: {split}"


PROBE = '''
import gc, io, marshal, sys, types
from course.compiled_answers import refuse
refuse({refused!r})
pyc = open({pyc!r}, "rb").read()
module = None
def attempt(name, how):
    try:
        how()
        print(name, "ran")
    except ImportError as exc:
        print(name, "refused" if "reference answers' compiled code" in str(exc) or "not available" in str(exc) else exc)
attempt("loads", lambda: marshal.loads(pyc[16:]))
attempt("loads-in-a-list", lambda: marshal.loads(b"[" + (1).to_bytes(4, "little") + pyc[16:]))
attempt("load", lambda: marshal.load(io.BytesIO(pyc[16:])))
attempt("gc", lambda: gc.get_objects())
own = compile("def mine(xs):\\n" + "    xs = [x * 2 for x in xs]\\n" * 30 + "    return xs\\n", "mine", "exec")
attempt("own", lambda: exec(marshal.loads(marshal.dumps(own)), {{}}))
'''


def test_every_way_compiled_code_becomes_code_is_refused(compiled, tmp_path):
    """marshal.loads (also of code inside a container), marshal.load, a code object rebuilt
    from the answers' bytecode, and the garbage collector's listings (through which the hook
    could be found) are refused; a student's own code loaded the same way is not."""
    from course.compiled_answers import refused_fingerprints
    pyc = tmp_path / "turns.pyc"
    pyc.write_bytes(compiled["solutions.compaction.turns"])
    probe = PROBE.format(refused=sorted(refused_fingerprints(())), pyc=str(pyc))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.split("\n")[:5] == ["loads refused", "loads-in-a-list refused", "load refused",
                                           "gc refused", "own ran"], done.stdout + done.stderr


def test_a_code_object_rebuilt_from_the_answers_bytecode_is_refused(compiled):
    """Without marshal: the answers' bytecode, shipped as a bytes literal, made into a code
    object with `types.CodeType` or `code.replace`."""
    import marshal

    from course.compiled_answers import _code_objects, _telling, refused_fingerprints
    telling = [c for c in _code_objects(marshal.loads(compiled["solutions.compaction.turns"][16:]))
               if _telling(c)]
    assert telling, "the module has telling code"
    bytecode = telling[0].co_code
    probe = (f"from course.compiled_answers import refuse\nrefuse({sorted(refused_fingerprints(()))!r})\n"
             "def f(x):\n    return x\n"
             "try:\n"
             f"    f.__code__.replace(co_code={bytecode!r})\n    print('ran')\n"
             "except ImportError as exc:\n    print('refused' if 'compiled code' in str(exc) else exc)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "refused", done.stdout + done.stderr


def worker_imports() -> list[str]:
    """The worker, IPython, and every module a lab's set-up imports, but the answers."""
    import re

    import nbformat

    modules = {"IPython.core.interactiveshell", "course.labs.worker", "numpy", "matplotlib.pyplot"}
    for lab in sorted(LABS_DIR.glob("*.ipynb")):
        for cell in nbformat.read(lab, as_version=4).cells:
            tags = cell.metadata.get("tags", [])
            if cell.cell_type == "code" and not {"exercise", "check", "checks-only"} & set(tags):
                modules |= {a or b for a, b in re.findall(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))",
                                                          cell.source, re.M)}
    return sorted(m for m in modules if m.split(".")[0] != "solutions")


def import_under_guard(refused, tmp_path) -> subprocess.CompletedProcess:
    """Import `worker_imports()` from compiled caches (written first, to a cache folder of the
    test's own) with the guard refusing `refused`; prints how many .pyc loads it inspected."""
    modules = worker_imports()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    load = f"import importlib\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
    subprocess.run([sys.executable, "-c", load], env=env, check=True, capture_output=True, timeout=300)
    probe = ("import sys\nloads = []\n"
             "sys.addaudithook(lambda event, args: event == 'marshal.loads' and loads.append(1))\n"
             f"import course.compiled_answers as c\nc.refuse({sorted(refused)!r})\n"
             + load + "print('imported; pyc loads inspected:', len(loads))\n")
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                          timeout=300)


def test_what_a_graded_worker_imports_is_not_taken_for_the_answers(tmp_path):
    """No false alarm on the course's own code or the libraries a worker loads: with the guard
    in place they import as usual from their compiled caches, which the guard inspects."""
    from course.compiled_answers import refused_fingerprints

    done = import_under_guard(refused_fingerprints(()), tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("imported"), done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 100, "the imports came from compiled caches"


def test_the_runtime_code_an_answer_shares_is_left_out(tmp_path):
    """Why `refused_fingerprints` leaves out what the runtime also has: course/givens repeats a
    small helper of the answers, and refusing it would stop every worker that imports it."""
    from course.compiled_answers import fingerprints

    everything = fingerprints(sorted((REPO_ROOT / "solutions").rglob("*.py")))
    done = import_under_guard(everything, tmp_path)
    assert done.returncode != 0 and "reference answers' compiled code" in done.stderr
