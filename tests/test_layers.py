"""The three layers (COURSE_DESIGN.md, AUTHORING.md): each imports only the layers below it.

    1 runtime         course/           imports nothing from the layers above
    2 answers         solutions/        may import course
    3 lesson support  lesson_support/   may import course and solutions

And solutions/ holds answers only: every module in it is a lab's solution module or is
imported, directly or not, by one. A specimen, harness or widget dropped into solutions/ is
imported by no answer, so it fails here.
"""
import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

from course.chapters import CHAPTERS
from course.paths import REPO_ROOT

LAYERS = {"course": 1, "solutions": 2, "lesson_support": 3}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: str) -> dict[str, Path]:
    return {module_name(p): p for p in sorted((REPO_ROOT / package).rglob("*.py"))}


def imported_modules(path: Path) -> set[str]:
    """Every module an import statement in the file names, wherever the statement is."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def layer_of(name: str) -> int | None:
    return LAYERS.get(name.split(".")[0])


def upward_imports(package: str) -> list[str]:
    own = LAYERS[package]
    return [f"{module} imports {target} (layer {layer_of(target)}, above layer {own})"
            for module, path in modules(package).items()
            for target in sorted(imported_modules(path))
            if (layer_of(target) or 0) > own]


@pytest.mark.parametrize("package", sorted(LAYERS, key=LAYERS.get))
def test_no_layer_imports_from_a_layer_above_it(package):
    assert upward_imports(package) == []


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """The test above can fail: a runtime module importing an answer is reported."""
    fake = tmp_path / "course" / "widget.py"
    fake.parent.mkdir()
    fake.write_text("def f():\n    from solutions.gssc import relevance\n", encoding="utf-8")
    monkeypatch.setattr(__import__(__name__), "REPO_ROOT", tmp_path)
    assert upward_imports("course") == [
        "course.widget imports solutions.gssc (layer 2, above layer 1)",
        "course.widget imports solutions.gssc.relevance (layer 2, above layer 1)"]


def answers_reachable() -> set[str]:
    """Modules of solutions/ reachable by imports from the labs' solution modules."""
    known = modules("solutions")
    todo = [c.solution_module for c in CHAPTERS if c.solution_module]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in known:
            continue
        seen.add(name)
        # a package's __init__ is imported with any of its modules
        parent = name.rsplit(".", 1)[0]
        todo.append(parent)
        todo.extend(t for t in imported_modules(known[name]) if t in known)
    return seen


def test_solutions_holds_only_answers_and_what_they_need():
    strays = sorted(set(modules("solutions")) - answers_reachable() - {"solutions"})
    assert strays == [], (f"{strays} are imported by no lab's solution module: a specimen, harness "
                          f"or widget belongs in lesson_support/, not in solutions/")


def test_every_chapter_solution_module_exists():
    known = modules("solutions")
    assert [c.solution_module for c in CHAPTERS if c.solution_module and c.solution_module not in known] == []


# Packages that were one module before being split by concern: lessons and labs import from the
# package, so it re-exports every public name of its modules.
FORMERLY_ONE_MODULE = ("solutions.gssc", "solutions.compaction", "solutions.costs",
                       "solutions.status_bar", "lesson_support.cache_experiment",
                       "lesson_support.skills", "lesson_support.redteam",
                       "lesson_support.injection", "course.labs", "course.grade")


def public_names(module) -> list[str]:
    names = []
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [n for n in names if not n.startswith("_")]


@pytest.mark.parametrize("package", FORMERLY_ONE_MODULE)
def test_split_packages_re_export_every_public_name(package):
    root = importlib.import_module(package)
    missing = [f"{info.name}.{name}" for info in pkgutil.iter_modules(root.__path__)
               if info.name != "__main__"  # running it is `python -m`, not an import
               for module in [importlib.import_module(f"{package}.{info.name}")]
               for name in public_names(module) if getattr(root, name, None) is not getattr(module, name)]
    assert not missing, f"{package} does not re-export {missing}"


def test_no_answer_module_is_much_over_400_lines():
    long = [f"{name}: {n} lines" for name, path in modules("solutions").items()
            if (n := path.read_text(encoding="utf-8").count("\n")) > 420]
    assert long == [], f"split these by concern: {long}"
