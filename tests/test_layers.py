"""The three layers (COURSE_DESIGN.md, AUTHORING.md): each imports only the layers below it.

    1 runtime         course/           imports nothing from the layers above
    2 answers         solutions/        may import course
    3 lesson support  lesson_support/   may import course and solutions

And solutions/ holds answers only: every module in it is a lab's solution module or is
imported, directly or not, by one. A specimen, harness or widget dropped into solutions/ is
imported by no answer, so it fails here.
"""
import ast
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

from course.chapters import CHAPTERS, IN_PROGRESS
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
    # a chapter still being written lists its answers in IN_PROGRESS until its entry names them
    todo += [p.rstrip("/").removesuffix(".py").replace("/", ".") for parts in IN_PROGRESS.values()
             for p in parts if p.startswith("solutions/")]
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


# ------------------------------------------------------------------ private names stay home
def private_imports(package: str) -> list[str]:
    """`from x.y import _helper` in a module other than x.y: a private name crossing a module
    boundary (gettext's `_` aside, which is meant to be imported)."""
    return [f"{module} imports {node.module}.{alias.name}"
            for module, path in modules(package).items()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
            and node.module.split(".")[0] in LAYERS
            for alias in node.names if alias.name.startswith("_") and alias.name != "_"]


@pytest.mark.parametrize("package", sorted(LAYERS, key=LAYERS.get))
def test_no_module_imports_another_modules_private_name(package):
    found = private_imports(package)
    assert found == [], ("a name used in another module is public where it lives (drop the "
                         "underscore), or moves to where it is used: " + "; ".join(found))


def test_the_checker_sees_a_private_import(tmp_path, monkeypatch):
    fake = tmp_path / "solutions" / "widget.py"
    fake.parent.mkdir()
    fake.write_text("from course.i18n import _\nfrom solutions.gssc.compression import _cut\n",
                    encoding="utf-8")
    monkeypatch.setattr(__import__(__name__), "REPO_ROOT", tmp_path)
    assert private_imports("solutions") == ["solutions.widget imports solutions.gssc.compression._cut"]


# ------------------------------------------------------------------------- narrow fronts
# A package's __init__ is its front: it re-exports exactly the names that lessons, labs (their
# set-up cells, and the exercises a solved lab imports from its solution module), tests,
# benchmarks, the contributors' documents and the other packages take through it, listed in
# `__all__`. A name used only inside the package, or imported from its own module, stays there.
DOCUMENTS = ("README.md", "AUTHORING.md", "INSTRUCTORS.md", "CONTRIBUTING.md")
DOTTED = re.compile(r"\b(?:%s)(?:\.\w+)+" % "|".join(LAYERS))


def known_modules() -> dict[str, Path]:
    return {name: path for package in LAYERS for name, path in modules(package).items()}


def front_bindings(path: Path, known) -> set[str]:
    """The public names an __init__ binds by importing them (its own submodules aside)."""
    own = module_name(path)
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names.update(alias.asname or alias.name for alias in node.names
                         if f"{node.module}.{alias.name}" != f"{own}.{alias.asname or alias.name}")
        elif isinstance(node, ast.Import):
            names.update(alias.asname for alias in node.names if alias.asname)
    return {n for n in names if not n.startswith("_")}


def declared_all(path: Path) -> list[str] | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def fronts(known) -> dict[str, Path]:
    """Every package whose __init__ re-exports names, or declares what it exports."""
    return {name: path for name, path in known.items() if path.name == "__init__.py"
            and (front_bindings(path, known) or declared_all(path) is not None)}


def code_places() -> list[tuple[str, list[str]]]:
    """(where, its Python sources) of every place that may use a front: the three packages,
    tests, benchmarks, the root conftest, and the lessons and labs of both editions (a notebook's
    code cells together: a module a set-up cell imports is used by name in later cells)."""
    found = [(str(p.relative_to(REPO_ROOT)), [p.read_text(encoding="utf-8")])
             for folder in (*LAYERS, "tests", "benchmarks") for p in sorted((REPO_ROOT / folder).rglob("*.py"))]
    found.append(("conftest.py", [(REPO_ROOT / "conftest.py").read_text(encoding="utf-8")]))
    for pattern in ("notebooks/*.ipynb", "labs/*.ipynb", "zh-CN/**/*.ipynb"):
        for path in sorted(REPO_ROOT.glob(pattern)):
            cells = ["".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
                     if cell["cell_type"] == "code"]
            found.append((str(path.relative_to(REPO_ROOT)),
                          ["\n".join("" if line.lstrip().startswith(("%", "!")) else line  # IPython magics
                                     for line in source.split("\n"))
                           for source in cells if not source.startswith("%%")]))
    return found


def resolve(dotted: str, known) -> tuple[str, str] | None:
    """`a.b.c.name` -> (the longest module prefix, the name after it). The name may be a
    submodule (front_report tells a submodule from a function of the same name)."""
    parts = dotted.split(".")
    for n in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:n]) in known:
            return ".".join(parts[:n]), parts[n]
    return None


def dotted_name(node) -> str | None:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(names)]) if isinstance(node, ast.Name) else None


