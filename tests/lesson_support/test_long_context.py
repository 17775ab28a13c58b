"""Chapter 03's long-context section (lesson_support/long_context.py): the findings file and
the map of where a built context puts each part."""
import json

import matplotlib
import pytest

matplotlib.use("Agg")

from lesson_support.long_context import (DOCUMENTS, Span, context_map, context_map_figure,
                                         format_findings, load_findings, placement_lines, span_of)
from course.givens.gssc import sample_candidates, sample_tasks
from solutions.gssc import ContextConfig, build_context, count_tokens

CANDIDATES = sample_candidates()
TASK_EN = sample_tasks()[1]


def test_every_finding_names_a_known_document_and_its_place():
    rows = load_findings()
    assert len(rows) >= 10
    assert {r["document"] for r in rows} == set(DOCUMENTS)
    assert all(r["source"] and r["what"] and r["result"] for r in rows)
    text = " ".join(format_findings(rows).split())  # wrapped lines, joined again
    assert all(r["source"] in text and r["result"] in text for r in rows)
    assert max(len(line) for line in format_findings(rows).splitlines()) <= 100


def test_a_finding_without_its_document_is_refused(tmp_path):
    path = tmp_path / "findings.json"
    path.write_text(json.dumps({"findings": [{"source": "somewhere", "what": "x", "result": "y"}]}))
    with pytest.raises(ValueError, match="document"):
        load_findings(path)
    path.write_text(json.dumps({"findings": [{"document": "a blog", "source": "s", "what": "x",
                                              "result": "y"}]}))
    with pytest.raises(ValueError, match="unknown document"):
        load_findings(path)


@pytest.mark.parametrize("budget", [800, 1500, 10**6])
def test_the_map_covers_each_selected_packet_exactly_once_in_text_order(budget):
    built = build_context(TASK_EN, CANDIDATES, ContextConfig(budget=budget, reserve=min(300, budget // 4)))
    spans = context_map(built)
    selected = [r.packet for r in built.rows if r.status == "selected"]
    assert sorted(s.rank for s in spans if s.rank) == list(range(1, len(selected) + 1))
    assert all(span_of(spans, p) is not None for p in selected)
    for before, after in zip(spans, spans[1:]):
        assert before.end <= after.start
    assert spans[-1].section == "Output" and spans[-1].end == built.tokens
    # Offsets are exact token counts: the text before an entry counts as many tokens as its start.
    for s in spans:
        if s.packet is not None:
            at = built.text.find(s.packet.entry)
            assert count_tokens(built.text[:at + len(s.packet.entry)]) == s.end
    # Ranks follow the scores.
    scores = [s.score for s in sorted((s for s in spans if s.rank), key=lambda s: s.rank)]
    assert scores == sorted(scores, reverse=True)


def test_zones_and_edges():
    span = Span("x", "State", 0, 10)
    assert span.zone(100) == "start" and span.from_edge(100) == 0
    assert Span("x", "State", 40, 60).zone(100) == "middle"
    assert Span("x", "State", 90, 100).zone(100) == "end"
    assert Span("x", "State", 40, 60).from_edge(100) == 40
    assert Span("x", "State", 30, 80).from_edge(100) == 20


def test_a_packet_not_in_the_context_has_no_span():
    built = build_context(TASK_EN, CANDIDATES, ContextConfig(budget=1500, reserve=300))
    left_out = next(r.packet for r in built.rows if r.status == "did not fit")
    assert span_of(context_map(built), left_out) is None


def test_the_table_and_the_figure():
    built = build_context(TASK_EN, CANDIDATES, ContextConfig(budget=1500, reserve=300))
    spans = context_map(built)
    lines = placement_lines(spans, built.tokens)
    assert len(lines) == len(spans) + 1 and "the task" in lines[1]
    fig = context_map_figure({"small": built, "large": build_context(
        TASK_EN, CANDIDATES, ContextConfig(budget=10**6, reserve=0))})
    assert len(fig.axes[0].get_yticklabels()) == 2
    left_out = next(r.packet for r in built.rows if r.status == "did not fit")
    fig = context_map_figure({"small": built}, marked={"kept": spans[-2].packet, "left out": left_out})
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert "kept" in labels and "left out" not in labels  # only what the context holds is marked
