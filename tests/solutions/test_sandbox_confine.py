"""Layer 4: bubblewrap confinement, and a clear refusal where bubblewrap is missing.

CI installs bubblewrap (Debian package `bubblewrap`), so these tests run there; on a machine
without it they are skipped with the reason, unless CI is set, where they fail instead.
"""
import os
import shutil
import socket

import pytest

from solutions.sandbox import (ConfinementUnavailable, HardenedTerminalTool, bubblewrap_argv,
                               bubblewrap_problem, minimal_env, run_plain)
from solutions.sandbox import confine
from lesson_support.sandbox_attacks import become_subreaper, child_processes, collect_survivors

PROBLEM = bubblewrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None and not os.environ.get("CI"),
                                 reason=f"bubblewrap cannot run here: {PROBLEM}")


@pytest.fixture
def layout(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return workspace


def sandboxed(script, workspace, **options):
    argv = bubblewrap_argv(["/bin/sh", "-c", script], workspace, **options)
    return run_plain(argv, workspace, env=minimal_env(workspace), timeout=10.0,
                     max_output_bytes=1 << 20)


@pytest.fixture
def no_bwrap(monkeypatch):
    real_which = shutil.which

    def which(name, *args, **kwargs):
        return None if name == "bwrap" else real_which(name, *args, **kwargs)

    monkeypatch.setattr(confine.shutil, "which", which)
    monkeypatch.delenv(confine.SWITCH_OFF, raising=False)  # a machine without bwrap, not one
    confine.bubblewrap_problem.cache_clear()               # where it is switched off
    yield
    confine.bubblewrap_problem.cache_clear()


def test_missing_bubblewrap_is_reported_not_ignored(layout, no_bwrap):
    problem = bubblewrap_problem()
    assert "bubblewrap" in problem and "not installed" in problem
    with pytest.raises(ConfinementUnavailable, match="not installed"):
        bubblewrap_argv(["ls"], layout)
    reply = HardenedTerminalTool(layout).run("ls")
    assert reply.startswith("Refused: ") and "\n" not in reply and "bubblewrap" in reply
    # without the layer, the tool works and says nothing about it
    unboxed = HardenedTerminalTool(layout, ("parse", "arguments", "hygiene"))
    assert unboxed.run("ls") == "notes.txt\n"


def test_a_machine_without_namespaces_can_be_simulated(layout, monkeypatch):
    """COURSE_NO_BWRAP=1 makes the course behave as where bubblewrap cannot sandbox."""
    monkeypatch.setenv(confine.SWITCH_OFF, "1")
    confine.bubblewrap_problem.cache_clear()
    try:
        problem = bubblewrap_problem()
        assert "switched off by COURSE_NO_BWRAP=1" in problem and "\n" not in problem
        reply = HardenedTerminalTool(layout).run("ls")
        assert reply == f"Refused: {problem}"
        assert HardenedTerminalTool(layout, ("parse", "arguments", "hygiene")).run("ls") == \
            "notes.txt\n"
    finally:
        confine.bubblewrap_problem.cache_clear()


def test_bubblewrap_that_cannot_create_namespaces_says_why(layout, monkeypatch, tmp_path):
    """A bwrap that fails the way it does in a locked-down container."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely "
                    "because the kernel does not allow non-privileged user namespaces.' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    monkeypatch.delenv(confine.SWITCH_OFF, raising=False)
    confine.bubblewrap_problem.cache_clear()
    try:
        problem = bubblewrap_problem()
        assert problem.startswith("bubblewrap is installed but cannot create a sandbox here")
        assert "No permissions to creating new namespace" in problem
        assert HardenedTerminalTool(layout).run("ls") == f"Refused: {problem}"
    finally:
        confine.bubblewrap_problem.cache_clear()


def test_the_argv_can_be_shown_without_bubblewrap_installed(layout, no_bwrap):
    argv = bubblewrap_argv(["ls"], layout, bwrap="bwrap")
    assert argv[0] == "bwrap" and argv[-2:] == ["--", "ls"] and "--unshare-all" in argv


@needs_bwrap
def test_argv_shape(layout):
    argv = bubblewrap_argv(["ls", "-a"], layout, cwd=layout)
    assert argv[-3:] == ["--", "ls", "-a"]
    for option in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"):
        assert option in argv
    where = str(layout.resolve())
    assert ["--ro-bind", where, where] == argv[argv.index(where) - 1:argv.index(where) + 2]
    assert "--bind" in bubblewrap_argv(["ls"], layout, writable=True)


@needs_bwrap
def test_only_the_workspace_is_visible(layout):
    result = sandboxed(f"cat {layout.parent}/secret.txt; cat notes.txt; pwd; ls /", layout)
    assert "outside" not in result.output
    assert "inside\n" in result.output
    assert f"{layout.resolve()}\n" in result.output  # mounted at its own path
    top = set(result.output.split("\n", 3)[-1].split())
    assert "root" not in top and "home" not in top and "usr" in top


@needs_bwrap
def test_workspace_is_read_only_unless_writable(layout):
    sandboxed("echo changed > notes.txt", layout)
    assert (layout / "notes.txt").read_text() == "inside\n"
    sandboxed("echo changed > notes.txt", layout, writable=True)
    assert (layout / "notes.txt").read_text() == "changed\n"


@needs_bwrap
def test_scratch_tmp_does_not_reach_the_host(layout, tmp_path):
    result = sandboxed(f"mkdir -p {tmp_path}/drop && echo x > {tmp_path}/drop/file && echo ok",
                       layout)
    assert result.output == "ok\n"  # it wrote into the sandbox's own tmpfs...
    assert not (tmp_path / "drop").exists()  # ...which the host never sees


@needs_bwrap
def test_environment_is_cleared(layout, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    result = sandboxed("env", layout)
    seen = dict(line.split("=", 1) for line in result.output.splitlines())
    seen.pop("PWD", None)
    assert seen == minimal_env(layout.resolve())


def _connects(run, layout) -> bool:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        run(f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'", layout)
        try:
            listener.accept()[0].close()
        except BlockingIOError:
            return False
        return True


@needs_bwrap
def test_no_network(layout):
    if shutil.which("bash") is None:
        pytest.skip("needs bash for /dev/tcp")
    def outside(script, cwd):
        return run_plain(["/bin/sh", "-c", script], cwd, env=minimal_env(cwd), timeout=10.0,
                         max_output_bytes=999)

    assert _connects(outside, layout)  # the probe does connect without the sandbox
    assert not _connects(sandboxed, layout)


@needs_bwrap
def test_nothing_outlives_the_sandbox(layout):
    assert become_subreaper()
    before = set(child_processes())
    result = sandboxed("sleep 30 > /dev/null 2>&1 & echo started", layout)
    assert result.output == "started\n"
    assert collect_survivors(before) == []
