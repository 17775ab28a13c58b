"""Issue 25, item 8: every identifier in an archived turn survives whole. A record cuts long
texts at a limit; an identifier is then kept whole or left out whole (and listed in "ids:"),
never cut in the middle."""
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from course.identifiers import identifiers
from solutions.production_compaction.archive import TEXT_CHARS, _cut_words, archive_turn
from tests.course.test_identifiers_schemes import IDENTIFIERS, LONG_PATH, TEXTS

LONG_URL = ("https://reports.example.com/ledger/2025/q3/export?format=csv&columns=all&"
            "since=2025-07-01&until=2025-09-30&page=2&per_page=500&sort=-created&tz=UTC&"
            "fields=id,amount,currency,counterparty,booked_at")


def turn_of(role, text, calls=()):
    """A turn: one message and the results of its calls, given as (name, arguments, result)."""
    message = {"role": role, "content": text}
    if calls:
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(args)}}
                                 for n, (name, args, _) in enumerate(calls)]
    return [message] + [{"role": "tool", "tool_call_id": f"call_{n}", "content": result}
                        for n, (_, _, result) in enumerate(calls)]


def said(turn):
    """Everything the turn says: its texts and its calls' arguments."""
    return "\n".join([m.get("content") or "" for m in turn]
                     + [c["function"]["arguments"] for c in turn[0].get("tool_calls") or ()])


def cut_identifiers(turn):
    whole = set(identifiers(said(turn)))
    return [i for i in identifiers(archive_turn(turn)) if i not in whole]


# ------------------------------------------------------------------ regressions (failed before)
def test_a_message_that_is_one_long_path_is_not_cut_inside_it():
    """Before: the text had no space within 400 characters, so it was cut at 400, inside the path."""
    path = LONG_PATH[:-len("/libledger.so")] + "/" + "/".join(["nested-cache-dir"] * 16) + "/ledger.db"
    assert len(path) > TEXT_CHARS
    turn = turn_of("user", path)
    assert cut_identifiers(turn) == []
    assert path in archive_turn(turn), "the path left out of the text is listed whole"


def test_an_output_line_that_is_one_long_url_is_not_cut_inside_it():
    """Before: 'ok: ' + the first 160 characters of the URL."""
    assert len(LONG_URL) > 160
    turn = turn_of("assistant", "Exporting.", [("fetch", {"page": 2}, LONG_URL + "\n42 rows")])
    assert cut_identifiers(turn) == []
    assert LONG_URL in archive_turn(turn)


def test_words_glued_to_an_identifier_are_cut_around_it():
    """Before: 'dsn=postgres://...' with no space was cut inside the URL."""
    dsn = "postgres://ledger:secret@db-primary.internal.example:5432/ledger_checkpoints?sslmode=require"
    text = "连接失败" * 90 + "dsn=" + dsn + " retrying"
    assert text.index(" ") > TEXT_CHARS
    record = archive_turn(turn_of("user", text))
    assert cut_identifiers(turn_of("user", text)) == []
    assert "连接失败" * 90 + "dsn= [...]" in record, "the cut falls just before the URL"
    assert dsn in record, "the URL left out of the text is listed whole"


# ------------------------------------------------------------------ properties
def test_the_record_says_the_text_was_shortened():
    record = archive_turn(turn_of("user", "word " * 200))
    assert record.endswith("word [...]") and len(record) <= len("- user: ") + TEXT_CHARS + 6


@settings(max_examples=100)
@given(TEXTS, st.integers(1, 450))
def test_cut_words_keeps_identifiers_whole_within_its_allowance(text, limit):
    out = _cut_words(text, limit)
    assert len(out) <= limit + len(" [...]")
    if len(text) > limit:
        assert out.endswith("[...]")
    whole = set(identifiers(text))
    assert [i for i in identifiers(out) if i not in whole] == []


CALLS = st.lists(st.tuples(st.sampled_from(["fetch", "run_query", "s3.copy", "read-file"]),
                           st.dictionaries(st.sampled_from(["url", "path", "dsn", "id"]),
                                           IDENTIFIERS, max_size=3),
                           TEXTS), max_size=3)


@settings(max_examples=60)
@given(st.sampled_from(["user", "assistant"]), TEXTS.map(lambda t: t * 6), CALLS)
def test_every_identifier_of_a_record_is_one_of_its_turn(role, text, calls):
    turn = turn_of(role, text, calls if role == "assistant" else ())
    assert cut_identifiers(turn) == []
