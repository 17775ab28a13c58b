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
                                   live there too, so paths a check passes mean the same inside);
                                   where the grader is root, a tmpfs of bounded size for the
                                   notebook's judge (`bound_scratch`), freed when it is gone
    /tmp and $HOME                 private, empty, size-limited, gone when it ends
    /proc, /dev                    private and minimal

with no network (a private loopback only), its own process tree (when the worker ends, every
process it started is killed: nothing outlives it), no terminal, and limits (`Limits`). Nothing of
the grader's environment is inside: bubblewrap itself starts with an empty environment (its init,
pid 1 of the sandbox, would otherwise keep the grader's, readable at /proc/1/environ), and the
worker gets a few variables. The worker runs as an unprivileged user in a user namespace nested
in the sandbox's: it has no capabilities, and the kernel refuses it ptrace, /proc/<pid>/mem and
/proc/<pid>/environ of bubblewrap's init, which lives in the outer namespace.

The rlimits bind each process: address space, CPU time, file size, open files, and processes
(RLIMIT_NPROC, which the kernel does not apply to root). A grader running as root also puts each
sandbox in control groups of its own (`ProcessGroup`), which bind the whole tree: tasks (pids),
resident memory without swap (memory) and CPUs at a time (cpu); so four children of 900 MiB
cannot hold more than the sandbox's memory, and a fork bomb stops at the process limit. Where a
controller cannot be used (not root, or not enabled), only the rlimits apply, per process.
`problem()` says in one line why confinement is not available here (no bwrap, or no namespaces);
grading then stops unless the instructor passes --unconfined, which the gradebook records.
"""
from __future__ import annotations

import ast
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
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
    sandbox_memory_bytes: int = 3 * 2**30  # resident memory of the whole sandbox (memory cgroup)
    processes: int = 64                # in the sandbox's own user namespace; the whole tree (pids cgroup)
    cpu_seconds: int = 600             # CPU time of each process: counted only while it runs, so
                                       # a loaded machine does not bring an honest worker closer
    cpus: float = 1.0                  # CPUs the whole sandbox may use at once (cpu cgroup)
    file_bytes: int = 256 * 2**20      # any one file written
    open_files: int = 256
    tmp_bytes: int = 256 * 2**20       # the private /tmp and $HOME, each
    scratch_bytes: int = 576 * 2**20   # the scratch folder (a tmpfs, where the grader is root):
                                       # above remote.SCRATCH_QUOTA, so the after-call check
                                       # still sees a call that filled it


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
    reference solutions only `answers` are visible (see `answer_paths`). Whatever environment
    it is started with, nothing of it enters the sandbox."""
    bwrap, unshare = shutil.which("bwrap"), shutil.which("unshare")
    if bwrap is None:
        raise RuntimeError(_MISSING)
    scratch = os.path.realpath(scratch)
    home = "/home/student"
    # `env -i`: bwrap's own environment is its init's, which the sandbox can read at
    # /proc/1/environ (--clearenv clears only the command's).
    # The private /tmp and /home first: the read-only binds after them stay visible on top,
    # so a course cloned (or a virtual environment made) under /tmp or /home still runs.
    args = [shutil.which("env") or "/usr/bin/env", "-i", bwrap,
            "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
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
    # The command runs as an unprivileged user of a user namespace nested in bwrap's: no
    # capabilities, and no ptrace, /proc/1/mem or /proc/1/environ of bwrap's init (the kernel
    # asks for CAP_SYS_PTRACE in the init's namespace). It is the same process (unshare execs).
    nested = [unshare or "/usr/bin/unshare", "--user", f"--map-user={NOBODY}", f"--map-group={NOBODY}"]
    return args + ["--", *nested, "--", *argv]


NOBODY = 65534  # the worker's user and group ids in its own namespace


def set_limits(limits: Limits = Limits(), group: "ProcessGroup | None" = None):
    """A preexec_fn: the limits, set in the child before it becomes bwrap (and inherited); with
    `group`, the child joins its cgroups first (everything it starts stays in them)."""
    def apply():
        if group is not None:
            for path in group.paths:
                (path / "cgroup.procs").write_text(str(os.getpid()))
        for which, value in ((resource.RLIMIT_AS, limits.memory_bytes),
                             (resource.RLIMIT_NPROC, limits.processes),
                             (resource.RLIMIT_FSIZE, limits.file_bytes),
                             (resource.RLIMIT_NOFILE, limits.open_files),
                             (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(which, (value, value))
        # SIGXCPU at the limit (Python's default: the process ends), SIGKILL a second later
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    return apply


_CGROUP = Path("/sys/fs/cgroup")
_GROUP_PREFIX = "course-grade-"
_CPU_PERIOD = 100_000  # microseconds


def _settings(limits: Limits, v2: bool) -> dict[str, list[tuple[str, str]]]:
    """controller -> the (file, value) pairs that bound a sandbox's group, in cgroup v2 or v1
    (where no swap is configured the swap file is missing and skipped)."""
    quota = str(max(1000, int(limits.cpus * _CPU_PERIOD)))
    memory = str(limits.sandbox_memory_bytes)
    if v2:
        return {"pids": [("pids.max", str(limits.processes))],
                "memory": [("memory.max", memory), ("memory.swap.max", "0")],
                "cpu": [("cpu.max", f"{quota} {_CPU_PERIOD}")]}
    return {"pids": [("pids.max", str(limits.processes))],
            "memory": [("memory.limit_in_bytes", memory), ("memory.memsw.limit_in_bytes", memory)],
            "cpu": [("cpu.cfs_period_us", str(_CPU_PERIOD)), ("cpu.cfs_quota_us", quota)]}


class ProcessGroup:
    """The control groups of one sandbox, when the grader runs as root (the rlimits bind each
    process, these the whole tree): `pids` (at most `limits.processes` tasks; RLIMIT_NPROC does
    not bind root), `memory` (at most `limits.sandbox_memory_bytes` resident, no swap: past it
    the kernel kills a process of the sandbox) and `cpu` (at most `limits.cpus` CPUs at a time).
    With cgroup v2 it is one group (at the root, where controllers may be given to children);
    with v1, one group per controller, below the grader's own group in that hierarchy (so any
    bound on the grader still holds). `controllers` are those set; `paths` the groups made:
    none where not root or no controller can be used (then only the rlimits apply)."""

    def __init__(self, limits: Limits):
        self.paths: list[Path] = []
        self.controllers: list[str] = []
        if os.geteuid() != 0:
            return
        name = f"{_GROUP_PREFIX}{os.getpid()}-{next(_GROUP_IDS)}"
        if (_CGROUP / "cgroup.controllers").exists():  # v2 only
            enabled = _read(_CGROUP / "cgroup.subtree_control").split()
            wanted = {c: v for c, v in _settings(limits, v2=True).items() if c in enabled}
            self._make(_CGROUP, name, wanted)
        else:
            for controller, values in _settings(limits, v2=False).items():
                parent = _own_group(controller)
                if parent is not None:
                    self._make(parent, name, {controller: values})

    def _make(self, parent: Path, name: str, wanted: dict[str, list[tuple[str, str]]]) -> None:
        if not wanted:
            return
        remove_stale_groups(parent)
        path = parent / name
        try:
            path.mkdir()
        except OSError:
            return
        bound = []
        for controller, values in wanted.items():
            try:
                for file, value in values:  # the first file is required, the others optional
                    if file == values[0][0] or (path / file).exists():
                        (path / file).write_text(value)
            except OSError:
                continue
            bound.append(controller)
        if bound:
            self.controllers += bound
            self.paths.append(path)
        else:
            _remove(path)

    def throttled(self) -> int:
        """How many times the cpu controller held the sandbox back (cpu.stat's nr_throttled)."""
        for path in self.paths:
            for line in _read(path / "cpu.stat").splitlines():
                if line.startswith("nr_throttled "):
                    return int(line.split()[1])
        return 0

    def close(self) -> bool:
        """Kill what is left in the groups and remove them; False if there were none."""
        paths, self.paths = self.paths, []
        for path in paths:
            _empty_and_remove(path)
        return bool(paths)


def _empty_and_remove(path: Path) -> None:
    """Kill the tasks of group `path` and remove it, once the killed are gone (a task leaves its
    group when it is reaped: the wait is for the sandbox's tree to die, bounded by a count)."""
    for _ in range(1000):
        pids = _read(path / "cgroup.procs").split()
        for pid in pids:
            try:
                os.kill(int(pid), 9)
            except (ProcessLookupError, ValueError):
                pass
        if not pids and _remove(path):
            return
        time.sleep(0.002)


_GROUP_IDS = iter(range(1, 2**62))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _own_group(controller: str) -> Path | None:
    """This process's group in the v1 hierarchy of `controller`, if it is mounted and ours."""
    root = _CGROUP / controller
    if not (root / "cgroup.procs").exists():
        return None
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            group = root / path.lstrip("/")
            return group if group.is_dir() else None
    return None


def _remove(path: Path) -> bool:
    try:
        path.rmdir()  # a cgroup folder is removed empty of tasks, with its control files
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_groups(root: Path | None = None) -> None:
    """Groups a grader left (it was killed before it could remove them: a judge's kernel ends
    with SIGKILL): only those whose grader is gone. A living grader's group may be empty because
    its worker has not joined it yet; removing it then would make that worker's start fail (two
    graders, or the chunks of one, start workers at the same moment). Without `root`, in every
    place a group may be made."""
    if root is None:
        if os.geteuid() != 0:
            return
        roots = [_CGROUP] if (_CGROUP / "cgroup.controllers").exists() else \
            [g for c in _settings(Limits(), v2=False) if (g := _own_group(c)) is not None]
        for found in roots:
            remove_stale_groups(found)
        return
    for stale in root.glob(_GROUP_PREFIX + "*"):
        grader = stale.name[len(_GROUP_PREFIX):].split("-")[0]
        if grader.isdigit() and _alive(int(grader)):
            continue
        _empty_and_remove(stale)


_SCRATCH_SOURCE = "course-scratch-"  # the scratch mounts' source name, then the judge's pid


def bound_scratch(scratch: Path, limits: Limits = Limits()) -> bool:
    """Make the empty folder `scratch` a tmpfs of `limits.scratch_bytes`, where the grader runs
    as root: what the sandbox writes there (and the judge, whose temporary files live there
    too, so both see the same files) is bounded by the kernel while it is written, and freed
    when the tmpfs is unmounted, once this process (the judge) is gone (`remove_leftovers`).
    False where it cannot: then the scratch is on the disk, and only the judge's check after
    each call (remote.SCRATCH_QUOTA) bounds it."""
    if os.geteuid() != 0 or any(target == os.path.realpath(scratch) for target, _ in _scratch_mounts()):
        return False
    remove_leftovers(groups=False)
    source = f"{_SCRATCH_SOURCE}{os.getpid()}".encode()
    options = f"size={limits.scratch_bytes},mode=0755".encode()
    flags = 0x2 | 0x4  # MS_NOSUID | MS_NODEV
    return _libc().mount(source, os.fsencode(os.path.realpath(scratch)), b"tmpfs", flags, options) == 0


def _libc():
    import ctypes
    return ctypes.CDLL(None, use_errno=True)


def _scratch_mounts() -> list[tuple[str, int]]:
    """(mount point, judge's pid) of every scratch tmpfs mounted (from /proc/self/mountinfo)."""
    try:
        text = Path("/proc/self/mountinfo").read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        before, _, after = line.partition(" - ")
        fields, source = before.split(), (after.split() + ["", ""])[1]
        judge = source[len(_SCRATCH_SOURCE):]
        if len(fields) > 4 and source.startswith(_SCRATCH_SOURCE) and judge.isdigit():
            target = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[4])  # \040: a space
            found.append((target, int(judge)))
    return found


def remove_leftovers(groups: bool = True) -> None:
    """What graders that are gone left (a judge's kernel ends with SIGKILL, so it removes
    nothing itself): the scratch tmpfs they mounted (unmounted, its files freed) and, with
    `groups`, their sandboxes' cgroups. Never a living grader's."""
    if os.geteuid() != 0:
        return
    for target, judge in _scratch_mounts():
        if not _alive(judge):
            _libc().umount2(os.fsencode(target), 2)  # MNT_DETACH: even if a file is still open
    if groups:
        remove_stale_groups()


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
