"""Layer 3: process hygiene. How a command is started, read and ended.

`run_plain` is what the naive tool does (without its shell): pass the agent's whole
environment on, capture all output, cut it afterwards, and on timeout kill only the process
it started. Each of those is an attack surface:

    inherited environment   every API key of the agent process is one `awk ENVIRON` away
    capture, then cut       a command that prints a gigabyte puts a gigabyte in memory first
    kill the child only     whatever the child started keeps running after the call

`run_with_hygiene` fixes each one:

    explicit minimal env    PATH, locale and HOME (the workspace); nothing inherited
    stdin closed            nothing can wait for input or read the agent's own stdin
    own process group       `start_new_session`; the whole group is killed when the call ends
    chunked, capped read    read at most `max_output_bytes`, then stop the command
    resource limits         CPU seconds, size of files written, memory, open files

The limits are set by util-linux's `prlimit` program, which sets them on itself and then
executes the command. The obvious alternative, `preexec_fn=` calling `resource.setrlimit` in
the child, makes Python fork instead of vfork (several times slower for a large process) and
is documented as unsafe when the parent has threads, as a Jupyter kernel does; it is only the
fallback where `prlimit` is missing.
"""
from __future__ import annotations

import os
import select
import selectors
import shutil
import signal
import subprocess
import time

from course.givens.sandbox.limits import DEFAULT_LIMITS, TRUSTED_PATH, ResourceLimits, RunResult

READ_CHUNK_BYTES = 64 * 1024




def minimal_env(home) -> dict[str, str]:
    """The whole environment a command gets: no inherited variable, so no inherited secret."""
    return {"PATH": TRUSTED_PATH, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "HOME": str(home)}


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def run_plain(argv: list[str], cwd, *, env, timeout: float, max_output_bytes: int) -> RunResult:
    """The naive way, minus the shell: inherited env, capture everything, cut afterwards."""
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return RunResult("", None, timed_out=True)  # run() killed the child, not its children
    truncated = len(done.stdout) > max_output_bytes
    return RunResult(_decode(done.stdout[:max_output_bytes]), done.returncode,
                     truncated=truncated)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already empty


def _exits_within(process: subprocess.Popen, seconds: float) -> bool:
    """Wait up to `seconds` for the process to end. A pidfd wakes us the moment it does
    (Popen.wait with a timeout polls with growing sleeps instead)."""
    if not hasattr(os, "pidfd_open"):
        try:
            process.wait(max(0.0, seconds))
            return True
        except subprocess.TimeoutExpired:
            return False
    pidfd = os.pidfd_open(process.pid)
    try:
        ended = bool(select.select([pidfd], [], [], max(0.0, seconds))[0])
    finally:
        os.close(pidfd)
    if ended:
        process.wait()
    return ended


def run_with_hygiene(argv: list[str], cwd, *, timeout: float, max_output_bytes: int,
                     home=None, limits: ResourceLimits = DEFAULT_LIMITS) -> RunResult:
    """Run argv with a minimal environment, no stdin, its own process group, a capped read and
    resource limits; whatever it started is killed before this returns.

    Raises OSError if the program cannot be started at all.
    """
    if shutil.which(argv[0], path=TRUSTED_PATH) is None:  # say so here, not through prlimit
        raise FileNotFoundError(2, "No such program", argv[0])
    prlimit = shutil.which("prlimit", path=TRUSTED_PATH)
    process = subprocess.Popen(
        limits.prlimit_argv(prlimit) + list(argv) if prlimit else argv,
        cwd=cwd, env=minimal_env(home if home is not None else cwd),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,     # its own session and process group, id = its pid
        preexec_fn=None if prlimit else limits.apply)
    deadline = time.monotonic() + timeout
    output = bytearray()
    timed_out = truncated = False
    with process, selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                timed_out = True
                break
            chunk = os.read(process.stdout.fileno(), READ_CHUNK_BYTES)
            if not chunk:
                break  # end of output
            output += chunk
            if len(output) > max_output_bytes:
                truncated = True
                break
        if not (timed_out or truncated):
            # output ended; let the program finish so its exit code is real
            timed_out = not _exits_within(process, deadline - time.monotonic())
        # Kill the whole group: a stopped command, and anything it left running in the
        # background. (If the group is already empty this is a no-op.)
        _kill_group(process.pid)
        process.wait()
    exit_code = None if (timed_out or truncated) else process.returncode
    return RunResult(_decode(bytes(output[:max_output_bytes])), exit_code,
                     timed_out=timed_out, truncated=truncated)
