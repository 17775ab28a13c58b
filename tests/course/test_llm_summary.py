"""Rule 3: summaries are structured, built from every role, and copy identifiers whole."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.identifiers import error_causes, identifiers
from course.llm.summary import asks_for_summary
from course.paths import DATA_DIR
from tests.messages import tool_call as call

MODEL = "teaching-model"
REQUEST = {"role": "user", "content": "Summarise the conversation so far for a compaction."}


def summary_of(client, messages):
    reply = client.chat.completions.create(model=MODEL, messages=messages + [REQUEST])
    assert reply.model_extra["teaching_trace"][-1]["rule"] == "summary"
    return reply.choices[0].message.content


def section(text, title):
    body = text.split(f"## {title}\n", 1)[1]
    return body.split("\n\n## ", 1)[0]


@pytest.mark.parametrize("text, whole", [
    ("request 3fa85f64-5717-4562-b3fc-2c963f66afa6 failed", "3fa85f64-5717-4562-b3fc-2c963f66afa6"),
    ("the API is at 10.0.3.17:8443 now", "10.0.3.17:8443"),
    ("ping 192.168.1.20 first", "192.168.1.20"),
    ("connect to db.internal.example:5432.", "db.internal.example:5432"),
    ("see https://github.com/pnggroup/libpng/issues/512, then", "https://github.com/pnggroup/libpng/issues/512"),
    ("it linked /usr/lib/x86_64-linux-gnu/libz.so by mistake", "/usr/lib/x86_64-linux-gnu/libz.so"),
    ("fixed in commit 3f2a9c1d.", "3f2a9c1d"),
    ("upgrade to libpng 1.6.43 and v2.0.1-rc1", "v2.0.1-rc1"),
    ("The retry failed: ConnectionRefusedError", "ConnectionRefusedError"),
    ("raised json.JSONDecodeError at once", "json.JSONDecodeError"),
    ("started 2025-09-13T05:18:47 sharp", "2025-09-13T05:18:47"),
    ("flags -Ilibpng-1.6.43 set", "Ilibpng-1.6.43"),
])
def test_identifiers_are_found_whole(text, whole):
    assert whole in identifiers(text)
    assert not [i for i in identifiers(text) if i != whole and i in whole]  # not also in pieces


def test_the_cause_follows_a_header_line():
    log = ("-- Looking for pow in m - found\n"
           "CMake Error at /usr/share/cmake-3.25/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n"
           "  Could NOT find ZLIB (missing: ZLIB_LIBRARY)\n"
           "gmake: *** [Makefile:146: all] Error 2\n")
    assert error_causes(log) == [
        "CMake Error at /usr/share/cmake-3.25/Modules/FindPackageHandleStandardArgs.cmake:230 "
        "(message): Could NOT find ZLIB (missing: ZLIB_LIBRARY)"]
    traceback = "Traceback (most recent call last):\n  File \"x.py\", line 1\nConnectionRefusedError: [Errno 111]"
    assert error_causes(traceback) == ["ConnectionRefusedError: [Errno 111]"]


@pytest.mark.parametrize("text, asks", [
    ("Summarise the conversation so far.", True),
    ("Compact the conversation above: write a summary", True),
    ("Summarise this transcript:\n[...]", True),
    ("Please summarise: the build failed again.", True),
    ("请总结一下", True),
    ("Give me a weather summary for Paris", False),
    ("Summarise the page at https://news.example/today", False),
])
def test_what_counts_as_a_request_to_summarise_the_conversation(text, asks):
    assert asks_for_summary(text) is asks


RUN = [
    {"role": "system", "content": "You are a deploy agent. Never restart the database."},
    {"role": "user", "content": "Deploy build 3fa85f64-5717-4562-b3fc-2c963f66afa6 to 10.0.3.17:8443."},
    {"role": "assistant", "content": "I will check the service first.", "tool_calls": [
        call("c1", "check_service", {"host": "10.0.3.17:8443"})]},
    {"role": "tool", "tool_call_id": "c1", "content": "service api: healthy\nversion 2.4.1"},
    {"role": "assistant", "content": None, "tool_calls": [call("c2", "deploy", {"build": "3fa85f64"})]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"error": "Traceback: ConnectionRefusedError"}'},
    {"role": "assistant", "content": "The retry failed: ConnectionRefusedError. The load balancer "
                                     "drops port 8443, so I will use the internal port."},
    {"role": "user", "content": "Only deploy between 18:00 and 20:00 UTC. The staging host is 10.0.3.18."},
]


def test_a_summary_is_built_from_every_role(client):
    text = summary_of(client, RUN)
    assert "Deploy build 3fa85f64-5717-4562-b3fc-2c963f66afa6" in section(text, "Goal")
    constraints = section(text, "Constraints")
    assert "Never restart the database." in constraints                     # system prompt
    assert "Only deploy between 18:00 and 20:00 UTC." in constraints         # a later user message
    facts = section(text, "Confirmed facts")
    assert "check_service({\"host\": \"10.0.3.17:8443\"}) -> service api: healthy" in facts  # a tool result
    assert "assistant: The load balancer drops port 8443" in facts           # an assistant statement
    failures = section(text, "Failed attempts (and why)")
    assert "deploy(" in failures and "ConnectionRefusedError" in failures    # a tool error
    assert "assistant: The retry failed: ConnectionRefusedError." in failures  # assistant prose
    assert "Only deploy between 18:00 and 20:00 UTC." in section(text, "Open items")
    for ident in ("3fa85f64-5717-4562-b3fc-2c963f66afa6", "10.0.3.17:8443", "10.0.3.18"):
        assert ident in text


def test_an_earlier_summary_is_carried_forward(client):
    first = summary_of(client, RUN)
    later = [RUN[0], {"role": "user", "content": first},
             {"role": "assistant", "content": "Deployed on the internal port 9443."}]
    second = summary_of(client, later)
    assert "Never restart the database." in section(second, "Constraints")
    assert "assistant: The retry failed: ConnectionRefusedError." in section(second, "Failed attempts (and why)")
    assert "assistant: Deployed on the internal port 9443." in section(second, "Confirmed facts")
    assert second.count("## Goal") == 1


def test_the_long_run_summary_keeps_what_chapter_04_probes(client):
    run = [json.loads(line) for line in (DATA_DIR / "compaction" / "long_run.jsonl").read_text().splitlines()]
    text = summary_of(client, run[:47])
    failures = section(text, "Failed attempts (and why)")
    assert "(message): Could NOT find ZLIB (missing: ZLIB_LIBRARY ZLIB_INCLUDE_DIR)" in failures
    assert "collect2: error: ld returned 1 exit status" in failures
    assert "stale cache entry" in failures                    # the assistant's explanation
    facts = section(text, "Confirmed facts")
    assert "the sysroot has none" in facts and "explicitly with absolute paths" in facts
    assert "Found ZLIB: /usr/lib/x86_64-linux-gnu/libz.so" in facts
    assert "write_file(" in section(text, "Changes made")
    said = "\n".join([m.get("content") or "" for m in run[:47]] +
                     [c["function"]["arguments"] for m in run[:47] for c in m.get("tool_calls") or ()])
    assert [i for i in identifiers(said) if i not in text] == []


def test_long_successful_output_and_narration_are_left_out(client):
    log = "\n".join(f"[{i:3d}%] Building C object src/m{i}.c.o" for i in range(40))
    messages = [{"role": "user", "content": "Build it."},
                {"role": "assistant", "content": "First I run the build. The cache is cold.",
                 "tool_calls": [call("b1", "run_command", {"command": "make"})]},
                {"role": "tool", "tool_call_id": "b1", "content": log + "\n-- Found ZLIB: /opt/z/libz.so"}]
    facts = section(summary_of(client, messages), "Confirmed facts")
    assert facts.splitlines() == ['- assistant: The cache is cold.',
                                  '- run_command({"command": "make"}) -> -- Found ZLIB: /opt/z/libz.so']


def long_run(steps: int) -> list[dict]:
    """A generated agent run in which every step reads a new file and meets a new ticket: two
    identifiers per step, none of them quoted by the summary's sections."""
    messages = [{"role": "system", "content": "You are a build agent."},
                {"role": "user", "content": "Fix every failing unit."}]
    for i in range(steps):
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [call(f"r{i}", "read_file", {"path": f"src/unit_{i}/main.c"})]})
        messages.append({"role": "tool", "tool_call_id": f"r{i}",
                         "content": "line one\nline two\nline three\n"
                                    f"see ticket BUILD-{10_000 + i} for unit_{i}_owner"})
    return messages