def uses_in(sources, known) -> set[tuple[str, str]]:
    """(module, name) for every name this code (a file, or a notebook's cells, which share
    their imports) takes from a course module by that module's name: `from m import name`,
    `m.name` (however m was imported or aliased), getattr/setattr on m with the name as a
    string, a dotted string "m.name", and the same inside code held in a string (a cell or a
    student's answer a test runs)."""
    trees = []
    for source in [sources] if isinstance(sources, str) else sources:
        try:
            trees.append(ast.parse(source))
        except SyntaxError:
            continue
    nodes = [node for tree in trees for node in ast.walk(tree)]
    aliases, used = {}, set()
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname \
                    else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in known:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif node.module in known and alias.name != "*":
                    used.add((node.module, alias.name))
    for node in nodes:
        if isinstance(node, ast.Attribute) and (dotted := dotted_name(node)):
            head, _, rest = dotted.partition(".")
            if head in aliases and (hit := resolve(f"{aliases[head]}.{rest}", known)):
                used.add(hit)
        elif isinstance(node, ast.Call) and len(node.args) >= 2 \
                and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in ("getattr", "setattr", "hasattr", "delattr") \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                and (dotted := dotted_name(node.args[0])) and dotted.split(".")[0] in aliases:
            head, _, rest = dotted.partition(".")
            target = ".".join(filter(None, [aliases[head], rest]))
            if target in known:
                used.add((target, node.args[1].value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            if DOTTED.fullmatch(text):
                used |= {hit} if (hit := resolve(text, known)) else set()
            elif "import " in text:
                used |= uses_in(text, known)
    return used


def document_uses(known) -> set[tuple[str, str]]:
    """Dotted names in the contributors' documents (tests/course/test_docs.py resolves them)."""
    return {hit for name in DOCUMENTS
            for snippet in re.findall(r"`([^`\n]+)`", (REPO_ROOT / name).read_text(encoding="utf-8"))
            for word in DOTTED.findall(snippet) if (hit := resolve(word, known))}


def uses_through_fronts() -> dict[str, dict[str, set[str]]]:
    """front -> name -> the places that take the name through that front."""
    known = known_modules()
    names = set(fronts(known))
    places = [(where, uses_in(source, known)) for where, source in code_places()]
    places.append(("the documents", document_uses(known)))
    # A solved lab imports each exercise from the lab's solution module (course/labs/variants.py).
    places.append(("course/chapters.py (a solved lab)",
                   {(c.solution_module, key) for c in CHAPTERS if c.solution_module for key in c.exercises}))
    found: dict[str, dict[str, set[str]]] = {}
    for where, used in places:
        for module, name in used:
            if module in names and where != str(known[module].relative_to(REPO_ROOT)) \
                    and not name.startswith("__"):
                found.setdefault(module, {}).setdefault(name, set()).add(where)
    return found


def front_problems() -> dict[str, tuple[list[str], list[str], list[str]]]:
    """front -> (exported but used through it nowhere, used through it but not exported,
    bound by its imports but left out of __all__)."""
    known = known_modules()
    uses = uses_through_fronts()
    report = {}
    for name, path in fronts(known).items():
        exported = set(declared_all(path) or [])
        used = {n for n in uses.get(name, {}) if n in front_bindings(path, known) | exported
                or f"{name}.{n}" not in known}  # a submodule reached by its name is no export
        report[name] = (sorted(exported - used), sorted(used - exported),
                        sorted(front_bindings(path, known) - exported))
    return report


@lru_cache(maxsize=1)
def front_report() -> dict[str, tuple[list[str], list[str], list[str]]]:
    return front_problems()


def test_there_are_fronts():
    assert {"course.llm", "course.labs", "solutions.costs"} <= set(front_report())


@pytest.mark.parametrize("front", sorted(front_report()))
def test_a_front_exports_only_what_is_used_through_it(front):
    unused, _, _ = front_report()[front]
    assert unused == [], (f"{front} exports {unused}, which nothing takes through it: take them "
                          f"out of its __init__ and __all__ (code imports them from their own module)")


@pytest.mark.parametrize("front", sorted(front_report()))
def test_everything_used_through_a_front_is_in_its_all(front):
    _, missing, unlisted = front_report()[front]
    assert missing == [], (f"{missing} are used through {front} but it does not export them: add them "
                           f"to its __init__ and __all__, or import them from their own module")
    assert unlisted == [], f"{front} imports {unlisted} without listing them in __all__"


def test_no_answer_module_is_much_over_400_lines():
    long = [f"{name}: {n} lines" for name, path in modules("solutions").items()
            if (n := path.read_text(encoding="utf-8").count("\n")) > 420]
    assert long == [], f"split these by concern: {long}"


def test_the_checker_sees_a_wide_front_and_a_reach_past_it(tmp_path, monkeypatch):
    """The front tests can fail: a name exported and used nowhere, a name used through the
    front that it does not export, a name imported but left out of __all__."""
    package = tmp_path / "course" / "toy"
    package.mkdir(parents=True)
    (package / "parts.py").write_text("def used(): pass\ndef idle(): pass\ndef hidden(): pass\n"
                                      "def unlisted(): pass\n", encoding="utf-8")
    (package / "__init__.py").write_text("from course.toy.parts import idle, unlisted, used\n"
                                         "__all__ = ['idle', 'used']\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_toy.py").write_text(
        "import course.toy as toy\nfrom course.toy import used\n\n"
        "def test_it():\n    toy.hidden()\n", encoding="utf-8")
    for name in ("conftest.py", *DOCUMENTS):
        (tmp_path / name).write_text("", encoding="utf-8")
    monkeypatch.setattr(__import__(__name__), "REPO_ROOT", tmp_path)
    assert front_problems() == {"course.toy": (["idle"], ["hidden"], ["unlisted"])}
