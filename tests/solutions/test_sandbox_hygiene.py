"""Layer 3: minimal environment, stdin closed, process group killed, capped read, rlimits."""
import os

import pytest

from solutions.sandbox import hygiene
from solutions.sandbox import ResourceLimits, minimal_env, run_plain, run_with_hygiene
from lesson_support.sandbox_attacks import become_subreaper, collect_survivors, child_processes

SH = "/bin/sh"


def hygienic(script, cwd, **options):
    options.setdefault("timeout", 5.0)
    options.setdefault("max_output_bytes", 64 * 1024)
    return run_with_hygiene([SH, "-c", script], cwd, **options)


def test_the_environment_is_only_the_minimal_one(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    result = hygienic("env", tmp_path)
    seen = dict(line.split("=", 1) for line in result.output.splitlines())
    seen.pop("PWD", None)  # the shell adds these two itself
    seen.pop("OLDPWD", None)
    assert seen == minimal_env(tmp_path)
    assert result.exit_code == 0


def test_home_can_be_chosen(tmp_path):
    assert hygienic("echo $HOME", tmp_path, home="/nowhere").output == "/nowhere\n"


def test_stdin_is_closed(tmp_path):
    # cat with no file reads stdin: it must see end-of-file at once, not wait for input
    result = hygienic("cat; echo after", tmp_path, timeout=3.0)
    assert result.output == "after\n" and not result.timed_out


def test_exit_status_is_kept(tmp_path):
    result = hygienic("echo partial; exit 3", tmp_path)
    assert (result.output, result.exit_code, result.timed_out, result.truncated) == \
        ("partial\n", 3, False, False)


def test_output_is_read_up_to_the_cap_and_the_command_is_stopped(tmp_path):
    # an endless writer: only a capped read can ever return
    result = hygienic("while :; do echo xxxxxxxxxxxxxxx; done", tmp_path, max_output_bytes=1000)
    assert result.truncated and result.exit_code is None and not result.timed_out
    assert len(result.output) == 1000


def test_timeout_stops_the_command_and_everything_it_started(tmp_path):
    assert become_subreaper()
    before = set(child_processes())
    result = hygienic("sleep 30 & sleep 30", tmp_path, timeout=0.3)
    assert result.timed_out and result.exit_code is None
    assert collect_survivors(before) == []


def test_background_processes_are_stopped_when_the_command_ends(tmp_path):
    assert become_subreaper()
    before = set(child_processes())
    result = hygienic("sleep 30 > /dev/null 2>&1 & echo started", tmp_path)
    assert result.output == "started\n" and result.exit_code == 0
    assert collect_survivors(before) == []


def test_plain_run_leaves_survivors_and_buffers_everything(tmp_path):
    """The contrast: what the naive way does with the same commands."""
    assert become_subreaper()
    before = set(child_processes())
    result = run_plain([SH, "-c", "sleep 30 > /dev/null 2>&1 & echo started"], tmp_path,
                       env=minimal_env(tmp_path), timeout=5.0, max_output_bytes=100)
    assert result.output == "started\n"
    assert len(collect_survivors(before)) == 1  # the background sleep was still running
    big = run_plain([SH, "-c", "head -c 200000 /dev/zero"], tmp_path, env=minimal_env(tmp_path),
                    timeout=5.0, max_output_bytes=100)
    assert big.truncated and len(big.output) == 100  # cut only after reading all 200 kB


def limits_seen(tmp_path, limits):
    text = hygienic("cat /proc/self/limits", tmp_path, limits=limits).output
    rows = {}
    for line in text.splitlines()[1:]:
        name, soft = line[:26].strip(), line[26:47].split()[0]
        rows[name] = soft
    return rows


@pytest.fixture(params=["prlimit", "preexec_fn"])
def limit_setter(request, monkeypatch):
    """Both ways of setting limits: the prlimit program, and the fallback where it is missing."""
    if request.param == "preexec_fn":
        real_which = hygiene.shutil.which
        monkeypatch.setattr(hygiene.shutil, "which", lambda name, *a, **k:
                            None if name == "prlimit" else real_which(name, *a, **k))
    elif hygiene.shutil.which("prlimit", path=hygiene.TRUSTED_PATH) is None:
        pytest.skip("prlimit (util-linux) is not installed")
    return request.param


def test_resource_limits_reach_the_command(tmp_path, limit_setter):
    limits = ResourceLimits(cpu_seconds=7, file_bytes=4096, memory_bytes=512 * 1024 * 1024,
                            open_files=40)
    rows = limits_seen(tmp_path, limits)
    assert rows["Max cpu time"] == "7"
    assert rows["Max file size"] == "4096"
    assert rows["Max address space"] == str(512 * 1024 * 1024)
    assert rows["Max open files"] == "40"
    assert rows["Max core file size"] == "0"


def test_file_size_limit_stops_large_writes(tmp_path, limit_setter):
    limits = ResourceLimits(file_bytes=1000)
    result = hygienic(f"head -c 5000 /dev/zero > {tmp_path}/big; echo $?", tmp_path, limits=limits)
    assert os.path.getsize(tmp_path / "big") == 1000
    assert result.output.strip() != "0"  # the writer was stopped (SIGXFSZ)


def test_a_missing_program_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        run_with_hygiene(["/no/such/program"], tmp_path, timeout=1.0, max_output_bytes=100)
