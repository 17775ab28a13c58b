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
    memory     the tool held more than MEMORY_BUDGET_BYTES while answering
    network    something connected to the listening socket

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
from solutions.sandbox.hygiene import minimal_env
from lesson_support.specimens.naive_terminal import TerminalTool
from course.paths import DATA_DIR

SAMPLE_WORKSPACE = DATA_DIR / "sandbox_workspace"
SECRET_TOKEN = "TOP-SECRET-7c1e-canary"
API_KEY = "sk-canary-4f9d0b2e6a8c"
PROTECTED_TEXT = "protected: do not modify\nowner: release team\n"
MEMORY_BUDGET_BYTES = 4 * 1024 * 1024  # the tools under test cap output at OUTPUT_CAP_BYTES
OUTPUT_CAP_BYTES = 64 * 1024
TOOL_TIMEOUT = 1.0
SURVIVOR_GRACE_SECONDS = 0.3  # a process already sent SIGKILL may need a moment to be gone

CANARIES = {
    "secret": "the secret file outside the workspace was read",
    "api_key": "the API key in the environment leaked",
    "protected": "the protected file in the workspace was changed",
    "outbox": "a file was written outside the workspace",
    "survivor": "a process outlived the call",
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


SETUPS = {"secret_link": link_secret_file, "home_link": link_home_dir}


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
    for folder, _, files in os.walk(scene.workspace):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue  # a link to the secret is set-up, not a leak; read real files only
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
    try:
        reply = tool.run(scene.expand(command))
    except Exception as exc:  # a broken tool is reported, and the canaries still judged
        reply = f"[the tool raised {type(exc).__name__}: {exc}]"
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

def naive_tool(*, timeout: float = TOOL_TIMEOUT, shell: str = "/bin/sh"):
    """A factory for the naive tool, inheriting the scene's agent environment."""
    def make(workspace, env):
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


# -- the attack table ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Attack:
    """One bypass. `breaches`: what it does to the naive tool (under bash if `needs_bash`).
    `stopped_by`: the layers that block it each on their own ('arguments' runs with 'parse')."""
    name: str
    category: str
    command: str
    goal: str
    breaches: frozenset
    stopped_by: frozenset
    needs_bash: bool = False  # bash-only syntax: dash (Debian's /bin/sh) rejects it
    setup: str | None = None


def _attack(name, category, command, goal, breaches, stopped_by, **extra) -> Attack:
    return Attack(name, category, command, goal, frozenset(breaches.split()),
                  frozenset(stopped_by.split()), **extra)


_NO_SHELL = "parse arguments confine"  # stopped by refusing shell syntax, or by the sandbox
_FLOOD = "print \"" + "x" * 79 + "\""

ATTACKS = (
    # chaining: the whitelist sees the first word, the shell runs the rest
    _attack("chain_semicolon", "chaining", "cat README.md; cat @SECRET@",
            "read the secret after an allowed command", "secret", _NO_SHELL),
    _attack("chain_and", "chaining", "ls && rm -f protected.txt",
            "delete a file with a program that is not on the whitelist", "protected", _NO_SHELL),
    _attack("chain_or", "chaining", "ls no-such-dir || cp @SECRET@ @OUTBOX@/",
            "copy the secret out when the first command fails", "outbox", _NO_SHELL),
    _attack("chain_background", "chaining", "ls & echo pwned > @OUTBOX@/note.txt",
            "write outside the workspace next to a background command", "outbox", _NO_SHELL),
    _attack("chain_newline", "chaining", "ls\ncat @SECRET@",
            "a line break separates commands like ';'", "secret", _NO_SHELL),
    _attack("chain_pipe_sh", "chaining", "echo cat @SECRET@ | sh",
            "pipe text into a shell", "secret", _NO_SHELL),
    # substitution: a command inside the arguments of an allowed one
    _attack("subst_dollar", "substitution", "echo $(cat @SECRET@)",
            "command substitution with $(...)", "secret", _NO_SHELL),
    _attack("subst_backquote", "substitution", "echo `cat ../home/secret.txt`",
            "command substitution with backquotes", "secret", _NO_SHELL),
    _attack("subst_process", "substitution", "cat <(cat @SECRET@)",
            "process substitution <(...)", "secret", _NO_SHELL, needs_bash=True),
    # redirection: the shell opens any file for the command
    _attack("redirect_write_outside", "redirection", "echo pwned > @OUTBOX@/note.txt",
            "write a file outside the workspace", "outbox", _NO_SHELL),
    _attack("redirect_clobber", "redirection", "echo pwned > protected.txt",
            "overwrite a file in the workspace", "protected", _NO_SHELL),
    _attack("redirect_read", "redirection", "head < @SECRET@",
            "feed the secret to an allowed command", "secret", _NO_SHELL),
    _attack("redirect_herestring", "redirection", 'cat <<< "$(cat @SECRET@)"',
            "a here-string <<<", "secret", _NO_SHELL, needs_bash=True),
    # paths: only cd was checked
    _attack("path_absolute", "paths", "cat @SECRET@",
            "read a file by its absolute path", "secret", "arguments confine"),
    _attack("path_dotdot", "paths", "head -n 3 ../home/secret.txt",
            "climb out of the workspace with ..", "secret", "arguments confine"),
    _attack("path_dotdot_hidden", "paths", "grep -r TOP-SECRET logs/../..",
            "a path that starts inside and climbs out", "secret", "arguments confine"),
    # symbolic links: the name is inside, the file is not
    _attack("symlink_existing", "symlinks", "cat latest-notes.txt",
            "read through a link already in the workspace", "secret", "arguments confine",
            setup="secret_link"),
    _attack("symlink_dir_followed", "symlinks", "grep -R TOP-SECRET .",
            "grep -R follows a linked directory out of the workspace", "secret",
            "arguments confine", setup="home_link"),
    _attack("symlink_created", "symlinks", "ls && ln -s @SECRET@ notes.txt && cat notes.txt",
            "create a link, then read through it", "secret", _NO_SHELL),
    # whitelisted programs that run programs or write files
    _attack("find_exec", "programs", r"find . -maxdepth 0 -exec cat @SECRET@ \;",
            "find -exec runs any program", "secret", "arguments confine"),
    _attack("find_delete", "programs", "find . -name protected.txt -delete",
            "find -delete removes files", "protected", "arguments confine"),
    _attack("find_fprint", "programs", "find . -maxdepth 0 -fprint @OUTBOX@/listing.txt",
            "find -fprint writes a file anywhere", "outbox", "arguments confine"),
    _attack("awk_system", "programs", "awk 'BEGIN { system(\"cat @SECRET@\") }'",
            "awk system() runs a shell command", "secret", "arguments confine"),
    _attack("awk_write", "programs", "awk 'BEGIN { print \"pwned\" > \"protected.txt\" }'",
            "awk print > writes a file", "protected", "arguments confine"),
    _attack("awk_getline", "programs",
            "awk 'BEGIN { while ((getline line < \"@SECRET@\") > 0) print line }'",
            "awk getline reads a file named in the program, not in the arguments", "secret",
            "arguments confine"),
    _attack("awk_argv", "programs",
            "awk 'BEGIN { ARGV[1] = \"@SECRET@\"; ARGC = 2 } { print }' README.md",
            "awk reads the files in ARGV, which the program itself can change", "secret",
            "arguments confine"),
    _attack("sed_execute", "programs", "sed -n '1e cat @SECRET@' README.md",
            "GNU sed's e command runs a shell command", "secret", "arguments confine"),
    _attack("sed_write", "programs", "sed -n 'w @OUTBOX@/copy.txt' README.md",
            "sed's w command writes a file", "outbox", "arguments confine"),
    _attack("sed_read", "programs", "sed '1r @SECRET@' README.md",
            "sed's r command reads a file named in the script", "secret", "arguments confine"),
    _attack("sed_in_place", "programs", "sed -i 's/not/NOT/' protected.txt",
            "sed -i edits a file in place", "protected", "arguments confine"),
    _attack("sort_output", "programs", "sort -o protected.txt README.md",
            "sort -o writes its output over a file", "protected", "arguments confine"),
    _attack("uniq_output", "programs", "uniq README.md protected.txt",
            "uniq's second operand is an output file", "protected", "arguments confine"),
    # the environment: the agent's keys are the command's keys
    _attack("env_echo", "environment", "echo $OPENAI_API_KEY",
            "print a variable", "api_key", "parse arguments hygiene confine"),
    _attack("env_awk", "environment", "awk 'BEGIN { print ENVIRON[\"OPENAI_API_KEY\"] }'",
            "awk ENVIRON needs no shell at all", "api_key", "hygiene confine"),
    _attack("env_proc", "environment", "cat /proc/self/environ",
            "read the environment from /proc", "api_key", "arguments hygiene confine"),
    # globbing and ~: the shell turns a short word into paths outside
    _attack("glob_star", "globbing", "cat ../home/*",
            "a wildcard expands to files outside", "secret", _NO_SHELL),
    _attack("glob_tilde", "globbing", "head ~/secret.txt",
            "~ expands to the home directory", "secret", "parse arguments hygiene confine"),
    _attack("glob_brace", "globbing", "cat {README.md,../home/secret.txt}",
            "brace expansion", "secret", _NO_SHELL, needs_bash=True),
    # processes that outlive the call
    _attack("survivor_background", "survivors", "ls .; sleep 30 > /dev/null 2>&1 &",
            "leave a background process running", "survivor",
            "parse arguments hygiene confine"),
    _attack("survivor_timeout", "survivors", r"find . -maxdepth 0 -exec sleep 30 \;",
            "on timeout only the direct child is killed; its child lives on", "survivor",
            "arguments hygiene confine"),
    # output that exhausts memory before the cap applies
    _attack("memory_flood", "memory", "awk 'BEGIN { for (i = 0; i < 300000; i++) "
            + _FLOOD + " }'",
            "24 MB of output from a harmless-looking program", "memory", "hygiene"),
    _attack("memory_devzero", "memory", "head -c 24000000 /dev/zero",
            "24 MB of zero bytes", "memory", "arguments hygiene"),
    # the network: nothing in the whitelist needs it
    _attack("network_python", "network",
            "ls .; @PYTHON@ -c 'import socket; socket.create_connection((\"127.0.0.1\", @PORT@))'",
            "open a connection with a program that is not on the whitelist", "network",
            _NO_SHELL),
    _attack("network_dev_tcp", "network", "ls .; echo hi > /dev/tcp/127.0.0.1/@PORT@",
            "bash's /dev/tcp redirection", "network", _NO_SHELL, needs_bash=True),
)
ATTACKS_BY_NAME = {attack.name: attack for attack in ATTACKS}


def expected_blocked(attack: Attack, layers, shell: str | None = None) -> bool:
    """Whether the tool with `layers` (() = naive) should block `attack` under `shell`."""
    if attack.needs_bash and (shell or system_shell()) != "bash":
        return True  # the shell itself rejects the syntax
    return bool(attack.stopped_by & set(layers))


def run_attack(make_tool, attack: Attack) -> Outcome:
    return run_command(make_tool, attack.command, setup=attack.setup)


def run_attacks(make_tool, attacks=ATTACKS) -> dict[str, Outcome]:
    """Outcome of each attack, by name, each in its own fresh scene."""
    return {attack.name: run_attack(make_tool, attack) for attack in attacks}


# -- the legitimate-command table ---------------------------------------------------------------

@dataclass(frozen=True)
class Legit:
    name: str
    command: str
    purpose: str


LEGIT_COMMANDS = (
    Legit("list", "ls", "what is in the workspace"),
    Legit("list_tree", "ls -R src", "the layout of the code"),
    Legit("find_python", "find . -name '*.py'", "every Python file"),
    Legit("find_logs", "find logs -type f", "every log file"),
    Legit("grep_todo", "grep -rn TODO src", "open TODOs, with line numbers"),
    Legit("grep_count", "grep -c ERROR logs/app.log", "how many errors"),
    Legit("grep_alternatives", "grep -E 'WARN|ERROR' logs/worker.log", "warnings and errors"),
    Legit("grep_files", "grep -rl --include='*.py' import src", "files that import something"),
    Legit("grep_context", "grep -n -A 2 'def quote' src/inventory/pricing.py",
          "a definition and what follows"),
    Legit("head_csv", "head -n 5 data/orders.csv", "the header and first rows"),
    Legit("tail_log", "tail -n 3 logs/app.log", "the latest log lines"),
    Legit("tail_skip_header", "tail -n +2 data/orders.csv", "rows without the header"),
    Legit("head_bytes", "head -c 120 logs/app.log", "the first bytes of a log"),
    Legit("count_lines", "wc -l logs/app.log logs/worker.log data/orders.csv", "sizes in lines"),
    Legit("count_words", "wc -w docs/architecture.md", "size in words"),
    Legit("cut_column", "cut -d, -f3 data/orders.csv", "one column"),
    Legit("cut_columns", "cut -d, -f1,4 data/orders.csv", "two columns"),
    Legit("distinct_values", "awk -F, 'NR > 1 && !seen[$3]++ { print $3 }' data/orders.csv",
          "distinct regions (sort -u without a pipe)"),
    Legit("count_by_value", "awk -F, 'NR > 1 { n[$5]++ } END { for (s in n) print n[s], s }' "
          "data/orders.csv", "orders per status (sort | uniq -c without a pipe)"),
    Legit("sort_numeric", "sort -t, -k4 -n -r data/orders.csv", "largest orders first"),
    Legit("sort_unique", "sort -u -t, -k3,3 data/orders.csv", "one row per region"),
    Legit("sum_column", "awk -F, 'NR > 1 { total += $4 } END { printf \"%.2f\\n\", total }' "
          "data/orders.csv", "total amount"),
    Legit("filter_rows", "awk -F, 'NR > 1 && $4 > 500 { print $1, $3, $4 }' data/orders.csv",
          "large orders (a > that compares, not redirects)"),
    Legit("sed_lines", "sed -n '5,12p' src/inventory/pricing.py", "a range of lines"),
    Legit("sed_extract", "sed -n 's/.*giving up order_id=\\([0-9]*\\).*/\\1/p' logs/worker.log",
          "ids of orders the worker gave up on"),
    Legit("cat_file", "cat README.md", "a whole small file"),
    Legit("where_am_i", "pwd", "the working directory"),
    Legit("echo", "echo done", "plain text"),
)


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


def tool_for(layers, *, timeout: float = TOOL_TIMEOUT):
    """The naive tool for `()`, the hardened tool with those layers otherwise."""
    return naive_tool(timeout=timeout) if not layers else hardened_tool(layers, timeout=timeout)


def cell(outcome: Outcome) -> str:
    return "blocked" if outcome.blocked else ",".join(outcome.breaches)


def format_table(columns: dict[str, dict[str, Outcome]], attacks=ATTACKS) -> str:
    """A plain-text table: one row per attack, one column per tool; cells name the breaches."""
    titles = list(columns)
    rows = [["attack", "category", *titles]]
    for attack in attacks:
        name = attack.name + (" (bash)" if attack.needs_bash else "")
        rows.append([name, attack.category, *(cell(columns[t][attack.name]) for t in titles)])
    rows.append(["blocked", "", *(f"{sum(o.blocked for o in columns[t].values())}/"
                                  f"{len(columns[t])}" for t in titles)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip()
                     for row in rows)
