"""The capstone's hidden set never reaches a student (issue 53): a student release built from the
last commit has no file holding its seeds or any of its surface forms, and the graded worker,
which reads only the course's runtime (course/, data/), has none either."""
import json

import pytest

from course.givens.capstone import HIDDEN_FILE
from course.labs.confinement import RUNTIME_DIRS
from course.paths import REPO_ROOT
from course.release import release


def secrets() -> list[bytes]:
    """The hidden file's salt, seed lists and the start of every surface form (of every family)."""
    spec = json.loads(HIDDEN_FILE.read_text(encoding="utf-8"))
    parts = [spec] + list(spec.get("families", {}).values())
    forms = [t.split("{")[0].strip().encode() for part in parts for forms in part["forms"].values()
             for t in forms]
    return ([spec["salt"].encode()] + [json.dumps(part["seeds"]).encode() for part in parts]
            + [f for f in forms if len(f) >= 12])


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "course"
    release(out, graded=[])
    return out


def files_holding(root, needles) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path.relative_to(root)}: {n.decode()!r}" for n in needles if n in data]
    return found


def test_the_hidden_set_is_committed_where_a_release_leaves_it_out(released):
    assert (REPO_ROOT / "docs/instructors/capstone_hidden.json").is_file()
    assert not (released / "docs/instructors/capstone_hidden.json").exists()
    assert files_holding(released, secrets()) == []


def test_the_graded_worker_cannot_read_the_hidden_set():
    assert not any(HIDDEN_FILE.is_relative_to(d) for d in RUNTIME_DIRS)
    for d in RUNTIME_DIRS:
        assert files_holding(d, secrets()) == []
