"""The red-team harness: attacks judged by canaries, and the commands that must keep working.

Every command runs in a fresh *scene*, a temporary directory laid out like this:

    root/workspace/     a copy of data/sandbox_workspace, plus protected.txt (must not change)
    root/home/secret.txt   a secret outside the workspace (and $HOME of the agent process)
    root/outbox/        a directory outside the workspace that must stay empty

plus a fake API key in the environment the agent process would pass on, and a listening
socket on 127.0.0.1. A command is then judged by what actually happened, not by what the tool
answered; each canary below is one thing that must not happen:

    secret     the secret's token reached the reply or a file in the workspace
    api_key    the fake API key reached the reply or a file in the workspace
    protected  protected.txt was changed or deleted
    outbox     anything appeared in root/outbox
    survivor   a process the command started was still running after the call returned
    stalled    the call lasted as long as the tool's timeout: the command never ended by itself
    memory     the tool held more than MEMORY_BUDGET_BYTES while answering
    network    something connected to the listening socket

The attack table and the legitimate commands are data (data/sandbox/attacks.json and
legit_commands.json), loaded and checked here: ATTACKS, ATTACKS_BY_NAME, LEGIT_COMMANDS.

Some attacks need a program the machine may not have (`needs`: bash as /bin/sh, or gawk as awk);
where it is missing they fail on their own. `format_table` prints such cells the same on every
machine (marked *, checked against what this machine should do), so a lesson's stored output
does not depend on the machine it last ran on.

Commands may use placeholders, replaced per scene: @SECRET@, @HOME@, @OUTBOX@, @WORKSPACE@,
@PORT@, @PYTHON@. Replies are shown with the same placeholders instead of temporary paths.

Scenes are made in /dev/shm where it exists (one is made and removed for every command, and
in memory that is several times faster than on disk), otherwise in the temporary directory.

To see processes that outlive a call even after their parent died, the harness makes its own
process a "child subreaper" (Linux prctl): orphans are re-parented to it instead of init, so
after the call any new child still alive is a survivor. Survivors are then killed.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from solutions.sandbox.hardened import LAYERS, HardenedTerminalTool
from solutions.sandbox.hygiene import TRUSTED_PATH, minimal_env
from lesson_support.specimens.naive_terminal import TerminalTool
from course.paths import DATA_DIR

SAMPLE_WORKSPACE = DATA_DIR / "sandbox_workspace"
ATTACKS_FILE = DATA_DIR / "sandbox" / "attacks.json"
LEGIT_FILE = DATA_DIR / "sandbox" / "legit_commands.json"
SECRET_TOKEN = "TOP-SECRET-7c1e-canary"
API_KEY = "sk-canary-4f9d0b2e6a8c"
PROTECTED_TEXT = "protected: do not modify\nowner: release team\n"
MEMORY_BUDGET_BYTES = 4 * 1024 * 1024  # the tools under test cap output at OUTPUT_CAP_BYTES
OUTPUT_CAP_BYTES = 64 * 1024
TOOL_TIMEOUT = 2.0  # far above any command that ends by itself, even on a busy machine
SURVIVOR_GRACE_SECONDS = 0.3  # a process already sent SIGKILL may need a moment to be gone

CANARIES = {
    "secret": "the secret file outside the workspace was read",
    "api_key": "the API key in the environment leaked",
    "protected": "the protected file in the workspace was changed",
    "outbox": "a file was written outside the workspace",
    "survivor": "a process outlived the call",
    "stalled": "the command ran until the tool's timeout stopped it",
    "memory": "the tool held far more output in memory than its cap",
    "network": "a network connection was made",
}


# -- scenes -----------------------------------------------------------------------------------

@dataclass
class Scene:
    root: Path
    workspace: Path
    home: Path
    secret_file: Path
    outbox: Path
    protected_file: Path
    listener: socket.socket
    env: dict  # the environment of the agent process, which a naive tool passes on

    @property
    def port(self) -> int:
        return self.listener.getsockname()[1]

    def placeholders(self) -> dict[str, str]:
        return {"@SECRET@": str(self.secret_file), "@OUTBOX@": str(self.outbox),
                "@WORKSPACE@": str(self.workspace), "@HOME@": str(self.home),
                "@PORT@": str(self.port), "@PYTHON@": sys.executable}

    def expand(self, command: str) -> str:
        for name, value in self.placeholders().items():
            command = command.replace(name, value)
        return command

    def mask(self, text: str) -> str:
        """Temporary paths shown as placeholders, so replies read (and print) the same each run."""
        paths = {v: k for k, v in self.placeholders().items() if k != "@PORT@"}
        paths[str(self.root)] = "@ROOT@"
        for value in sorted(paths, key=len, reverse=True):
            text = text.replace(value, paths[value])
        return text


def link_secret_file(scene: Scene) -> None:
    """A symbolic link inside the workspace that points at the secret file."""
    (scene.workspace / "latest-notes.txt").symlink_to(scene.secret_file)


def link_home_dir(scene: Scene) -> None:
    """A symbolic link inside the workspace that points at the home directory (outside)."""
    (scene.workspace / "vendor").symlink_to(scene.home, target_is_directory=True)


def hardlink_secret_file(scene: Scene) -> None:
    """A hard link inside the workspace: a second name of the secret file itself."""
    os.link(scene.secret_file, scene.workspace / "notes-copy.txt")


SETUPS = {"secret_link": link_secret_file, "home_link": link_home_dir,
          "secret_hardlink": hardlink_secret_file}


def scenes_dir() -> str | None:
    """Where scenes are made: in memory (/dev/shm) when possible, since one is made and removed
    for every command; otherwise the system's temporary directory."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