def listed_identifiers(text):
    return [line[2:] for line in section(text, "Identifiers (verbatim)").splitlines()
            if line.startswith("- ") and not line.startswith("- ... ")]


def test_past_the_budget_the_newest_identifiers_are_kept():
    # Regression (issue 25 item 4): the section kept the first MAX_IDENTIFIERS identifiers and
    # dropped the newest, the ones an agent needs to continue.
    from course.llm.summary import MAX_IDENTIFIERS, summarise

    run = long_run(600)
    said = "\n".join([m.get("content") or "" for m in run] +
                     [c["function"]["arguments"] for m in run for c in m.get("tool_calls") or ()])
    assert len(identifiers(said)) > 1_000
    text = summarise(run + [REQUEST])
    listed = listed_identifiers(text)
    assert len(listed) == MAX_IDENTIFIERS
    for i in range(560, 600):  # the last steps' identifiers are all there
        assert f"BUILD-{10_000 + i}" in text and f"unit_{i}_owner" in text
    assert "BUILD-10000" not in text  # the oldest went
    left_out = [line for line in section(text, "Identifiers (verbatim)").splitlines()
                if line.startswith("- ... ")]
    missing = [i for i in identifiers(said) if i not in text]
    assert left_out == [f"- ... {len(missing)} older identifiers left out (mentioned last "
                        f"before these): see the full transcript"]


