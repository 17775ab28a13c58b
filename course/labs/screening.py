"""Screening a student's exercise code before it is graded: code that imports the reference
solutions is graded as the stub (`imports_answers`); code that reaches into the notebook's
machinery is graded as usual and reported for a human to look (`MACHINERY`), and so is code
that reads names only a checks-only set-up cell defines (`checks_only_names`)."""
from __future__ import annotations

import ast
import re

from course.labs.lab import checks_only, defined_names

IMPORTS_SOLUTIONS = re.compile(r"^\s*(from|import)\s+solutions\b|__import__\(\s*['\"]solutions|"
                               r"importlib\.import_module\(\s*['\"]solutions", re.M)
LESSON_SUPPORT = "lesson_support"


def imports_answers(source: str) -> bool:
    """True when exercise code imports the reference solutions: from `solutions`, or through
    `lesson_support`, whose widgets and harnesses import answers (`from
    lesson_support.widgets.compaction import compact` is the reference `compact`). A name taken
    from lesson_support counts when it is defined in `solutions`; importing a lesson_support
    module whole counts when the module holds anything from `solutions`."""
    if IMPORTS_SOLUTIONS.search(source):
        return True
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == LESSON_SUPPORT:
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names if a.name.split(".")[0] == LESSON_SUPPORT]
            if any(_holds_answers(m, None) for m in modules):
                return True
            continue
        else:
            continue
        if _holds_answers(node.module, names):
            return True
    return False


def _holds_answers(module_name: str, names) -> bool:
    import importlib  # the course's own lesson_support package, named by the student's code

    try:
        module = importlib.import_module(module_name)
    except Exception:  # a module that does not import gives the student nothing
        return False
    values = [getattr(module, n, None) for n in names if n != "*"] if names and "*" not in names \
        else list(vars(module).values())
    return any(str(getattr(v, "__module__", "") or getattr(v, "__name__", "")).split(".")[0] == "solutions"
               for v in values if v is not None)


# Names an answer has no reason to touch: the notebook's machinery, the verdicts, the call stack.
# Grading does not depend on them (see judge_bare_check); they are reported for a human to look.
MACHINERY = re.compile(r"\b(get_ipython|IPython|ipykernel|course\.checks|from course import checks|"
                       r"display_pub|input_transformers\w*|ast_transformers|set_custom_exc|"
                       r"showtraceback|settrace|setprofile|_getframe|f_lineno|f_back|"
                       r"sys\.modules|__builtins__|builtins|ctypes|gc\.get_referrers)\b")


def checks_only_names(lab, source: str) -> list[str]:
    """The names `source` reads that only the lab's checks-only set-up cells define: in the
    student's kernel they exist, where a worker lab grades the code they do not."""
    code = [c for c in lab.notebook.cells if c.cell_type == "code"]
    for_checks = {n for c in code if checks_only(c) for n in defined_names(c.source)}
    elsewhere = {n for c in code if not checks_only(c) for n in defined_names(c.source)}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(read & (for_checks - elsewhere))
