"""HardenedTerminalTool: composition of the layers, replies, cd, and fuzzing for crashes."""
import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from lesson_support.specimens.naive_terminal import TerminalTool
from solutions.sandbox import LAYERS, HardenedTerminalTool, bubblewrap_problem, parse_command
from solutions.sandbox.hardened import ALLOWED_COMMANDS
from lesson_support.sandbox_attacks import SAMPLE_WORKSPACE

USABLE_LAYERS = LAYERS if bubblewrap_problem() is None else LAYERS[:3]
NO_BOX = ("parse", "arguments", "hygiene")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    target = tmp_path_factory.mktemp("tool") / "workspace"
    shutil.copytree(SAMPLE_WORKSPACE, target)
    return target


def one_line_refusal(reply):
    return reply.startswith("Refused: ") and "\n" not in reply


@pytest.mark.parametrize("layers, error", [
    (("parse", "shell"), "unknown layer"),
    (("arguments",), "needs the 'parse' layer"),
    (("hygiene", "arguments"), "needs the 'parse' layer"),
])
def test_bad_layer_choices_are_explained(workspace, layers, error):
    with pytest.raises(ValueError, match=error):
        HardenedTerminalTool(workspace, layers)


def test_bad_settings_are_explained(workspace, tmp_path):
    with pytest.raises(ValueError, match="not a directory"):
        HardenedTerminalTool(tmp_path / "missing")
    with pytest.raises(ValueError, match="positive"):
        HardenedTerminalTool(workspace, timeout=0)


def test_layers_are_kept_in_their_order(workspace):
    assert HardenedTerminalTool(workspace, ("hygiene", "parse")).layers == ("parse", "hygiene")


def test_success_is_the_output_itself(workspace):
    tool = HardenedTerminalTool(workspace, USABLE_LAYERS)
    assert tool.run("head -n 1 README.md") == "# inventory-service\n"
    assert tool.run("grep -c ERROR logs/app.log") == "22\n"
    result = tool.execute("wc -l data/orders.csv")
    assert result.ok and result.output == "61 data/orders.csv\n"


def test_failures_and_stops_carry_one_note_line(workspace):
    tool = HardenedTerminalTool(workspace, NO_BOX, max_output_bytes=100, timeout=1.0)
    assert tool.run("grep -c nothing-like-this README.md") == "0\n[exit status 1]"
    reply = tool.run("cat logs/app.log")
    body, note = reply.rsplit("\n", 1)
    assert len(body) == 100 and note.startswith("[output stopped at 100 bytes")
    assert tool.run("grep -q x") == "[exit status 1]"  # no file: reads the closed stdin, ends


def test_a_timeout_is_reported(workspace):
    tool = HardenedTerminalTool(workspace, ("hygiene",), timeout=0.3)
    reply = tool.run("find . -maxdepth 0 -exec sleep 5 \\;")  # through /bin/sh
    assert reply == "[stopped after 0.3 s: the command took too long]"


def test_empty_output_is_said(workspace):
    assert HardenedTerminalTool(workspace, NO_BOX).run("grep -l nothing-like-this README.md") \
        == "[exit status 1]"
    assert HardenedTerminalTool(workspace, NO_BOX).run("find . -name nothing") == "(no output)"


def test_whitelist_and_locating_programs(workspace, tmp_path):
    tool = HardenedTerminalTool(workspace, NO_BOX)
    reply = tool.run("python3 -c 1")
    assert one_line_refusal(reply) and "not an allowed command" in reply
    # a planted 'ls' early in the inherited PATH is never used: programs come from /usr/bin:/bin
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "ls").write_text("#!/bin/sh\necho planted\n")
    (fake_bin / "ls").chmod(0o755)
    parse_only = HardenedTerminalTool(workspace, ("parse",),
                                      inherited_env={"PATH": f"{fake_bin}:/usr/bin:/bin"})
    assert "planted" not in parse_only.run("ls")


def test_cd_stays_inside_and_moves_relative_paths(workspace):
    tool = HardenedTerminalTool(workspace, NO_BOX)
    assert tool.run("cd src/inventory") == "now in src/inventory"
    assert "pricing.py" in tool.run("ls")
    assert tool.run("head -n 1 ../../README.md") == "# inventory-service\n"
    assert one_line_refusal(tool.run("cd ../../.."))
    assert one_line_refusal(tool.run("cd pricing.py"))
    assert one_line_refusal(tool.run("cd a b"))
    assert tool.run("cd") == "now in the workspace root"


def test_without_parse_the_shell_runs_and_only_the_first_word_is_checked(workspace):
    tool = HardenedTerminalTool(workspace, ("hygiene",))
    assert tool.run("echo a; echo b") == "a\nb\n"
    assert one_line_refusal(tool.run("python3 -c 1"))
    assert one_line_refusal(tool.run("echo 'unbalanced"))