def test_within_the_budget_every_identifier_is_kept():
    from course.llm.summary import summarise

    run = long_run(150)
    text = summarise(run + [REQUEST])
    said = "\n".join([m.get("content") or "" for m in run] +
                     [c["function"]["arguments"] for m in run for c in m.get("tool_calls") or ()])
    assert [i for i in identifiers(said) if i not in text] == []
    assert "left out" not in text


def test_an_identifier_mentioned_again_late_counts_as_new():
    from course.llm.summary import MAX_IDENTIFIERS, summarise

    run = long_run(400)
    run += [{"role": "assistant", "content": None,
             "tool_calls": [call("again", "read_file", {"path": "NOTES"})]},
            {"role": "tool", "tool_call_id": "again",  # a long output: the sections skip it
             "content": "notes\nmore notes\neven more\nback to ticket BUILD-10001"}]
    listed = listed_identifiers(summarise(run + [REQUEST]))
    assert len(listed) == MAX_IDENTIFIERS and "BUILD-10001" in listed
    assert listed.index("BUILD-10001") < listed.index("BUILD-10399")  # order of first appearance


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 700), st.lists(st.integers(0, 699), max_size=5))
def test_every_identifier_is_listed_or_counted(steps, again):
    from course.llm.summary import MAX_IDENTIFIERS, summarise

    run = long_run(steps)
    for i in again:
        run.append({"role": "user", "content": f"What about BUILD-{10_000 + i % steps}?"})
    text = summarise(run + [REQUEST])
    said = "\n".join([m.get("content") or "" for m in run] +
                     [c["function"]["arguments"] for m in run for c in m.get("tool_calls") or ()])
    missing = [i for i in identifiers(said) if i not in text]
    listed = listed_identifiers(text)
    assert len(listed) <= MAX_IDENTIFIERS
    assert (f"- ... {len(missing)} older identifiers left out" in text) is bool(missing)
    for i in again:  # asked about last: never the ones left out
        assert f"BUILD-{10_000 + i % steps}" in text
