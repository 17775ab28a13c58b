"""The sandbox a graded submission's code runs in: bubblewrap (`bwrap`), as chapter 07's terminal
uses, with resource limits.

Inside, the worker (`course.labs.worker`) sees

    /usr, /bin, /lib...            read-only: programs and libraries
    Python and the virtualenv      read-only, at their own paths
    the course's runtime           read-only: course/ and data/ only; no tests, no instructors'
                                   material, no .git, no lesson_support/, and of solutions/
                                   only the earlier chapters' answers a lab gives (its
                                   `earlier_answers`), never the answers being graded
    the scratch folder             read-write, at its own path (the judge's temporary files
                                   live there too, so paths a check passes mean the same inside)
    /tmp and $HOME                 private, empty, size-limited, gone when it ends
    /proc, /dev                    private and minimal

with no network (a private loopback only), its own process tree (when the worker ends, every
process it started is killed: nothing outlives it), no terminal, an empty environment but a few
variables, and limits on memory, processes, file size and open files. The process limit is
RLIMIT_NPROC, which the kernel does not apply to root; a grader running as root puts each worker
in a pids cgroup of its own instead (`ProcessGroup`), so a fork bomb stops at the limit too. `problem()` says in one
line why confinement is not available here (no bwrap, or no namespaces); grading then stops
unless the instructor passes --unconfined, which the gradebook records.
"""
from __future__ import annotations

import ast
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from course.paths import DATA_DIR, REPO_ROOT
from course.system_mounts import system_mounts

RUNTIME_DIRS = (REPO_ROOT / "course", DATA_DIR)  # what a worker may read of the course


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 3 * 2**30      # address space of each process
    processes: int = 64                # in the sandbox's own user namespace
    file_bytes: int = 256 * 2**20      # any one file written
    open_files: int = 256
    tmp_bytes: int = 256 * 2**20       # the private /tmp and $HOME, each


def answer_paths(answers: Sequence[str]) -> list[Path]:
    """The files and folders of solutions/ a worker may read for `answers`, dotted module names
    ("solutions.compaction"; "solutions" alone is every answer, for the course's own runs of
    the solved labs), with every answer module they import in turn (`answer_modules`). The
    package's __init__ comes with any of them."""
    root = REPO_ROOT / "solutions"
    if "solutions" in answers:
        return [root]
    modules = answer_modules(answers)
    return [root / "__init__.py", *modules.values()] if modules else []


def answer_modules(answers: Sequence[str]) -> dict[str, Path]:
    """`answers` and the answer modules they import, directly or not: {"solutions.x": path}."""
    found: dict[str, Path] = {}
    todo = list(answers)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found[name] = path = _answer_path(name)
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
                todo += [".".join(n.split(".")[:2]) for n in names
                         if n.split(".")[0] == "solutions" and "." in n]
    return found


def _answer_path(name: str) -> Path:
    parts = name.split(".")
    if parts[0] != "solutions" or len(parts) != 2 or not parts[1].isidentifier():
        raise ValueError(f"{name!r} is not an answer module (solutions.<topic>)")
    base = REPO_ROOT / "solutions" / parts[1]
    for path in (base, base.with_suffix(".py")):
        if path.exists():
            return path
    raise ValueError(f"{name!r} names no module in solutions/")


def _mounts(answers: Sequence[str] = ()) -> list[str]:
    args = system_mounts(("/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime"))
    seen = set()
    for root in (sys.base_prefix, sys.prefix, *RUNTIME_DIRS, *answer_paths(answers)):
        root = os.path.realpath(root)
        if root not in seen and os.path.exists(root) and not root.startswith("/usr"):
            args += ["--ro-bind", root, root]
            seen.add(root)
    # the editable install's finder lives in site-packages and points into the repository: only
    # the folders above exist there, so `import solutions.<anything else>` finds nothing
    return args


