"""Honest truncation and offloading (solutions/truncation.py)."""
import os
import re

import pytest
from hypothesis import given, settings, strategies as st

from solutions.truncation import (DEFAULT_MAX_LINE_CHARS, Workspace, offload, shorten,
                                  split_budget, tool_result, truncate)

SEED_LOG = "\n".join(f"-- line {i}" for i in range(1, 301)) + "\nCMake Error: Could NOT find ZLIB"
READ_CALL = re.compile(r'read_file\(path="([^"]+)", offset=(\d+), limit=(\d+)\)')
SPAN = re.compile(r"lines (\d+)-(\d+) of ([\d,]+) omitted \(([\d,]+) lines")


def numbers(text):
    return [int(n.replace(",", "")) for n in SPAN.search(text).groups()]


def test_seed_shorten_keeps_5_and_15_and_says_281_hidden():
    out = shorten(SEED_LOG).splitlines()
    assert len(SEED_LOG.splitlines()) == 301
    assert out[:5] == [f"-- line {i}" for i in range(1, 6)]
    assert out[5] == "...[281 lines omitted]..."
    assert len(out) == 5 + 1 + 15
    assert out[-1] == "CMake Error: Could NOT find ZLIB"


def test_shorten_leaves_short_text_alone_and_handles_no_tail():
    assert shorten("a\nb", 5, 15) == "a\nb"
    assert shorten("\n".join("abcdef"), head=2, tail=0).splitlines() == ["a", "b", "...[4 lines omitted]..."]


@pytest.mark.parametrize("kind, head, tail", [("log", 5, 55), ("file", 60, 0), ("search", 60, 0),
                                             ("text", 30, 30)])
def test_budget_per_kind(kind, head, tail):
    assert split_budget(kind, 60) == (head, tail)


def test_bad_kind_and_budget_are_refused_clearly():
    with pytest.raises(ValueError, match="unknown content kind 'binary'"):
        truncate("x", kind="binary")
    with pytest.raises(ValueError, match="max_lines must be at least 1"):
        truncate("x", max_lines=0)


def test_log_keeps_the_end_and_counts_what_it_hid():
    out = truncate(SEED_LOG, "log", max_lines=20)
    lines = out.splitlines()
    assert lines[-1] == "CMake Error: Could NOT find ZLIB"
    first, last, total, hidden = numbers(out)
    head, tail = split_budget("log", 20)
    assert (first, last, total, hidden) == (head + 1, 301 - tail, 301, 301 - head - tail)
    assert "the full text was not kept" in out  # no pointer promised when there is no copy


def test_file_keeps_the_start_and_points_to_the_next_page():
    text = "\n".join(f"line {i}" for i in range(1, 501))
    out = truncate(text, "file", max_lines=100, full_path="src/big.c")
    lines = out.splitlines()
    assert lines[:100] == [f"line {i}" for i in range(1, 101)]
    assert READ_CALL.search(lines[-1]).groups() == ("src/big.c", "101", "200")


def test_text_that_fits_is_returned_unchanged():
    assert truncate("one\ntwo\n", "log", max_lines=5) == "one\ntwo\n"


def test_an_overlong_line_is_cut_with_a_count():
    line = "x" * (DEFAULT_MAX_LINE_CHARS + 1234)
    out = truncate(line, "text", max_lines=5, full_path="out.json")
    assert "[+1,234 characters on this line]" in out
    assert "long lines were cut; full text: out.json" in out
    assert truncate(line, "text").endswith("...[long lines were cut; the full text was not kept]...")


# ------------------------------------------------------------------- the workspace read tool


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


def test_read_file_pages_and_says_where_to_continue(ws):
    (ws.root / "f.txt").write_text("\n".join(f"l{i}" for i in range(1, 11)))
    page = ws.read_file("f.txt", offset=3, limit=4).splitlines()
    assert page[1:] == ["l3", "l4", "l5", "l6"]
    assert READ_CALL.search(page[0]).groups() == ("f.txt", "7", "4")
    last = ws.read_file("f.txt", offset=9, limit=4).splitlines()
    assert last[1:] == ["l9", "l10"] and "next" not in last[0]


