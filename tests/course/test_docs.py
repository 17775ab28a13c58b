"""The documents cannot go stale: every path, module and command that README, AUTHORING,
INSTRUCTORS and CONTRIBUTING name exists (a command's `--help` runs), and the README's Layout
block lists exactly the repository's folders.

A reference is what a reader would copy: a path in backticks or a link target, a dotted name
under one of the course's packages, a `python -m module` command. Templates (`NN_slug`,
`<topic>`, `...`) stand for many paths and are skipped; so are paths a command creates
(`submissions/`, `reports/`, `.venv`), listed below with why.
"""
import importlib
import importlib.util
import re
import subprocess
import sys
from functools import lru_cache

import pytest

from course.paths import REPO_ROOT

DOCUMENTS = ("README.md", "AUTHORING.md", "INSTRUCTORS.md", "CONTRIBUTING.md")
PACKAGES = ("course", "solutions", "lesson_support", "tests", "benchmarks")
# Paths the documents name that do not exist in a clean clone, and why.
MADE_BY_COMMANDS = {
    ".venv": "made by ./run.sh setup",
    "submissions": "the instructor's folder of collected notebooks",
    "reports": "written by the test run",
    ".traces": "written by tracing when a kernel sends its first request (course.tracing)",
    "graded-notebooks": "written by course.grade beside the gradebook",
    "feedback": "written by course.grade beside the gradebook",
    "gradebook.md": "written by course.grade", "gradebook.csv": "written by course.grade",
    "gradebook.json": "written by course.grade", "RELEASE.json": "written by course.release",
    "OUT": "the release's output folder, named by the instructor",
}
TEMPLATE = re.compile(r"NN|<[^>]+>|\.\.\.|\*|\bX\b|\{|\$")
CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATH_LIKE = re.compile(r"^\.?[\w./-]+(?:/|\.(?:py|md|ipynb|cfg|txt|sh|toml|json|yaml|csv))$")
DOTTED = re.compile(r"^(?:%s)(?:\.\w+)+$" % "|".join(PACKAGES))
COMMAND = re.compile(r"python -m ([\w.]+)")


def text(name: str) -> str:
    return (REPO_ROOT / name).read_text(encoding="utf-8")


def references(name: str) -> dict[str, set[str]]:
    """What a document names: paths, dotted names and `python -m` modules."""
    body = text(name)
    found = {"path": set(), "dotted": set(), "command": set(COMMAND.findall(body))}
    for snippet in CODE.findall(body) + LINK.findall(body):
        for word in snippet.split():
            word = word.strip("()[],;:'\"").removeprefix("./")
            if not word or TEMPLATE.search(word) or word.startswith(("http", "-", "/")):
                continue
            head = word.split("(")[0]
            if DOTTED.match(head):
                found["dotted"].add(head)
            elif PATH_LIKE.match(word) and ("/" in word or "." in word.lstrip(".")):
                found["path"].add(word)
    return found


