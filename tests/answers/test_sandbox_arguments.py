"""Layer 2: per-command option rules, and every path resolved and kept inside the workspace."""
import os

import pytest

from solutions.sandbox import Refusal, check_arguments, check_awk_program, resolve_inside
from solutions.sandbox.parse import parse_command
from lesson_support.redteam import LEGIT_COMMANDS


@pytest.fixture
def layout(tmp_path):
    """tmp/workspace (with a file, a subdir and links) next to tmp/outside/secret.txt."""
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    (workspace / "sub").mkdir(parents=True)
    outside.mkdir()
    (workspace / "a.txt").write_text("a\n")
    (outside / "secret.txt").write_text("s\n")
    (workspace / "link_out").symlink_to(outside / "secret.txt")
    (workspace / "dir_out").symlink_to(outside, target_is_directory=True)
    (workspace / "link_in").symlink_to(workspace / "a.txt")
    (workspace / "dangling_out").symlink_to(tmp_path / "nowhere" / "x")
    return workspace


@pytest.mark.parametrize("path", ["a.txt", ".", "sub", "sub/../a.txt", "link_in", "missing.txt",
                                  "sub/new/deeper", ""])
def test_paths_inside_are_accepted(layout, path):
    resolved = resolve_inside(path, layout)
    root = os.path.realpath(layout)
    assert resolved == root or resolved.startswith(root + os.sep)


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "sub/../../outside",
                                  "/etc/passwd", "/", "link_out", "dir_out/secret.txt", "dir_out",
                                  "dangling_out", "/proc/self/environ"])
def test_paths_leading_outside_are_refused(layout, path):
    with pytest.raises(Refusal, match="outside the workspace"):
        resolve_inside(path, layout)


def test_a_sibling_with_a_common_prefix_is_outside(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "workshop").mkdir()
    with pytest.raises(Refusal):
        resolve_inside("../workshop", tmp_path / "work")


def test_relative_paths_start_from_the_current_directory(layout):
    assert resolve_inside("../a.txt", layout, layout / "sub") == os.path.realpath(layout / "a.txt")
    with pytest.raises(Refusal):
        resolve_inside("../../outside", layout, layout / "sub")


@pytest.mark.parametrize("legit", LEGIT_COMMANDS, ids=lambda legit: legit.name)
def test_every_legitimate_command_passes(legit):
    from lesson_support.redteam import SAMPLE_WORKSPACE
    argv = parse_command(legit.command)
    checked = check_arguments(argv, SAMPLE_WORKSPACE)
    assert checked[0] == argv[0] and [a for a in checked if a != "--sandbox"] == argv


@pytest.mark.parametrize("command, why", [
    ("find . -exec cat x ;", "runs another program"),
    ("find . -execdir cat x ;", "runs another program"),
    ("find . -ok cat x ;", "runs another program"),
    ("find . -name x -delete", "deletes files"),
    ("find . -fprint out", "writes a file"),
    ("find . -fprintf out %p", "writes a file"),
    ("find -L . -name x", "follows symbolic links"),
    ("find . -follow", "follows symbolic links"),
    ("sed -i s/a/b/ a.txt", "edits files in place"),
    ("sed --in-place s/a/b/ a.txt", "edits files in place"),
    ("sort -o out a.txt", "writes its output to a file"),
    ("sort --output=out a.txt", "writes its output to a file"),
    ("sort --compress-program=sh a.txt", "runs another program"),
    ("grep -R x .", "follows symbolic links"),
    ("tail -f a.txt", "never ends"),
    ("awk -f prog.awk a.txt", "program file"),
    ("awk -W exec prog.awk", "implementation options"),
])
def test_options_that_run_write_or_escape_are_refused_with_a_reason(layout, command, why):
    with pytest.raises(Refusal) as caught:
        check_arguments(command.split(), layout)
    assert why in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("command", [
    "sed -ni s/a/b/ a.txt",        # -i hidden in a cluster
    "sed -i.bak s/a/b/ a.txt",
    "sed --in-pl s/a/b/ a.txt",    # GNU accepts abbreviations; the allow-list does not
    "sort -uo out a.txt",
    "head -5 a.txt",               # obsolete syntax: not on the list, refused rather than guessed
    "ls -L dir_out",
    "wc --files0-from=list",
    "grep --devices=read x a.txt",
    "cat --bogus a.txt",
    "pwd extra",
    "find . -newerXY a.txt",
    "find . -name",                # a primary without its value
    "head -n",                     # an option without its value
])
def test_anything_not_on_the_allow_list_is_refused(layout, command):
    with pytest.raises(Refusal):
        check_arguments(command.split(), layout)