def test_read_file_refuses_paths_outside_the_workspace(ws, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    (ws.root / "link").symlink_to(secret)
    for path in (str(secret), "../secret.txt", "link", "/etc/passwd"):
        with pytest.raises(PermissionError, match="outside the workspace"):
            ws.read_file(path)


def test_read_file_errors_are_clear(ws):
    (ws.root / "empty.txt").write_text("")
    (ws.root / "two.txt").write_text("a\nb")
    assert ws.read_file("empty.txt") == "[empty.txt: empty file]"
    with pytest.raises(FileNotFoundError, match="not a file"):
        ws.read_file("missing.txt")
    with pytest.raises(ValueError, match="offset 5 is past the end"):
        ws.read_file("two.txt", offset=5)
    with pytest.raises(ValueError, match="offset and limit must be at least 1"):
        ws.read_file("two.txt", offset=0)


def test_workspace_must_exist(tmp_path):
    with pytest.raises(NotADirectoryError):
        Workspace(tmp_path / "nope")


# ------------------------------------------------------------------- offloading


def test_the_trap_a_path_in_tmp_cannot_be_read(ws, tmp_path):
    """The study guide's trap: the full log saved outside the workspace is a useless pointer."""
    outside = tmp_path / "cmd-1.log"
    outside.write_text(SEED_LOG)
    with pytest.raises(PermissionError):
        ws.read_file(str(outside))
    with pytest.raises(ValueError, match="read_file could not open it"):
        offload(SEED_LOG, ws, directory=str(tmp_path / "logs"))
    assert not (tmp_path / "logs").exists()


def test_offload_writes_inside_the_workspace_with_stable_names(ws):
    first = offload("one", ws)
    second = offload("two", ws)
    assert (first, second) == (".agent/outputs/output-0001.log", ".agent/outputs/output-0002.log")
    assert ws.read_file(second).splitlines()[1] == "two"
    assert not any(name.endswith(".partial") for name in os.listdir(ws.root / ".agent/outputs"))


def test_tool_result_offloads_and_the_suggested_read_returns_exactly_the_hidden_lines(ws):
    out = tool_result(SEED_LOG, "log", exit_code=1, workspace=ws, max_lines=20)
    lines = out.splitlines()
    assert lines[0] == "[exit code: 1]"
    assert lines[-1] == "CMake Error: Could NOT find ZLIB"
    path, offset, limit = READ_CALL.search(out).groups()
    first, last, total, hidden = numbers(out)
    assert path.startswith(".agent/outputs/") and int(offset) == first
    page = ws.read_file(path, int(offset), hidden).splitlines()[1:]
    assert page == SEED_LOG.splitlines()[first - 1:last]
    assert ws.resolve(path).read_text() == SEED_LOG  # the copy is complete


def test_tool_result_without_a_workspace_is_honest_about_losing_text():
    out = tool_result(SEED_LOG, "log", exit_code=2, max_lines=20)
    assert out.splitlines()[0] == "[exit code: 2]"
    assert "the full text was not kept" in out


def test_tool_result_points_at_an_existing_file_instead_of_copying(ws):
    text = "\n".join(f"row {i}" for i in range(300))
    out = tool_result(text, "file", workspace=ws, full_path="data.csv", max_lines=50)
    assert "full text: data.csv" in out
    assert not (ws.root / ".agent").exists()


def test_small_output_passes_through_with_its_exit_code(ws):
    assert tool_result("ok", exit_code=0, workspace=ws) == "[exit code: 0]\nok"
    assert not (ws.root / ".agent").exists()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(lines=st.lists(st.text(alphabet="abc xyz:-", max_size=30), max_size=120),
       exit_code=st.integers(-9, 255), max_lines=st.integers(1, 40),
       kind=st.sampled_from(["log", "file", "search", "text"]))
def test_exit_code_line_is_never_cut_and_counts_add_up(lines, exit_code, max_lines, kind):
    output = "\n".join(lines)
    out = tool_result(output, kind, exit_code, max_lines=max_lines)
    assert out.splitlines()[0] == f"[exit code: {exit_code}]"
    total = len(output.splitlines())
    if total > max_lines:
        first, last, reported_total, hidden = numbers(out)
        head, tail = split_budget(kind, max_lines)
        assert reported_total == total and hidden == last - first + 1 == total - head - tail
        kept = out.split("\n")[1:]  # not splitlines: a kept last line may be empty
        assert kept[:head] == output.splitlines()[:head]
        if tail:
            assert kept[-tail:] == output.splitlines()[-tail:]
    else:
        assert out == f"[exit code: {exit_code}]\n{output}"


def test_search_results_keep_the_top_ones_and_count_the_rest():
    hits = "\n".join(f"src/m{i:03d}.c:{i}: ZLIB_LIBRARY" for i in range(1, 241))
    out = truncate(hits, kind="search", max_lines=10, full_path=".agent/outputs/search.txt")
    lines = out.splitlines()
    assert lines[:10] == hits.splitlines()[:10]  # the best-ranked results, in their order
    assert len(lines) == 11
    assert "lines 11-240 of 240 omitted (230 lines" in lines[10]
    assert "narrower query" in lines[10]
    assert 'read_file(path=".agent/outputs/search.txt", offset=11, limit=200)' in lines[10]
