"""Chapter 17's retrieval explorer: the rankings it asks the index for, the rows and the fusion
arithmetic it shows, and that a memory's text is escaped where it is written."""
from __future__ import annotations

import pytest

from lesson_support.widgets.memory import (MODES, fusion_line, ranking_rows, rankings, retrieval_explorer,
                                           table_html)

pytestmark = pytest.mark.usefixtures("english_unless_told")  # tests/conftest.py


class FakeIndex:
    """Fixed rankings, and a record of what was asked."""

    def __init__(self):
        self.asked = []

    def lexical(self, query, k=10, user=None):
        self.asked.append(("lexical", query, k, user))
        return ["m1", "m2", "m3"][:k]

    def dense(self, query, k=10, user=None):
        self.asked.append(("dense", query, k, user))
        return ["m3", "m1"][:k]

    def search(self, query, k=10, user=None, mode="fused"):
        self.asked.append((mode, query, k, user))
        return ["m1", "m3", "m2"][:k]


TEXTS = {"m1": "The user drinks coffee.", "m2": "Error E1147 on the build.", "m3": "<b>用户</b> likes tea & cake"}


def test_rankings_asks_each_ranking_for_k_ids_of_the_user_and_nothing_for_a_blank_question():
    index = FakeIndex()
    found = rankings(index, "what do I drink?", k=2, user="u03")
    assert found == {"lexical": ["m1", "m2"], "dense": ["m3", "m1"], "fused": ["m1", "m3"]}
    assert {(mode, k, user) for mode, _, k, user in index.asked} == {(m, 2, "u03") for m in MODES}
    index.asked.clear()
    assert rankings(index, "   ") == {m: [] for m in MODES} and index.asked == []


def test_rows_line_the_rankings_up_by_rank_and_leave_a_shorter_list_empty():
    rows = ranking_rows({"lexical": ["m1", "m2", "m3"], "dense": ["m3"], "fused": ["m1", "m3"]}, TEXTS)
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert rows[0]["dense"] == ("m3", TEXTS["m3"]) and rows[1]["dense"] == ("", "")
    assert rows[2]["fused"] == ("", "") and rows[2]["lexical"] == ("m3", TEXTS["m3"])
    assert ranking_rows({m: [] for m in MODES}, TEXTS) == []


def test_the_fusion_line_shows_the_reciprocal_ranks_that_put_the_winner_first():
    line = fusion_line({"lexical": ["m2", "m1"], "dense": ["m1"], "fused": ["m1", "m2"]})
    assert line == ("m1 is first: lexical (BM25) rank 2: 1/(60+2) = 0.0161; dense (embeddings) rank 1: "
                    "1/(60+1) = 0.0164; fused score 0.0325.")
    alone = fusion_line({"lexical": ["m2"], "dense": ["m5", "m6"], "fused": ["m2"]}, k=10)
    assert alone == ("m2 is first: lexical (BM25) rank 1: 1/(10+1) = 0.0909; dense (embeddings): "
                     "not in its top 2, adds 0; fused score 0.0909.")
    assert fusion_line({m: [] for m in MODES}) == "Type a question to rank the memories."
    nothing = fusion_line({"lexical": [], "dense": ["m1", "m2"], "fused": ["m1", "m2"]})
    assert "lexical (BM25): not in its top 2, adds 0" in nothing  # not "top 0": it was asked for its top k


def test_the_table_escapes_memory_text_and_marks_the_expected_record():
    rows = ranking_rows({"lexical": ["m3"], "dense": ["m1"], "fused": ["m3"]}, TEXTS)
    page = table_html(rows, expected="m3")
    assert "<b>用户</b>" not in page and "&lt;b&gt;用户&lt;/b&gt; likes tea &amp; cake" in page
    assert page.count("background:#fff3b0") == 2  # lexical and fused hold m3, dense does not
    assert "The user drinks coffee." in page


def test_the_explorer_shows_the_first_example_and_follows_a_picked_or_typed_question():
    index = FakeIndex()
    view = retrieval_explorer(index, TEXTS, ["what do I drink?", "E1147"], user="u01", k=3)
    pick, box, out = view.children
    assert box.value == "what do I drink?" and "Error E1147 on the build." in out.value
    pick.value = "E1147"
    assert box.value == "E1147" and index.asked[-1][1] == "E1147"
    box.value = ""
    assert "Type a question to rank the memories." in out.value


def test_in_chinese_the_labels_and_the_arithmetic_are_translated_and_the_numbers_kept(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    line = fusion_line({"lexical": ["m2", "m1"], "dense": ["m1"], "fused": ["m1", "m2"]})
    assert line == ("m1 排第一：词法检索（BM25） 第 2 名：1/(60+2) = 0.0161；稠密检索（嵌入向量） 第 1 名："
                    "1/(60+1) = 0.0164；融合得分 0.0325。")
    page = table_html(ranking_rows({"lexical": ["m1"], "dense": [], "fused": ["m1"]}, TEXTS))
    assert "融合（RRF）" in page and "The user drinks coffee." in page