def path_exists(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    if any(part in MADE_BY_COMMANDS for part in parts):
        return True
    # a bare name (`chapters.py`, `widgets/`) is somewhere in the tree, as prose names it
    bare = path.rstrip("/")
    return (REPO_ROOT / path).exists() or ("/" not in bare and any(
        p for p in REPO_ROOT.rglob(bare) if not any(part.startswith(".venv") for part in p.parts)))


def dotted_exists(name: str) -> bool:
    """A module, or an attribute of the longest importable prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module) is None:
                continue
        except (ImportError, ValueError):
            continue
        obj = importlib.import_module(module)
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_path_a_document_names_exists(document):
    missing = sorted(p for p in references(document)["path"] if not path_exists(p))
    assert missing == [], f"{document} names paths that do not exist: {missing}"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_module_and_name_a_document_gives_can_be_imported(document):
    missing = sorted(n for n in references(document)["dotted"] if not dotted_exists(n))
    assert missing == [], f"{document} names modules or attributes that do not exist: {missing}"


@lru_cache(maxsize=None)
def help_runs(module: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600)
    return done.returncode, (done.stdout + done.stderr)[-400:]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_command_a_document_gives_answers_help(document):
    failed = {}
    for module in sorted(references(document)["command"]):
        if module in ("pytest", "pip", "venv"):
            continue  # not ours; pytest's options are the plugin's, tested in tests/labs
        code, output = help_runs(module)
        if code != 0:
            failed[module] = output
    assert failed == {}, f"{document}: `python -m M --help` fails for {failed}"


def layout_folders() -> set[str]:
    block = text("README.md").split("## Layout", 1)[1].split("```")[1]
    return {line.split()[0].rstrip("/") for line in block.splitlines()
            if line and not line.startswith(" ")}


def tracked_folders() -> set[str]:
    files = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return {f.split("/")[0] for f in files if "/" in f and not f.startswith(".")
            and f.split("/")[0] != "jupyter-config"}


def test_the_readme_layout_lists_exactly_the_repository_folders():
    # jupyter-config/ is the Lab settings run.sh points JupyterLab at, not a place to look for code
    assert layout_folders() == tracked_folders()


def test_the_reference_finder_sees_what_a_document_names():
    """The finder is not vacuous: it sees the paths, names and commands this file relies on."""
    found = references("AUTHORING.md")
    assert "course/chapters.py" in found["path"]
    assert "course.llm.client" in found["dotted"] or "course.llm" in found["dotted"]
    assert "course.notebooks" in found["command"]
    assert not path_exists("course/no_such_module.py")
    assert not dotted_exists("course.paths.no_such_name")


# Every form in which a lesson or lab cites the second textbook section: a subsection (21.6.5),
# the section bare ("section 21.6", "(21.6)"), or by name or link without a number.
CITES_SECOND_SECTION = re.compile(
    r"21\.6(?![\d])|#the-second-textbook-section|second textbook section|textbook's second section",
    re.IGNORECASE)


def chapters_citing_the_second_section() -> set[str]:
    return {p.name[:2] for folder in ("notebooks", "labs") for p in (REPO_ROOT / folder).glob("*.ipynb")
            if CITES_SECOND_SECTION.search(p.read_text(encoding="utf-8"))}


def test_every_form_of_citing_the_second_section_is_recognised():
    for cited in ("see 21.6.5", "section 21.6 puts it", "(21.6)", "[it](../docs/sources.md#the-second-textbook-section)",
                  "The second textbook section says", "the textbook's second section calls"):
        assert CITES_SECOND_SECTION.search(cited), cited
    for other in ("21.60 tokens", "section 2.1", "a second textbook"):
        assert not CITES_SECOND_SECTION.search(other), other


def test_sources_md_lists_the_chapters_that_cite_the_second_section():
    said = text("docs/sources.md").split("## The second textbook section", 1)[1].split("##")[0]
    listed = re.search(r"Chapters ([\d, and]+) cite it", " ".join(said.split())).group(1)
    listed = set(re.findall(r"\d\d", listed))
    assert listed == chapters_citing_the_second_section()


def answer_key_sections() -> dict[str, str]:
    body = text("docs/instructors/answer_key.md")
    parts = re.split(r"^## (\d\d) .*$", body, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_the_answer_key_covers_every_chapter_self_test_and_thinking_question():
    """Nothing else checks the instructors' answer key: a chapter added to the registry, a lab's
    self-test question or a lesson's thinking question without its model answer fails here."""
    import nbformat

    from course.chapters import CHAPTERS

    sections = answer_key_sections()
    for chapter in CHAPTERS:
        if chapter.number == "00":
            continue
        assert chapter.number in sections, f"docs/instructors/answer_key.md has no '## {chapter.number}'"
        section = sections[chapter.number]
        lab = next((REPO_ROOT / "labs").glob(f"{chapter.number}_*_lab.ipynb"))
        questions = {c.metadata.get("course", {}).get("key") for c in nbformat.read(lab, as_version=4).cells}
        asked = sorted(k for k in questions if k and re.fullmatch(r"check-self-test-q\d+", k))
        self_test = section.split("### Self-test", 1)[1].split("###")[0] if "### Self-test" in section else ""
        answered = re.findall(r"^(\d+)\. ", self_test, flags=re.M)
        assert len(answered) == len(asked), f"chapter {chapter.number}: {len(asked)} self-test questions, {len(answered)} answers"
        lesson = next((REPO_ROOT / "notebooks").glob(f"{chapter.number}_*.ipynb"))
        thinks = [c for c in nbformat.read(lesson, as_version=4).cells if "answer" in c.metadata.get("tags", [])]
        think_part = section.split("### Things to think about", 1)[1] if "### Things to think about" in section else ""
        models = re.findall(r"^(\d+)\. ", think_part, flags=re.M)
        assert len(models) == len(thinks), f"chapter {chapter.number}: {len(thinks)} thinking questions, {len(models)} model answers"
