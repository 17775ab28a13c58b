"""Layer 2: per-command option rules, and every path resolved and kept inside the workspace;
gawk-only escapes and every spelling of tail's follow mode refused; hard links to the outside."""
import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from solutions.sandbox import (RULES, Refusal, check_arguments, check_awk_program, outside_links,
                               resolve_inside)
from solutions.sandbox.parse import parse_command
from lesson_support.sandbox_attacks import LEGIT_COMMANDS

AWKS = [path for path in ("/usr/bin/mawk", "/usr/bin/gawk", "/usr/bin/original-awk")
        if os.path.exists(path)]


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
    from lesson_support.sandbox_attacks import SAMPLE_WORKSPACE
    argv = parse_command(legit.command)
    checked = check_arguments(argv, SAMPLE_WORKSPACE)
    forced = RULES[argv[0]].forced if argv[0] in RULES else ()
    assert checked == [argv[0], *forced, *argv[1:]]


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
    # gawk's own options (mawk has none of them): program text or files the check cannot see
    ("awk -l readfile {print}", "loads a compiled extension"),
    ("awk --load=readfile {print}", "loads a compiled extension"),
    ("awk --lo readfile {print}", "short for --load"),
    ("awk -i inc.awk {print}", "includes a program file"),
    ("awk --include=inc.awk {print}", "includes a program file"),
    ("awk -e {print} a.txt", "adds program text"),
    ("awk --source={print} a.txt", "adds program text"),
    ("awk -E prog.awk a.txt", "runs a program file"),
    ("awk --exec=prog.awk a.txt", "runs a program file"),
    ("awk -d out {print}", "writes a file"),
    ("awk --dump-variables=out {print}", "writes a file"),
    ("awk -p out {print}", "writes a file"),
    ("awk --profile=out {print}", "writes a file"),
    ("awk -o out {print}", "writes a file"),
    ("awk --pretty-print=out {print}", "writes a file"),
    ("awk -D {print}", "debugger"),
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


# -- gawk-only escapes (issue 14, finding 6) -------------------------------------------------------

@pytest.mark.parametrize("program", [
    'BEGIN { f = "sys" "tem"; @f("id") }',            # the reproduction
    'BEGIN { f = "system"; @ f("id") }',               # gawk allows a space after @
    'BEGIN { f = "system"; @\\\nf("id") }',          # and a continued line
    '@include "/etc/passwd"',                          # reads another file as program text
    '@include "inc"\n{ print }',
    '@load "readfile"; BEGIN { printf "%s", readfile("/etc/passwd") }',
    '@namespace "x"; BEGIN { print 1 }',
    'BEGIN { x = "@"; print x }',                      # strict: no @ at all (write "\\100")
])
def test_gawk_only_escapes_are_refused_whatever_awk_is_installed(program):
    with pytest.raises(Refusal, match="'@' starts gawk's indirect function calls"):
        check_awk_program(program)


