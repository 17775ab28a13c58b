"""Labs from one source: a lab cannot drift from its solution module.

- Every exercise stub has exactly its solution function's signature: the same parameter names,
  in the same order, of the same kinds, with defaults written as the same source expression
  (`output=DEFAULT_OUTPUT`, not the string it holds). A name a default refers to is imported by
  a set-up cell, so the student's default is the solution's own object.
- A set-up cell (any code cell that is neither an exercise nor a check) holds no copy of what
  the solution module exports: it may not define, at top level, a name the module exports
  (import it instead), and it may not import any of the lab's exercise names (that would hand
  the student the answer).
"""
from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from dataclasses import dataclass

import pytest

from course.labs import cell_key, cell_kind, checks_only, load_lab
from course.paths import LABS_DIR

LABS = sorted(LABS_DIR.glob("*_lab.ipynb"))

# Names a lab's set-up cell may bind although its solution module exports them, and why.
# Lab 05 hands the student plain dicts under the names its check cells use, while the lesson's
# SEED_RUN / SEED_PRICES are a Run and a Prices; the dicts are built from imported figures
# (solutions.costs.run.SEED_RUN_FIELDS, solutions.costs.prices.SEED_PRICE_FIELDS), not copied.
PLAIN_DICT_VIEWS = {("05_prompt_caching_lab", "SEED_RUN"), ("05_prompt_caching_lab", "SEED_PRICES")}

