"""Issue 25, item 8: identifiers of every shape are found whole, and a text shortened for a
summary keeps each identifier whole or leaves it out whole."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.identifiers import cut_whole, identifiers
from course.llm.summary import summarise

LONG_PATH = "/srv/builds/" + "/".join(f"stage-{n:02d}-artifacts" for n in range(8)) + "/libledger.so"


@pytest.mark.parametrize("text, whole", [
    ("connecting to postgres://u@h:5432/db now", "postgres://u@h:5432/db"),
    ("error: connection refused: pg://ledger-checkpoints (read-only)", "pg://ledger-checkpoints"),
    ("uploaded to s3://bucket/key/2025/report.csv.", "s3://bucket/key/2025/report.csv"),
    ("cache at redis://h:6379/0, then", "redis://h:6379/0"),
    ('dsn="mongodb+srv://app:pw@cluster0.example.net/orders?retryWrites=true&w=majority"',
     "mongodb+srv://app:pw@cluster0.example.net/orders?retryWrites=true&w=majority"),
    ("cloned git+ssh://git@example.com/team/repo.git", "git+ssh://git@example.com/team/repo.git"),
    ("read file:///etc/hosts first", "file:///etc/hosts"),
    ("GET https://api.example.com/v2/items?page=3&sort=-created&q=a%20b#top failed",
     "https://api.example.com/v2/items?page=3&sort=-created&q=a%20b#top"),
    ("see https://en.wikipedia.org/wiki/Fork_(system_call).", "https://en.wikipedia.org/wiki/Fork_(system_call)"),
    ("(see https://example.com/docs/setup)", "https://example.com/docs/setup"),
    (f"wrote {LONG_PATH} ok", LONG_PATH),
    ("request 3fa85f64-5717-4562-b3fc-2c963f66afa6 failed", "3fa85f64-5717-4562-b3fc-2c963f66afa6"),
    ("primary at db.internal.example:5432.", "db.internal.example:5432"),
    ("the service db-primary:5432 refused", "db-primary:5432"),
    ("listening on localhost:8080", "localhost:8080"),
])
def test_each_shape_is_one_identifier(text, whole):
    found = identifiers(text)
    assert whole in found, found
    assert not [i for i in found if i != whole and i in whole], found  # not also in pieces


def test_the_long_path_is_longer_than_a_summary_cut():
    assert len(LONG_PATH) > 100


# ------------------------------------------------------------------ generated texts
WORDS = st.sampled_from(["the", "build", "failed", "retry", "after", "connect", "to", "and",
                         "wrote", "read", "then", "ok", "日志写入", "连接失败", "deadbeefcafe"])
LABEL = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
SEGMENT = st.builds(lambda a, b: f"{a}-{b}" if b else a, LABEL, st.sampled_from(["", "v2", "data", "x86_64"]))
HOST = st.builds(".".join, st.lists(LABEL, min_size=2, max_size=3))
PORT = st.integers(1, 65535).map(str)
SCHEME_URL = st.builds(
    lambda scheme, user, host, port, path, query: (
        f"{scheme}://{user}{host}{':' + port if port else ''}/{'/'.join(path)}{query}"),
    st.sampled_from(["postgres", "pg", "s3", "redis", "https", "http", "mongodb+srv", "git+ssh"]),
    st.sampled_from(["", "u@", "app:pw@"]), HOST, st.one_of(st.just(""), PORT),
    st.lists(SEGMENT, max_size=4),
    st.sampled_from(["", "?page=3", "?a=1&b=two&c=x%20y", "?retryWrites=true&w=majority#top"]))
LONG_PATHS = st.lists(SEGMENT, min_size=14, max_size=24).map(lambda parts: "/" + "/".join(parts) + ".log")
UUIDS = st.uuids().map(str)
HOST_PORT = st.builds(lambda host, port: f"{host}:{port}", st.one_of(HOST, st.just("localhost")), PORT)
IDENTIFIERS = st.one_of(SCHEME_URL, LONG_PATHS, UUIDS, HOST_PORT)
# What separates two pieces: white space, punctuation a log puts around identifiers, or nothing.
GLUE = st.sampled_from([" ", " ", " ", "\n", "\t", ", ", " (", ") ", "=", ": ", '"', ""])
TEXTS = st.lists(st.tuples(st.one_of(WORDS, IDENTIFIERS), GLUE), min_size=1, max_size=30).map(
    lambda pieces: "".join(piece + glue for piece, glue in pieces))
MARKS = st.sampled_from([" [...]", " ..."])


@settings(max_examples=150)
@given(TEXTS, st.integers(1, 500), MARKS)
def test_a_cut_keeps_every_identifier_whole(text, limit, mark):
    out = cut_whole(text, limit, mark)
    if len(text) <= limit:
        assert out == text
        return
    assert out.endswith(mark.lstrip()), "a shortened text says it was shortened"
    assert len(out) <= limit + len(mark), "the documented allowance is the mark"
    kept = out[:-len(mark)] if out.endswith(mark) else ""
    assert text.startswith(kept)
    whole = set(identifiers(text))
    assert [i for i in identifiers(kept) if i not in whole] == [], "an identifier was cut"


@settings(max_examples=100)
@given(st.lists(IDENTIFIERS, min_size=1, max_size=6), st.integers(20, 300))
def test_identifiers_that_fit_are_kept(idents, limit):
    """The cut leaves out only what does not fit: each identifier ending before the limit
    (and before the last white space) stays."""
    text = " ".join(idents)
    out = cut_whole(text, limit, " [...]")
    end = 0
    for ident in idents:
        end += len(ident)
        if end <= limit:
            assert ident in out
        end += 1


def test_a_cut_falls_between_words_not_inside_an_identifier():
    text = f"opened {LONG_PATH} and then stopped"
    assert cut_whole(text, 60, " [...]") == "opened [...]"
    assert cut_whole(text, len(text) - 3, " [...]") == f"opened {LONG_PATH} and then [...]"
    assert cut_whole("日志" * 100, 50, " ...") == "日志" * 25 + " ..."  # no spaces, no identifier
    assert cut_whole(LONG_PATH, 40, " ...") == "..."  # left out whole
    assert cut_whole("short", 40, " ...") == "short"
    with pytest.raises(ValueError, match="at least 1"):
        cut_whole("text", 0, " ...")


# ------------------------------------------------------------------ the teaching model's summary
def summary_with_call(arguments: dict, result: str) -> tuple[str, str]:
    args = json.dumps(arguments)
    messages = [{"role": "user", "content": "Fetch the report."},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "fetch", "arguments": args}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": result},
                {"role": "user", "content": "Summarise the conversation so far."}]
    return summarise(messages), "\n".join(["Fetch the report.", args, result])


def test_the_summary_never_quotes_half_an_argument():
    """Before: `fetch({"url": "https://reports.example.com/...` cut at 100 characters."""
    url = "https://reports.example.com/ledger/2025/q3/export?format=csv&columns=all&since=2025-07-01&page=2"
    summary, said = summary_with_call({"url": url, "timeout": 30}, "ok, 42 rows")
    whole = set(identifiers(said))
    assert [i for i in identifiers(summary) if i not in whole] == []
    assert f"- {url}" in summary.split("## Identifiers (verbatim)")[1]


@settings(max_examples=40)
@given(st.dictionaries(st.sampled_from(["url", "path", "dsn", "host", "id"]), IDENTIFIERS,
                       min_size=1, max_size=3), TEXTS)
def test_every_identifier_of_a_summary_is_whole(arguments, result):
    summary, said = summary_with_call(arguments, result)
    whole = set(identifiers(said))
    assert [i for i in identifiers(summary) if i not in whole] == []
    for ident in whole:
        assert ident in summary, f"{ident!r} was lost"