@pytest.mark.skipif(not AWKS, reason="no awk program found")
@pytest.mark.parametrize("awk", AWKS)
def test_a_literal_at_sign_is_still_matched_with_an_escape(tmp_path, awk):
    program = '$0 ~ "\\100" { print $1 }'
    check_awk_program(program)
    (tmp_path / "mails.txt").write_text("ada at example.org\nbob@example.org x\n")
    done = subprocess.run([awk, program, "mails.txt"], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout == "bob@example.org\n"


@pytest.mark.skipif("/usr/bin/gawk" not in AWKS, reason="gawk is not installed")
def test_the_refused_indirect_call_really_runs_a_command_under_gawk(tmp_path):
    """Why the rule exists: under gawk the program runs id with no 'system(' in its text."""
    done = subprocess.run(["/usr/bin/gawk", 'BEGIN { f = "sys" "tem"; @f("echo ran") }'],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout == "ran\n"


# -- tail's follow modes in every spelling (finding 7) --------------------------------------------

@pytest.mark.parametrize("command, why", [
    ("tail -f a.txt", "never ends"), ("tail -F a.txt", "never ends"),
    ("tail --follow a.txt", "never ends"), ("tail --follow=name a.txt", "never ends"),
    ("tail --follow=descriptor a.txt", "never ends"), ("tail --fo a.txt", "short for --follow"),
    ("tail --retry a.txt", "keeps trying"), ("tail -qf a.txt", "never ends"),
    ("tail -n 3 -f a.txt", "never ends"), ("tail -fn3 a.txt", "never ends"),
    ("tail a.txt -f", "never ends"), ("tail -s 1 a.txt", "followed file"),
    ("tail --pid=1 a.txt", "until a process ends"), ("tail --sleep-interval=1 a.txt", "followed"),
    ("tail -1f a.txt", "never ends"), ("tail -10f a.txt", "never ends"),
    ("tail -3 a.txt", "old spelling of tail -n 3"),
    ("tail +1f a.txt", "old spelling of tail -f"), ("tail +f a.txt", "old spelling of tail -f"),
    ("tail +5lf a.txt", "old spelling of tail -f"), ("tail +10cf a.txt", "old spelling of tail -f"),
    ("tail +1f -- a.txt", "old spelling of tail -f"), ("tail -- +1f a.txt", "old spelling"),
    ("tail +2 a.txt", "old-style option"), ("tail +x a.txt", "name a file that starts with +"),
])
def test_every_spelling_of_tails_follow_mode_is_refused(layout, command, why):
    with pytest.raises(Refusal) as caught:
        check_arguments(command.split(), layout)
    assert why in str(caught.value) and "\n" not in str(caught.value)


def test_tail_starts_with_its_own_default_so_no_first_argument_is_an_option(layout):
    assert check_arguments(["tail", "-n", "3", "a.txt"], layout) == \
        ["tail", "-n", "10", "-n", "3", "a.txt"]
    assert check_arguments(["tail", "-c", "+2", "./+1f"], layout)[:3] == ["tail", "-n", "10"]


TAIL = shutil.which("tail")


@pytest.mark.skipif(TAIL is None, reason="no tail program")
@pytest.mark.parametrize("old_style", ["+1f", "+f", "+5lf", "+1f --"])
def test_with_the_default_first_an_old_style_follow_is_only_a_missing_file(tmp_path, old_style):
    """Even a check that forgot the refusal (a student's, say) is safe from the forms that look
    like file names, thanks to the forced -n 10. (-1f looks like an option, and the allow-list
    refuses it: digits are not on it.)"""
    (tmp_path / "a.txt").write_text("1\n2\n")
    done = subprocess.run([TAIL, *RULES["tail"].forced, *old_style.split(), "a.txt"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and "2\n" in done.stdout


@pytest.mark.skipif(TAIL is None, reason="no tail program")
@settings(max_examples=40)
@given(options=st.lists(st.sampled_from([["-n", "3"], ["-n", "+2"], ["-c", "5"], ["-c", "+4"],
                                         ["-q"], ["-v"], ["-n3"], ["--lines=1"], ["--bytes=2"]]),
                        max_size=3),
       files=st.lists(st.sampled_from(["a.txt", "b.txt"]), min_size=1, max_size=2))
def test_the_forced_default_never_changes_what_tail_prints(tmp_path_factory, options, files):
    folder = tmp_path_factory.mktemp("tail")
    (folder / "a.txt").write_text("".join(f"line {i}\n" for i in range(30)))
    (folder / "b.txt").write_text("short\nfile\n")
    argv = [a for option in options for a in option] + files

    def run(prefix):
        return subprocess.run([TAIL, *prefix, *argv], cwd=folder, capture_output=True,
                              timeout=10, stdin=subprocess.DEVNULL).stdout

    assert run(list(RULES["tail"].forced)) == run([])


# -- hard links to files outside the workspace (finding 8) ----------------------------------------

def test_a_hard_link_to_a_file_outside_is_found(layout):
    os.link(layout.parent / "outside" / "secret.txt", layout / "sub" / "copy.txt")
    assert outside_links(layout) == [os.path.join("sub", "copy.txt")]
    # realpath cannot see it: the path check says it is inside
    assert resolve_inside("sub/copy.txt", layout) == os.path.realpath(layout / "sub" / "copy.txt")


def test_hard_links_within_the_workspace_and_symbolic_links_are_not_reported(layout):
    os.link(layout / "a.txt", layout / "sub" / "a-again.txt")
    assert outside_links(layout) == []  # link_out, a symbolic link, is layer 2's other check
    os.link(layout / "a.txt", layout.parent / "outside" / "a-elsewhere.txt")
    found = outside_links(layout)  # one name per file is enough to refuse
    assert len(found) == 1 and found[0] in ("a.txt", os.path.join("sub", "a-again.txt"))


def test_the_census_is_kept_until_a_folder_changes(layout, monkeypatch):
    from solutions.sandbox import links
    # (folders changed in the last seconds are not trusted; here, trust them all)
    monkeypatch.setattr(links, "RECENT_NS", -10**18)
    links.refuse_outside_links(layout)
    walks = []
    real = links._census
    monkeypatch.setattr(links, "_census", lambda root: walks.append(root) or real(root))
    links.refuse_outside_links(layout)
    assert walks == []  # nothing changed: no walk
    os.link(layout.parent / "outside" / "secret.txt", layout / "sub" / "copy.txt")
    with pytest.raises(Refusal, match="hard link"):
        links.refuse_outside_links(layout)
    assert len(walks) == 1  # the folder that changed made it walk again


def test_a_folder_changed_moments_ago_is_walked_every_time(layout, monkeypatch):
    from solutions.sandbox import links
    walks = []
    real = links._census
    monkeypatch.setattr(links, "_census", lambda root: walks.append(root) or real(root))
    links.refuse_outside_links(layout)
    links.refuse_outside_links(layout)
    assert len(walks) == 2