def test_layer_functions_can_be_replaced(workspace):
    calls = []

    def my_parse(command):
        calls.append(command)
        return parse_command(command)

    def broken_check(argv, workspace, cwd):
        raise KeyError("forgot something")

    assert HardenedTerminalTool(workspace, ("parse",), parse=my_parse).run("echo hi") == "hi\n"
    assert calls == ["echo hi"]
    reply = HardenedTerminalTool(workspace, ("parse", "arguments"), check=broken_check).run("ls")
    assert one_line_refusal(reply) and "internal error" in reply and "KeyError" in reply


def test_the_naive_tool_for_contrast(workspace):
    naive = TerminalTool(workspace, timeout=5)
    assert naive.run("head -n 1 README.md") == "# inventory-service\n"
    assert naive.run("ls .; echo chained").endswith("chained\n")  # the whitelist saw 'ls'
    assert naive.run("ls; echo chained").startswith("Command not allowed: ls;")  # first *word*
    assert naive.run("rm x").startswith("Command not allowed: rm")
    assert naive.run("cd ..").startswith("Access outside the workspace is not allowed")


# -- fuzzing: no input crashes the hardened tool -------------------------------------------------

FUZZ = settings(max_examples=60, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
WORD = st.one_of(st.text(max_size=12), st.sampled_from(
    ["-n", "-r", "-exec", "--", "..", "/etc/passwd", "'", '"', "\\", "$(id)", "*", "~",
     "README.md", "logs", "-c", "{}", ";", "|", "&&", ">", "-i", "-o", "--sandbox"]))
COMMANDS = st.one_of(
    st.text(max_size=200),
    st.builds(lambda program, words: " ".join([program, *words]),
              st.sampled_from(sorted(ALLOWED_COMMANDS)), st.lists(WORD, max_size=5)),
    st.builds(lambda n, quote: "grep " + quote + "x" * n, st.integers(0, 20000),
              st.sampled_from(["'", '"', ""])),
    st.binary(max_size=100).map(lambda raw: raw.decode("utf-8", "surrogateescape")),
)


@FUZZ
@given(COMMANDS)
def test_fuzz_the_hardened_tool_never_crashes(workspace, command):
    tool = HardenedTerminalTool(workspace, USABLE_LAYERS, timeout=2.0)
    reply = tool.run(command)
    assert isinstance(reply, str)
    if reply.startswith("Refused:"):
        assert "\n" not in reply
    assert "internal error" not in reply


@pytest.mark.parametrize("value", [None, 3, b"ls", ["ls"], "x" * 1_000_000, "\x00", "ls\ud800"])
def test_non_text_and_huge_inputs_are_refused(workspace, value):
    reply = HardenedTerminalTool(workspace, USABLE_LAYERS).run(value)
    assert one_line_refusal(reply)


def test_workspace_is_untouched_after_fuzzing(workspace):
    # the fuzz above ran with the workspace read-only (or without writing programs)
    assert not [name for name in os.listdir(workspace)
                if not (SAMPLE_WORKSPACE / name).exists()]


# -- the doors found since (issue 14, findings 6-8), through the whole tool ------------------------

def test_a_hard_link_to_a_file_outside_is_refused_whatever_the_command(tmp_path):
    workspace = tmp_path / "workspace"
    shutil.copytree(SAMPLE_WORKSPACE, workspace)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET hard-linked\n")
    os.link(secret, workspace / "logs" / "notes-copy.txt")
    for layers in (NO_BOX, USABLE_LAYERS):
        tool = HardenedTerminalTool(workspace, layers)
        for command in ("cat logs/notes-copy.txt", "grep -r TOP-SECRET .", "grep -r TOP-SECRET",
                        "head -n 1 README.md"):
            reply = tool.run(command)
            assert one_line_refusal(reply) and "hard link" in reply, (layers, command, reply)
            assert "TOP-SECRET hard-linked" not in reply
    (workspace / "logs" / "notes-copy.txt").unlink()
    os.link(workspace / "README.md", workspace / "docs" / "README-again.md")  # inside: fine
    assert HardenedTerminalTool(workspace, NO_BOX).run("head -n 1 docs/README-again.md") == \
        "# inventory-service\n"


@pytest.mark.parametrize("command", [
    "awk 'BEGIN { f = \"sys\" \"tem\"; @f(\"id\") }'",
    "awk '@include \"README.md\"'",
    "tail +1f logs/app.log", "tail -f logs/app.log", "tail --follow=name logs/app.log",
])
def test_gawk_escapes_and_follow_modes_are_refused_at_once(workspace, command):
    tool = HardenedTerminalTool(workspace, USABLE_LAYERS, timeout=5.0)
    result = tool.execute(command)
    assert result.refusal is not None and "\n" not in result.refusal and not result.timed_out