@pytest.mark.parametrize("command", [
    "cat ../outside/secret.txt", "head -n 3 link_out", "grep -r x dir_out",
    "grep -f link_out a.txt",
    "grep --file=../outside/secret.txt a.txt", "sed -f ../outside/x a.txt",
    "find .. -name x", "find . -newer ../outside/secret.txt", "wc -l /etc/passwd",
    "awk '{print}' /etc/passwd", "sort a.txt /etc/passwd", "cut -f1 -- ../outside/secret.txt",
    "ls -la ..", "tail -n1 dangling_out",
])
def test_paths_in_operands_and_option_values_are_checked(layout, command):
    with pytest.raises(Refusal, match="outside the workspace"):
        check_arguments(parse_command(command), layout)


def test_uniq_may_not_name_an_output_file(layout):
    assert check_arguments(["uniq", "-c", "a.txt"], layout) == ["uniq", "-c", "a.txt"]
    with pytest.raises(Refusal, match="output file"):
        check_arguments(["uniq", "a.txt", "b.txt"], layout)


def test_sed_always_runs_in_its_sandbox_mode(layout):
    assert check_arguments(["sed", "-n", "1p", "a.txt"], layout) == \
        ["sed", "--sandbox", "-n", "1p", "a.txt"]


def test_the_first_operand_of_grep_sed_awk_is_not_a_path(layout):
    # '/etc/passwd' as a grep pattern or sed script is text, not a file to open
    assert check_arguments(["grep", "/etc/passwd", "a.txt"], layout)
    assert check_arguments(["sed", "-n", "/etc/p", "a.txt"], layout)
    # ...but once -e gives the pattern, every operand is a path
    with pytest.raises(Refusal):
        check_arguments(["grep", "-e", "x", "/etc/passwd"], layout)


def test_options_after_operands_are_still_checked(layout):
    with pytest.raises(Refusal):
        check_arguments(["sort", "a.txt", "-o", "out"], layout)
    assert check_arguments(["sort", "a.txt", "--", "-o"], layout)  # after --, -o is a file name


def test_programs_without_rules_are_refused(layout):
    with pytest.raises(Refusal, match="no argument rules"):
        check_arguments(["python3", "-c", "1"], layout)
    with pytest.raises(Refusal, match="empty"):
        check_arguments([], layout)


def test_echo_takes_any_text(layout):
    assert check_arguments(["echo", "-e", "/etc/passwd", ".."], layout) == \
        ["echo", "-e", "/etc/passwd", ".."]


@pytest.mark.parametrize("program, why", [
    ('BEGIN { system("id") }', "system()"),
    ("BEGIN { system ( \"id\" ) }", "system()"),
    ('BEGIN { while ((getline l < "/etc/passwd") > 0) print l }', "getline"),
    ('{ print | "sh" }', "pipes"),
    ('BEGIN { "id" | getline x }', "getline"),
    ('{ print > "out" }', "writes to a file"),
    ('{ print $1 >> "out" }', "writes to a file"),
    ('{ printf "%s", $1 > "out" }', "writes to a file"),
    ('BEGIN { ARGV[1] = "/etc/passwd"; ARGC = 2 } { print }', "ARGV and ARGC"),
    ('BEGIN { split("/etc/passwd", ARGV) } { print }', "ARGV and ARGC"),
    # a statement continued on the next line, with a backslash or after a comma
    ('BEGIN { print "x" \\\n > "out" }', "writes to a file"),
    ('BEGIN { print "x",\n "y" > "out" }', "writes to a file"),
    ('BEGIN { system \\\n ("id") }', "system()"),
])
def test_awk_programs_that_run_or_write_are_refused(program, why):
    with pytest.raises(Refusal) as caught:
        check_awk_program(program)
    assert why in str(caught.value)


@pytest.mark.parametrize("program", [
    "{ print $1 }", "$4 > 500 { print $1 }", "NR > 1 && $3 == \"x\" || $2 == \"y\"",
    "{ if ($4 > 100) print $1 }", "{ n[$5]++ } END { for (s in n) print n[s], s }",
    'BEGIN { print ENVIRON["HOME"] }',  # ENVIRON is layer 3's business
])
def test_ordinary_awk_programs_pass(program):
    check_awk_program(program)
