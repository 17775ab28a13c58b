"""The context inspector's logic (course/tracing/composition.py, records.py, inspector.py) as
plain functions: composition by tagged part, the first difference between two requests, why a
cache stopped where it did, totals per run, and the HTML the widget shows (escaped, in Chinese
under COURSE_LANGUAGE=zh-CN). Issue 49."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course.llm.template import piece_ids, prompt_token_ids
from course.tracing import composition, inspector, records
from course.tracing.composition import compose, divergence, tag

SYSTEM = {"role": "system", "content": "You are a careful assistant."}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


pytestmark = pytest.mark.usefixtures("english_unless_told")  # tests/conftest.py


def record(number=2, **overrides) -> records.Request:
    values = dict(number=number, span_id=f"{number:016x}", run=None, model="teaching-model",
                  input_tokens=1500, output_tokens=10, cached_tokens=1280,
                  parts={"system prompt": 1200, "history": 297}, cache_key="k",
                  previous_span_id=f"{number - 1:016x}", diverges_at_unit=3,
                  shared_prefix_tokens=1400, diverging_part="history", compaction=None,
                  messages=None)
    values.update(overrides)
    return records.Request(**values)


def test_the_composition_adds_up_to_the_teaching_models_count_and_keeps_the_tags():
    notes = tag("notes", {"role": "user", "content": "Notes so far: none."})
    messages = [SYSTEM, notes, {"role": "user", "content": "hi"}]
    c = compose(messages, TOOLS)
    assert c.total == len(prompt_token_ids(messages, TOOLS))
    assert c.parts == ("tool definitions", "system prompt", "notes", "history")
    assert list(c.by_part()) == ["tool definitions", "system prompt", "notes", "history"]
    # the tag belongs to the content: an equal message elsewhere is the same part
    assert compose([dict(notes)]).parts == ("notes",)
    # an untagged message is its role's part, whatever its text says
    assert compose([{"role": "user", "content": "Notes so far: other."}]).parts == ("history",)


def test_text_tagged_inside_a_message_takes_its_tokens_from_the_messages_part():
    memory = "<memories>\n- The user's trip to Oslo is on 3 May.\n- They prefer aisle seats.\n</memories>"
    system = {"role": "system", "content": "You are a careful assistant.\n\n" + memory}
    whole = compose([system]).by_part()
    tag("retrieved memory", system, memory)
    tag("retrieved memory", dict(system), memory)  # tagged again (the next turn): counted once
    c = compose([system, {"role": "user", "content": "When do I fly?"}])
    parts = c.by_part()
    assert list(parts) == ["system prompt", "retrieved memory", "history"]
    assert parts["retrieved memory"] == len(piece_ids(memory)) > 0
    assert parts["system prompt"] + parts["retrieved memory"] == whole["system prompt"]
    assert sum(parts.values()) + c.fixed == c.total  # nothing counted twice or lost
    with pytest.raises(ValueError, match="must be a non-empty string the message's content contains"):
        tag("notes", system, "not in it")


def test_a_changed_memory_block_is_where_the_prompt_diverged_not_the_system_prompt():
    rules = "You are a careful assistant who answers from the memories below."

    def request(memory: str, rules: str = rules):
        system = {"role": "system", "content": rules + "\n\n" + memory}
        tag("retrieved memory", system, memory)
        return compose([system, {"role": "user", "content": "When do I fly?"}])

    first = request("<memories>\n- Trip to Oslo on 3 May.\n</memories>")
    moved = request("<memories>\n- Trip to Oslo on 4 May.\n</memories>")
    assert divergence(first, moved) == composition.Divergence(0, 0, "retrieved memory")
    # the same memories under changed rules: the system prompt's own text changed
    ruled = request("<memories>\n- Trip to Oslo on 3 May.\n</memories>", rules + " Be brief.")
    assert divergence(first, ruled).part == "system prompt"


@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["notes", "skills", "summary"]),
                          st.integers(0, 400)), max_size=6),
       st.lists(st.integers(1, 300), min_size=4, max_size=4))
def test_by_part_keeps_every_token_once_whatever_is_tagged_inside(splits, tokens):
    # compose never moves more than a unit has left; by_part must keep the total either way
    left = list(tokens)
    kept = []
    for unit, part, count in splits:
        count = min(count, left[unit])
        left[unit] -= count
        kept.append((unit, part, count, f"{len(kept):016x}"))
    c = composition.Composition(("a", "b", "c", "d"), ("system prompt", "history", "history",
                                                       "tool results"), tuple(tokens), 5, tuple(kept))
    assert sum(c.by_part().values()) == sum(tokens)


def test_divergence_is_the_first_changed_unit_and_the_tokens_before_it():
    base = [SYSTEM, {"role": "user", "content": "a"}]
    before = compose(base, TOOLS)
    grown = compose(base + [{"role": "assistant", "content": "b"}], TOOLS)
    where = divergence(before, grown)
    assert (where.unit, where.part) == (3, "history")
    assert where.token == sum(before.tokens)
    edited = compose([{"role": "system", "content": "Changed."}, base[1]], TOOLS)
    where = divergence(before, edited)
    assert (where.unit, where.token, where.part) == (1, before.tokens[0], "system prompt")
    assert divergence(before, before).unit is None
    assert divergence(before, compose(base)).unit == 0  # the tools block went away


@pytest.mark.parametrize("overrides, code", [
    ({"cached_tokens": None}, "unreported"),
    ({"previous_span_id": None}, "first"),
    ({}, "diverged"),
    ({"diverges_at_unit": None, "diverging_part": None}, "identical"),
    ({"shared_prefix_tokens": 900, "cached_tokens": 0}, "below_minimum"),
    ({"shared_prefix_tokens": 900, "cached_tokens": 0, "diverges_at_unit": None}, "short"),
    ({"cached_tokens": 0}, "fewer"),
    # more cached than the previous request allows (seen in lesson 15: 1,280 after 320 shared)
    ({"shared_prefix_tokens": 320, "diverges_at_unit": 1, "diverging_part": "system prompt"}, "earlier"),
])
def test_why_the_cache_stopped_there(overrides, code):
    reason, figures = records.cache_reason(record(**overrides))
    assert reason == code
    if code == "diverged":
        assert figures["reusable"] == 1280 and figures["shared"] == 1400
    text = inspector.reason_text(reason, figures)  # every code has its sentence
    assert text and "None" not in text


def test_more_cached_than_the_previous_request_allows_is_explained_by_the_earlier_ones():
    # Lesson 15: the previous request differs in its system prompt after 320 tokens, yet 1,280
    # were cached. Said "below_minimum" before; the truth is one of two things.
    now = record(3, shared_prefix_tokens=320, diverges_at_unit=1, diverging_part="system prompt")
    # an older request (not the previous one) shares whole units far enough: it is named
    code, figures = records.cache_reason(now, (1, 1345, None, None))
    assert code == "older" and (figures["older"], figures["older_shared"]) == (1, 1345)
    assert "#1" in inspector.reason_text(code, figures) and "1345" in inspector.reason_text(code, figures)
    # no earlier request shares whole units that far: the match reaches inside the changed unit
    code, figures = records.cache_reason(now, (2, 320, 1, "system prompt"))
    assert code == "inside"
    text = inspector.reason_text(code, figures)
    assert "320" in text and "1280" in text and "system prompt" in text
    # within what the previous request allows, the older ones change nothing
    assert records.cache_reason(record(), (1, 1500, None, None))[0] == "diverged"


def test_the_longest_match_among_earlier_requests_with_the_same_cache_key():
    a = [SYSTEM, {"role": "user", "content": "a"}]
    b = [{"role": "system", "content": "Other."}, {"role": "user", "content": "a"}]
    c = [SYSTEM, {"role": "user", "content": "c"}]
    details = {f"{n:016x}": compose(m) for n, m in ((1, a), (2, b), (3, c), (4, a + c[1:]))}
    rs = [record(n, cache_key="k" if n != 2 else "other") for n in (1, 2, 3)]
    now = record(4)
    # #1 is all of #4's start; #3 shares only the system prompt; #2 has another cache key
    assert records.longest_match(now, rs + [now], details) == (1, compose(a).total - compose(a).fixed,
                                                               2, "history")
    # a request equal to an earlier one shares its reply primer too: the whole prompt
    details[f"{4:016x}"] = compose(a)
    assert records.longest_match(now, rs + [now], details) == (1, compose(a).total, None, None)
    assert records.longest_match(record(1), rs, details) is None  # nothing earlier
    assert records.longest_match(now, rs + [now], {}) is None      # compositions not kept


def test_totals_per_session_and_per_run():
    rs = [record(1, run="agent", previous_span_id=None), record(2, run="agent"),
          record(3, run=None, cached_tokens=None)]
    t = records.totals(rs)
    assert (t["requests"], t["input_tokens"], t["cached_tokens"], t["unreported"]) == (3, 4500, 2560, 1)
    assert t["parts"] == {"system prompt": 3600, "history": 891}
    runs = records.by_run(rs)
    assert list(runs) == ["agent", None] and runs["agent"]["requests"] == 2


def test_request_records_read_the_span_attributes():
    attrs = {"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 10,
             "gen_ai.usage.output_tokens": 2, "gen_ai.usage.cache_read.input_tokens": 0,
             "course.context.parts": ("system prompt", "notes"), "course.context.part_tokens": (6, 3),
             "course.cache.key": "k", "course.compaction.policy": "mask", "course.compaction.layer": 1,
             "gen_ai.input.messages": '[{"role": "user", "parts": []}]'}
    r = records.request_from_span(1, attrs, "ab", "run")
    assert r.parts == {"system prompt": 6, "notes": 3} and r.compaction == "1: mask"
    assert r.messages == [{"role": "user", "parts": []}] and r.previous_span_id is None


def test_unit_diff_marks_same_changed_new_and_removed():
    before = compose([SYSTEM, {"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    now = compose([SYSTEM, {"role": "user", "content": "A"}])
    assert [row[3] for row in inspector.unit_diff(before, now)] == ["same", "changed", "removed"]
    assert [row[3] for row in inspector.unit_diff(None, now)] == ["new", "new"]


def test_the_html_escapes_what_a_model_or_student_wrote_and_marks_the_cache():
    evil = record(parts={"<script>x</script>": 10}, messages=[{"role": "user", "content": "<b>hi</b>"}],
                  cache_key="<k>")
    page = inspector.bars_html([evil]) + inspector.detail_html(evil, None, None, None)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>hi</b>" not in page and "&lt;k&gt;" in page
    assert "repeating-linear-gradient" in inspector.bars_html([record()])      # cached hatched
    assert "repeating-linear-gradient" not in inspector.bars_html([record(cached_tokens=0)])
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in inspector.detail_html(
        record(), None, None, None)
    assert "No request" in inspector.bars_html([])


def test_the_inspector_speaks_chinese(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    page = inspector.totals_html([record()]) + inspector.bars_html([record()])
    assert "整个会话" in page and "系统提示" in page and "对话历史" in page
    text = inspector.reason_text(*records.cache_reason(record()))
    assert "1280" in text and "history" not in text


def test_the_widget_shows_the_last_request_and_follows_the_choice():
    widget = inspector.inspector([record(1, previous_span_id=None), record(2)])
    totals, bars, choose, detail = widget.children
    assert choose.value == 2 and "#2" in detail.value
    choose.value = 1
    assert "#1" in detail.value and "cold" in detail.value
    assert composition.PARTS[0] == "system prompt"


def em_width(text: str) -> float:
    """A generous estimate of `text`'s width in em: a wide (CJK) character 1, any other 0.6."""
    import unicodedata

    return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.6 for c in text)


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_the_request_dropdown_has_room_for_its_longest_label(monkeypatch, language):
    # Seen in the browser test: ipywidgets' default 300 px cut lesson 01's Chinese label off.
    monkeypatch.setenv("COURSE_LANGUAGE", language)
    choose = inspector.inspector([record(1, previous_span_id=None), record(2)]).children[2]
    big = record(1000, input_tokens=1_000_000, cached_tokens=None)  # its label, as long as they get
    width = choose.layout.width or ""
    assert width.endswith("em"), f"no width in em: {width!r}"
    description, padding = 80 / 13, 3  # the description's 80 px at 13 px, the arrow and padding
    assert float(width[:-2]) >= description + padding + em_width(inspector.request_label(big))