def command(argv: list[str], scratch: Path, limits: Limits = Limits(), *,
            answers: Sequence[str] = ()) -> list[str]:
    """The argv running `argv` confined, with `scratch` writable at its own path. Of the
    reference solutions only `answers` are visible (see `answer_paths`)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError(_MISSING)
    scratch = os.path.realpath(scratch)
    home = "/home/student"
    # The private /tmp and /home first: the read-only binds after them stay visible on top,
    # so a course cloned (or a virtual environment made) under /tmp or /home still runs.
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
            "--size", str(limits.tmp_bytes), "--tmpfs", "/home",
            *_mounts(answers),
            "--proc", "/proc", "--dev", "/dev",
            "--dir", home,
            "--bind", scratch, scratch, "--chdir", scratch,
            "--setenv", "HOME", home, "--setenv", "TMPDIR", os.path.join(scratch, "tmp"),
            "--setenv", "PATH", os.path.join(sys.prefix, "bin") + ":/usr/bin:/bin",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
            "--setenv", "PYTHONHASHSEED", "0", "--setenv", "MPLBACKEND", "Agg"]
    return args + ["--", *argv]


def set_limits(limits: Limits = Limits(), group: "ProcessGroup | None" = None):
    """A preexec_fn: the limits, set in the child before it becomes bwrap (and inherited); with
    `group`, the child joins that pids cgroup first (everything it starts stays in it)."""
    def apply():
        if group is not None and group.path is not None:
            (group.path / "cgroup.procs").write_text(str(os.getpid()))
        for which, value in ((resource.RLIMIT_AS, limits.memory_bytes),
                             (resource.RLIMIT_NPROC, limits.processes),
                             (resource.RLIMIT_FSIZE, limits.file_bytes),
                             (resource.RLIMIT_NOFILE, limits.open_files),
                             (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(which, (value, value))
    return apply


_PIDS_HIERARCHIES = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1, then v2
_GROUP_PREFIX = "course-grade-"


class ProcessGroup:
    """A pids cgroup of its own for one worker, when the grader runs as root (RLIMIT_NPROC binds
    every other user): at most `limit` tasks in the worker's whole tree. `path` is None where
    there is nothing to do (not root) or no pids controller can be used (then only the rlimit
    applies, which root ignores)."""

    def __init__(self, limit: int):
        self.path: Path | None = None
        if os.geteuid() != 0:
            return
        for root in _PIDS_HIERARCHIES:
            if not (root / "cgroup.procs").exists() or (root == _PIDS_HIERARCHIES[1] and not _v2_pids(root)):
                continue
            _remove_empty_groups(root)
            path = root / f"{_GROUP_PREFIX}{os.getpid()}-{next(_GROUP_IDS)}"
            try:
                path.mkdir()
                (path / "pids.max").write_text(str(limit))
            except OSError:
                _remove(path)
                continue
            self.path = path
            return

    def close(self) -> bool:
        """Kill what is left in the group and remove it; False if there was no group."""
        if self.path is None:
            return False
        path, self.path = self.path, None
        for _ in range(100):  # the sandbox's tree is dying: wait for it, not for a clock
            try:
                pids = (path / "cgroup.procs").read_text().split()
            except OSError:
                break
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
            os.sched_yield()
        _remove(path)
        return True


_GROUP_IDS = iter(range(1, 2**62))


def _v2_pids(root: Path) -> bool:
    try:
        return "pids" in (root / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def _remove(path: Path) -> None:
    try:
        path.rmdir()  # a cgroup folder is removed empty of tasks, with its control files
    except OSError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_empty_groups(root: Path) -> None:
    """Groups an earlier grader left (it was killed before it could remove them): only those
    whose grader is gone. A living grader's group may be empty because its worker has not
    joined it yet; removing it then would make that worker's start fail (two graders, or the
    chunks of one, start workers at the same moment)."""
    for stale in root.glob(_GROUP_PREFIX + "*"):
        grader = stale.name[len(_GROUP_PREFIX):].split("-")[0]
        if grader.isdigit() and _alive(int(grader)):
            continue
        _remove(stale)


_MISSING = ("grading confines each submission with bubblewrap (bwrap), which is not installed "
            "here: install the Debian package 'bubblewrap', or grade with --unconfined (the "
            "gradebook then says so)")


@lru_cache(maxsize=1)
def problem() -> str | None:
    """None when submissions can be confined here; else one line saying why not."""
    if shutil.which("bwrap") is None:
        return _MISSING
    with tempfile.TemporaryDirectory(prefix="course-confine-probe-") as scratch:
        try:
            done = subprocess.run(command([sys.executable, "-c", "pass"], Path(scratch)),
                                  capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                                  preexec_fn=set_limits())
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap could not start a sandbox here: {exc}"
    if done.returncode != 0:
        detail = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
        return ("bubblewrap cannot create a sandbox here (it needs user namespaces or root): "
                f"{detail or 'exit status ' + str(done.returncode)}; grade with --unconfined "
                "to run submissions with your own rights (the gradebook then says so)")
    return None