@contextmanager
def open_scene(template=SAMPLE_WORKSPACE, setup: str | None = None):
    """A fresh scene (see the module docstring), removed afterwards."""
    if setup is not None and setup not in SETUPS:
        raise ValueError(f"unknown scene setup {setup!r}: choose from {sorted(SETUPS)}")
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="redteam-", dir=scenes_dir())))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        workspace, home, outbox = root / "workspace", root / "home", root / "outbox"
        shutil.copytree(template, workspace, symlinks=True)
        home.mkdir()
        outbox.mkdir()
        (home / "secret.txt").write_text(f"database password: {SECRET_TOKEN}\n")
        (workspace / "protected.txt").write_text(PROTECTED_TEXT)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "USER": "agent",
               "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "OPENAI_API_KEY": API_KEY}
        scene = Scene(root, workspace, home, home / "secret.txt", outbox,
                      workspace / "protected.txt", listener, env)
        if setup is not None:
            SETUPS[setup](scene)
        yield scene
    finally:
        listener.close()
        shutil.rmtree(root, ignore_errors=True)


# -- processes that outlive a call --------------------------------------------------------------

@lru_cache(maxsize=1)
def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (Linux only). False where impossible."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # 36 = PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def child_processes() -> dict[int, str]:
    """pid -> state letter of every direct child of this process, read from /proc."""
    me, found = os.getpid(), {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it exited while we looked
        if int(fields[1]) == me:
            found[int(entry)] = fields[0].decode()
    return found


def _reap(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def collect_survivors(before: set[int]) -> list[int]:
    """New children still alive after a grace period; all new children are then killed."""
    deadline = time.monotonic() + SURVIVOR_GRACE_SECONDS
    while True:
        new = {pid: state for pid, state in child_processes().items() if pid not in before}
        alive = [pid for pid, state in new.items() if state not in "ZX"]
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    _reap(new)
    for _ in range(5):  # killing a survivor can orphan its own children: adopt and kill them
        late = [pid for pid in child_processes() if pid not in before]
        if not late:
            break
        _reap(late)
    return sorted(alive)


# -- judging one command ------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    command: str
    reply: str
    breaches: tuple[str, ...]  # canary names, in CANARIES order; empty means blocked

    @property
    def blocked(self) -> bool:
        return not self.breaches


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _workspace_contains(scene: Scene, token: str) -> bool:
    needle = token.encode()
    secret = os.stat(scene.secret_file) if scene.secret_file.exists() else None
    for folder, _, files in os.walk(scene.workspace):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue  # a link to the secret is set-up, not a leak; read real files only
            if secret is not None and os.path.samefile(path, scene.secret_file):
                continue  # so is a hard link to it: the same file under a second name
            try:
                with open(path, "rb") as handle:
                    if needle in handle.read(4 * 1024 * 1024):
                        return True
            except OSError:
                continue
    return False


def _connected(scene: Scene) -> bool:
    try:
        connection, _ = scene.listener.accept()
    except (BlockingIOError, OSError):
        return False
    connection.close()
    return True


def judge(scene: Scene, tool, command: str) -> Outcome:
    """Run `command` (placeholders allowed) through `tool.run` and read the canaries."""
    protected_before = _digest(scene.protected_file)
    watching_survivors = become_subreaper()
    before = set(child_processes()) if watching_survivors else set()
    started_tracing = not tracemalloc.is_tracing()
    if started_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    started = time.monotonic()
    try:
        reply = tool.run(scene.expand(command))
    except Exception as exc:  # a broken tool is reported, and the canaries still judged
        reply = f"[the tool raised {type(exc).__name__}: {exc}]"
    elapsed = time.monotonic() - started
    peak = tracemalloc.get_traced_memory()[1] - baseline
    if started_tracing:
        tracemalloc.stop()
    reply = reply if isinstance(reply, str) else repr(reply)
    survivors = collect_survivors(before) if watching_survivors else []
    tripped = {
        "secret": SECRET_TOKEN in reply or _workspace_contains(scene, SECRET_TOKEN),
        "api_key": API_KEY in reply or _workspace_contains(scene, API_KEY),
        "protected": _digest(scene.protected_file) != protected_before,
        "outbox": any(scene.outbox.iterdir()),
        "survivor": bool(survivors),
        "stalled": elapsed >= getattr(tool, "timeout", TOOL_TIMEOUT),
        "memory": peak > MEMORY_BUDGET_BYTES,
        "network": _connected(scene),
    }
    return Outcome(command, scene.mask(reply), tuple(name for name in CANARIES if tripped[name]))


def run_command(make_tool, command: str, *, setup: str | None = None,
                template=SAMPLE_WORKSPACE) -> Outcome:
    """One command against a fresh tool in a fresh scene. `make_tool(workspace, env)`."""
    with open_scene(template, setup) as scene:
        return judge(scene, make_tool(scene.workspace, scene.env), command)


# -- tools under test ---------------------------------------------------------------------------

def naive_tool(*, timeout: float = TOOL_TIMEOUT, shell: str = "/bin/sh", awk: str | None = None):
    """A factory for the naive tool, inheriting the scene's agent environment. `awk` (a path
    such as /usr/bin/mawk) makes `awk` that program for the tool, whatever this machine's is."""
    def make(workspace, env):
        if awk is not None:
            chosen = Path(workspace).parent / "chosen-awk"  # in the scene, outside the workspace
            chosen.mkdir(exist_ok=True)
            if not (chosen / "awk").exists():
                (chosen / "awk").symlink_to(awk)
            env = {**env, "PATH": f"{chosen}:{env['PATH']}"}
        return TerminalTool(workspace, timeout=timeout, max_output_size=OUTPUT_CAP_BYTES,
                            environ=env, shell=shell)
    return make


def hardened_tool(layers=LAYERS, *, timeout: float = TOOL_TIMEOUT, **options):
    """A factory for the hardened tool with the given layers (options go to its constructor)."""
    def make(workspace, env):
        return HardenedTerminalTool(workspace, layers, timeout=timeout,
                                    max_output_bytes=OUTPUT_CAP_BYTES, inherited_env=env,
                                    **options)
    return make


def system_shell() -> str:
    """The shell that shell=True starts here: 'dash' on Debian and Ubuntu, 'bash' elsewhere."""
    return os.path.basename(os.path.realpath("/bin/sh"))


@lru_cache(maxsize=1)
def system_awk() -> str:
    """Which awk `awk` is here: 'gawk' (Fedora, Arch; Debian once gawk is installed) when it
    says it is GNU Awk, otherwise its program's name: 'mawk' (Debian's default), 'original-awk',
    'busybox'... ('' if there is none)."""
    found = shutil.which("awk", path=TRUSTED_PATH)
    if found is None:
        return ""
    try:
        version = subprocess.run([found, "--version"], capture_output=True, timeout=10,
                                 stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = b""
    return "gawk" if version.startswith(b"GNU Awk") else os.path.basename(os.path.realpath(found))


def has(program: str | None, shell: str | None = None, awk: str | None = None) -> bool:
    """Whether this machine (or the shell and awk given) has what an attack `needs`."""
    if program == "bash":
        return (shell or system_shell()) == "bash"
    if program == "gawk":
        return (awk or system_awk()) == "gawk"
    return True


# -- the attack table (data/sandbox/attacks.json) ------------------------------------------------

NEEDS = ("bash", "gawk")


@dataclass(frozen=True)
class Attack:
    """One bypass. `breaches`: what it does to the naive tool (where `needs` is met).
    `stopped_by`: the layers that block it each on their own ('arguments' runs with 'parse').
    `needs`: 'bash' (bash-only syntax; dash, Debian's /bin/sh, rejects it) or 'gawk' (gawk-only
    syntax; mawk, Debian's default awk, rejects it). `setup`: a change made to the scene first."""
    name: str
    category: str
    command: str
    goal: str
    breaches: frozenset
    stopped_by: frozenset
    needs: str | None = None
    setup: str | None = None

    @property
    def needs_bash(self) -> bool:
        return self.needs == "bash"


@dataclass(frozen=True)
class Legit:
    name: str
    command: str
    purpose: str


def _rows(path: Path, key: str) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data[key]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: cannot read the table under {key!r}: {exc}") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError(f"{path}: {key!r} must be a list of objects")
    return rows


def _checked(path: Path, number: int, row: dict, required: set, optional: set = frozenset()):
    where = f"{path.name}, row {number} ({row.get('name', 'no name')})"
    missing, unknown = required - set(row), set(row) - required - set(optional)
    if missing or unknown:
        raise ValueError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")
    for name in required | (set(optional) & set(row)):
        if name in ("breaches", "stopped_by"):
            if not isinstance(row[name], list) or not all(isinstance(x, str) for x in row[name]):
                raise ValueError(f"{where}: {name} must be a list of names")
        elif not isinstance(row[name], str) or not row[name]:
            raise ValueError(f"{where}: {name} must be non-empty text")
    return where


def load_attacks(path: Path = ATTACKS_FILE) -> tuple[Attack, ...]:
    """The attack table, every row checked: known canaries, layers, needs and setups."""
    attacks = []
    for number, row in enumerate(_rows(path, "attacks"), 1):
        where = _checked(path, number, row, {"name", "category", "command", "goal", "breaches",
                                              "stopped_by"}, {"needs", "setup"})
        for name, allowed in (("breaches", CANARIES), ("stopped_by", LAYERS)):
            wrong = sorted(set(row[name]) - set(allowed))
            if wrong:
                raise ValueError(f"{where}: {name} {wrong} are not among {list(allowed)}")
        if row.get("needs") not in (None, *NEEDS):
            raise ValueError(f"{where}: needs must be one of {list(NEEDS)}")
        if row.get("setup") not in (None, *SETUPS):
            raise ValueError(f"{where}: setup must be one of {sorted(SETUPS)}")
        attacks.append(Attack(row["name"], row["category"], row["command"], row["goal"],
                              frozenset(row["breaches"]), frozenset(row["stopped_by"]),
                              row.get("needs"), row.get("setup")))
    names = [a.name for a in attacks]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: attack names must be unique")
    return tuple(attacks)


def load_legit_commands(path: Path = LEGIT_FILE) -> tuple[Legit, ...]:
    commands = []
    for number, row in enumerate(_rows(path, "commands"), 1):
        _checked(path, number, row, {"name", "command", "purpose"})
        commands.append(Legit(row["name"], row["command"], row["purpose"]))
    return tuple(commands)


ATTACKS = load_attacks()
ATTACKS_BY_NAME = {attack.name: attack for attack in ATTACKS}
LEGIT_COMMANDS = load_legit_commands()


def expected_blocked(attack: Attack, layers, shell: str | None = None,
                     awk: str | None = None) -> bool:
    """Whether the tool with `layers` (() = naive) should block `attack` on this machine
    (or under the `shell` and `awk` given)."""
    if not has(attack.needs, shell, awk):
        return True  # the shell or awk itself rejects the syntax
    return bool(attack.stopped_by & set(layers))


def depends_on_machine(attack: Attack, layers) -> bool:
    """Whether the outcome with `layers` depends on the machine having what the attack needs."""
    return attack.needs is not None and not attack.stopped_by & set(layers)


def run_attack(make_tool, attack: Attack) -> Outcome:
    return run_command(make_tool, attack.command, setup=attack.setup)


def run_attacks(make_tool, attacks=ATTACKS) -> dict[str, Outcome]:
    """Outcome of each attack, by name, each in its own fresh scene."""
    return {attack.name: run_attack(make_tool, attack) for attack in attacks}


# -- the legitimate commands (data/sandbox/legit_commands.json) ----------------------------------

@dataclass(frozen=True)
class LegitOutcome:
    command: str
    works: bool
    reply: str
    expected: str


def reference_output(scene: Scene, command: str) -> str:
    """What a plain shell prints for `command` in the scene's workspace (same locale)."""
    done = subprocess.run(["/bin/sh", "-c", scene.expand(command)], cwd=scene.workspace,
                          env=minimal_env(scene.workspace), capture_output=True, timeout=10,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0 or done.stderr:
        raise ValueError(f"the legitimate command {command!r} fails even in a plain shell: "
                         f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8", "replace")


def check_legit(scene: Scene, tool, command: str) -> LegitOutcome:
    """A command works when the tool's reply is exactly what a plain shell prints for it."""
    expected = reference_output(scene, command)
    try:
        reply = tool.run(scene.expand(command))
    except Exception as exc:
        reply = f"[the tool raised {type(exc).__name__}: {exc}]"
    return LegitOutcome(command, reply == expected, scene.mask(reply), scene.mask(expected))


def run_legits(make_tool, commands=LEGIT_COMMANDS) -> dict[str, LegitOutcome]:
    """Each legitimate command with a fresh tool; they only read, so they share one scene."""
    with open_scene() as scene:
        return {legit.name: check_legit(scene, make_tool(scene.workspace, scene.env),
                                        legit.command)
                for legit in commands}


# -- tables for the lesson ------------------------------------------------------------------------

CUMULATIVE = {  # column title -> layers switched on (() is the naive tool)
    "naive": (),
    "+parse": ("parse",),
    "+arguments": ("parse", "arguments"),
    "+hygiene": ("parse", "arguments", "hygiene"),
    "+confine": LAYERS,
}
ALONE = {"parse": ("parse",), "parse+arguments": ("parse", "arguments"), "hygiene": ("hygiene",),
         "confine": ("confine",)}
CONFIGURATIONS = {**CUMULATIVE, "hygiene alone": ("hygiene",), "confine alone": ("confine",)}


def tool_for(layers, *, timeout: float = TOOL_TIMEOUT):
    """The naive tool for `()`, the hardened tool with those layers otherwise."""
    return naive_tool(timeout=timeout) if not layers else hardened_tool(layers, timeout=timeout)


def cell(outcome: Outcome) -> str:
    return "blocked" if outcome.blocked else ",".join(outcome.breaches)


def table_cell(attack: Attack, outcome: Outcome, layers) -> str:
    """A cell that reads the same on every machine. Where the outcome depends on the machine
    (the attack needs bash or gawk and no layer stops it), it shows what the attack does where
    the program is present, marked *, once this machine's outcome is checked against what it
    should be here (blocked where the program is missing). Anything else is shown as UNEXPECTED."""
    if not depends_on_machine(attack, layers):
        return cell(outcome)
    declared = ",".join(name for name in CANARIES if name in attack.breaches) + "*"
    if has(attack.needs):
        fine = set(outcome.breaches) == attack.breaches
    else:
        fine = outcome.blocked
    return declared if fine else f"UNEXPECTED:{cell(outcome)}"


def blocked_everywhere(attack: Attack, outcome: Outcome, layers) -> bool:
    """Blocked here, and not only because this machine lacks what the attack needs."""
    return outcome.blocked and not depends_on_machine(attack, layers)


def count_blocked(outcomes: dict[str, Outcome], layers) -> int:
    """Attacks of a column blocked on every machine (a cell marked * is not: it breaches where
    the program it needs is present)."""
    return sum(blocked_everywhere(ATTACKS_BY_NAME[name], outcome, layers)
               for name, outcome in outcomes.items())


def format_table(columns: dict[str, dict[str, Outcome]], attacks=ATTACKS, layers=None) -> str:
    """A plain-text table: one row per attack, one column per tool; cells name the breaches,
    and the last row counts the attacks each column blocks (all of the column's, not only the
    rows shown). `layers` maps each column title to its layers (default: CONFIGURATIONS)."""
    layers = {**CONFIGURATIONS, **(layers or {})}
    titles = list(columns)
    rows = [["attack", "category", *titles]]
    for attack in attacks:
        name = attack.name + (f" ({attack.needs})" if attack.needs else "")
        rows.append([name, attack.category,
                     *(table_cell(attack, columns[t][attack.name], layers[t]) for t in titles)])
    rows.append(["blocked", "", *(f"{count_blocked(columns[t], layers[t])}/{len(columns[t])}"
                                  for t in titles)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip()
             for row in rows]
    if any(depends_on_machine(a, layers[t]) for a in attacks for t in titles):
        lines.append("* where /bin/sh is bash (bash) or awk is gawk (gawk); blocked elsewhere, "
                     "because the shell or awk rejects the syntax")
    return "\n".join(lines)