# Labs whose set-up cells still import from a module that also defines one of their exercises
# (the module is not split yet). Expected to fail; remove the entry once the lab is fixed.
IMPORTS_FROM_ANSWER_MODULES: dict[str, str] = {}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # inspect.Parameter kind name, e.g. "POSITIONAL_OR_KEYWORD"
    default: str | None  # the default's source expression (normalised by ast.unparse), or None

    def __str__(self) -> str:
        prefix = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(self.kind, "")
        text = prefix + self.name + ("" if self.default is None else f"={self.default}")
        return text + (" (keyword-only)" if self.kind == "KEYWORD_ONLY" else "") \
            + (" (positional-only)" if self.kind == "POSITIONAL_ONLY" else "")


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Param]:
    """The parameters of a function definition, with each default's source expression."""
    a = node.args
    positional = [(p, "POSITIONAL_ONLY") for p in a.posonlyargs] + \
                 [(p, "POSITIONAL_OR_KEYWORD") for p in a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [Param(p.arg, kind, None if d is None else ast.unparse(d))
              for (p, kind), d in zip(positional, defaults)]
    if a.vararg:
        params.append(Param(a.vararg.arg, "VAR_POSITIONAL", None))
    params += [Param(p.arg, "KEYWORD_ONLY", None if d is None else ast.unparse(d))
               for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        params.append(Param(a.kwarg.arg, "VAR_KEYWORD", None))
    return params


def function_node(source: str, name: str) -> ast.FunctionDef | None:
    """The top-level `def name(...)` in `source`, or None."""
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def solution_parameters(function) -> list[Param]:
    """The solution function's parameters, read from its source and cross-checked with
    inspect.signature (so a decorator cannot make the two disagree unnoticed)."""
    function = inspect.unwrap(function)
    node = function_node(textwrap.dedent(inspect.getsource(function)), function.__name__)
    assert node is not None, f"cannot find the definition of {function.__qualname__} in its source"
    params = parameters(node)
    signature = inspect.signature(function)
    assert [(p.name, p.kind.name) for p in signature.parameters.values()] == \
        [(p.name, p.kind) for p in params], f"{function.__qualname__}: source and signature disagree"
    return params


def top_level_definitions(source: str) -> set[str]:
    """Names a cell binds at top level by def, class or assignment (imports excluded)."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def imported_names(source: str) -> set[str]:
    """Names a cell imports anywhere (`from m import a as b` gives a and b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                names.update({alias.name, alias.asname} - {None})
    return names


def exported(module) -> set[str]:
    """The public names a module offers (`from module import name`), submodules excluded."""
    return {name for name in dir(module)
            if not name.startswith("_") and not inspect.ismodule(getattr(module, name))}


def setup_sources(lab, with_checks_only: bool = True) -> list[str]:
    return [c.source for c in lab.notebook.cells if c.cell_type == "code" and cell_kind(c) is None
            and (with_checks_only or not checks_only(c))]


# ------------------------------------------------------------------------------ the tests


def test_there_are_labs():
    assert LABS, "no labs found in labs/"


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_every_stub_has_its_solution_signature(path):
    lab = load_lab(path)
    module = importlib.import_module(lab.solution_module)
    setup_imports = set().union(*map(imported_names, setup_sources(lab)))
    problems = []
    for _, cell in lab.exercises():
        key = cell_key(cell)
        stub = function_node(cell.source, key)
        if stub is None:
            problems.append(f"{key}: the exercise cell has no top-level `def {key}(...)`")
            continue
        theirs, ours = parameters(stub), solution_parameters(getattr(module, key))
        if theirs != ours:
            problems.append(f"{key}: the stub is ({', '.join(map(str, theirs))}) but "
                            f"{lab.solution_module}.{key} is ({', '.join(map(str, ours))})")
        for default in filter(None, (ast.parse(p.default) for p in theirs if p.default)):
            for name in {n.id for n in ast.walk(default) if isinstance(n, ast.Name)}:
                if name not in setup_imports:
                    problems.append(f"{key}: the default refers to {name!r}, which no set-up "
                                    f"cell imports (import the solution's own object)")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_setup_cells_import_rather_than_copy(path):
    lab = load_lab(path)
    offered = exported(importlib.import_module(lab.solution_module))
    exercises = {cell_key(c) for _, c in lab.exercises()}
    problems = []
    for source in setup_sources(lab):
        for name in sorted(top_level_definitions(source) & offered):
            if (lab.lab_id, name) in PLAIN_DICT_VIEWS:
                continue
            problems.append(f"a set-up cell defines {name!r}, which {lab.solution_module} "
                            f"exports: import it instead of copying it")
    # A checks-only cell may take the reference for an exercise, to say whose mistake a failure
    # is (lab 12's run_trials checks judge each trial with the reference judge_task): grading
    # runs it beside the checks, never with the student's code, and screening reports an
    # exercise that reads its names. A cell that runs with the student's code may not.
    for source in setup_sources(lab, with_checks_only=False):
        for name in sorted(imported_names(source) & exercises):
            problems.append(f"a set-up cell imports the exercise {name!r}: that is the answer")
    assert not problems, "\n".join(problems)


def imports_from(source: str) -> set[str]:
    """The modules a cell imports names from (`from m import x`, `import m`)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


def _known_to_fail(path):
    reason = IMPORTS_FROM_ANSWER_MODULES.get(path.stem)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(path, marks=marks, id=path.stem)


@pytest.mark.parametrize("path", [_known_to_fail(p) for p in LABS])
def test_setup_cells_import_from_modules_that_define_no_exercise(path):
    """A set-up cell takes its constants and fixtures from a module that holds none of the
    lab's answers (a package that only re-exports them is fine)."""
    lab = load_lab(path)
    module = importlib.import_module(lab.solution_module)
    defined_in = {cell_key(c): inspect.unwrap(getattr(module, cell_key(c))).__module__
                  for _, c in lab.exercises()}
    problems = []
    for source in setup_sources(lab):
        for imported in sorted(imports_from(source)):
            answers = sorted(k for k, where in defined_in.items() if where == imported)
            if answers:
                problems.append(f"a set-up cell imports from {imported}, which defines the "
                                f"exercise(s) {', '.join(answers)}: move what it needs to a "
                                f"module without answers")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------ the tools


def test_parameters_reads_names_kinds_and_default_sources():
    node = function_node("def f(a, /, b, c=X, *args, d, e=f(1), **kw): pass", "f")
    assert [str(p) for p in parameters(node)] == [
        "a (positional-only)", "b", "c=X", "*args", "d (keyword-only)", "e=f(1) (keyword-only)",
        "**kw"]


def test_a_default_written_differently_is_a_difference():
    one = parameters(function_node("def f(x, output=DEFAULT_OUTPUT): pass", "f"))
    other = parameters(function_node("def f(x, output='Answer the task'): pass", "f"))
    assert one != other


def test_setup_definitions_and_imports():
    source = ("from course.givens.gssc.constants import SECTIONS as S, STOPWORDS\n"
              "import re\nOUTPUT = 'x'\ndef packet(): pass\nclass Box: pass\na, (b, c) = 1, (2, 3)\n")
    assert top_level_definitions(source) == {"OUTPUT", "packet", "Box", "a", "b", "c"}
    assert imported_names(source) == {"SECTIONS", "S", "STOPWORDS"}
