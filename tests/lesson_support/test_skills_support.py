"""Chapter 09 lesson support (lesson_support/skills.py): layers, review, tool search, the
placement and tool-change measurements against the teaching model."""
import json

import pytest

from lesson_support import skills as ls
from solutions.skills import SkillError


def test_layer_rows_cover_every_skill_and_only_one_has_files():
    rows = ls.layer_rows()
    assert [r.skill for r in rows] == ls.skill_names()
    assert [r.skill for r in rows if r.files] == ["slides-from-paper"]
    assert all(0 < r.catalogue < r.body for r in rows)
    assert "total" in ls.format_layer_rows(rows)


def test_review_blocks_the_exfiltrating_skill_and_passes_the_course_skills():
    known = {t["function"]["name"] for t in ls.tool_catalogue()}
    for skill in ls.course_skills():
        assert [f for f in ls.review_skill(skill, known) if f.severity == "block"] == [], skill.name
    verdicts = {v.name: v for v in ls.vet_folder(ls.HOSTILE_DIR, known)}
    assert {v.verdict for v in verdicts.values()} == {"refused"}
    assert "dotfiles-backup.example.net" in verdicts["exfiltrate"].reason
    assert "id_rsa" in verdicts["exfiltrate"].reason


def test_search_tools_finds_the_obvious_tool_and_is_deterministic():
    catalogue = ls.tool_catalogue()
    for query, expected in [("what is the weather in Vancouver", "get_weather"),
                            ("plot a bar chart of sales.csv", "plot_chart"),
                            ("post a message to the builds channel", "send_chat_message"),
                            ("translate this paragraph", "translate_text")]:
        found = ls.search_tools(query, catalogue)
        assert found[0][1]["function"]["name"] == expected
        assert found == ls.search_tools(query, list(reversed(catalogue)))
    assert ls.search_tools("zzzz qqqq", catalogue) == []


def test_tool_stub_and_tool_tokens():
    tool = ls.tools_by_name(["get_weather"])[0]
    assert ls.tool_stub(tool) == ("- get_weather: Get the current weather (temperature, "
                                  "conditions, humidity) for a city")
    assert ls.tools_tokens([]) == 0
    assert ls.tools_tokens(ls.tool_catalogue()) > 10 * ls.tools_tokens([tool])


def test_tool_run_confines_skills_and_grows_the_tool_list():
    run = ls.ToolRun(tools=[ls.TOOL_SEARCH_TOOL])
    assert run("load_skill", {"name": "csv-report"}).startswith("---\nname: csv-report")
    assert "error" in json.loads(run("load_skill", {"name": "../../etc/passwd"}))
    assert "error" in json.loads(run("read_skill_file", {"skill": "slides-from-paper", "file": "../x"}))
    found = json.loads(run("tool_search", {"query": "weather forecast"}))
    names = [t["name"] for t in found["tools"]]
    assert "get_weather" in names
    assert [t["function"]["name"] for t in run.tools] == ["tool_search"] + names
    assert json.loads(run("get_weather", {"location": "Vancouver"}))["temperature"] == 9


def test_preload_vs_progressive():
    rows = ls.preload_vs_progressive([(s, f) for _, s, f in ls.SESSION])
    assert len({r["preload"] for r in rows}) == 1
    assert all(a["progressive"] <= b["progressive"] for a, b in zip(rows, rows[1:]))
    assert rows[-1]["progressive"] < rows[-1]["preload"]


def test_tool_loading_rows_append_once():
    catalogue = ls.tool_catalogue()
    base = ls.tools_by_name(ls.CORE_TOOL_NAMES, catalogue)
    weather = ls.tools_by_name(["get_weather"], catalogue)
    rows = ls.tool_loading_rows(catalogue, [[], weather, weather], base)
    assert rows[0]["deferred"] < rows[1]["deferred"] == rows[2]["deferred"] < rows[0]["preload"]


def test_placement_requests_differ_only_where_the_skill_text_sits():
    skills = ls.course_skills()
    by = {s.name: s for s in skills}
    runs = {p: ls.placement_requests(p, skills, by["csv-report"], by["ci-triage"], ("a", "b"))
            for p in ls.PLACEMENTS}
    assert {len(r) for r in runs.values()} == {4}
    system = runs["system prompt"]
    assert ls.skill_result_text(by["csv-report"]) in system[2][1][0]["content"]
    end = runs["catalogue at the end"]
    assert all(m["content"] == ls.SYSTEM_PROMPT for _, (m, *_) in end)
    with pytest.raises(ValueError):
        ls.placement_requests("nowhere", skills, by["csv-report"], by["ci-triage"], ("a", "b"))


def test_placements_measured():
    import course.llm

    skills = ls.course_skills()
    by = {s.name: s for s in skills}
    rows = {}
    for placement in ls.PLACEMENTS:
        with course.llm.serve() as server:  # a clean cache for each placement
            measured = ls.measure_placement(server.client(), "teaching-model", placement, skills,
                                            by["slides-from-paper"], by["ci-triage"],
                                            ("Make slides from inbox/a.pdf", "Why did CI fail?"),
                                            ls.core_tools())
        rows[placement] = [r["cached_tokens"] for r in measured]
    # the system prompt placement loses the conversation at the load and at the install
    assert rows["system prompt"][2] < rows["file in the middle"][2]
    assert rows["catalogue at the end"][3] > rows["file in the middle"][3]


@pytest.mark.parametrize("change", list(ls.TOOL_CHANGES))
def test_tool_changes(server, change):
    catalogue = ls.tool_catalogue()
    messages = [{"role": "system", "content": ls.SYSTEM_PROMPT}] + ls.earlier_work()
    row = ls.measure_tool_change(server.client(), "teaching-model", change, catalogue[:20],
                                 ls.tools_by_name(["get_weather"], catalogue)[0], messages,
                                 "What is the weather in Vancouver?")
    expected = {"unchanged": row["prompt_tokens"] // 128 * 128,
                "masked": row["prompt_tokens"] // 128 * 128}
    if change in expected:
        assert row["cached_tokens"] >= expected[change] - 128
    else:
        assert row["cached_tokens"] < row["prompt_tokens"] - 1024
    assert row["next_cached_tokens"] >= row["next_prompt_tokens"] - 128


def test_unknown_change():
    with pytest.raises(ValueError):
        ls.changed_tools("shuffled", [], {}, "")


def test_predicted_cached_follows_openai_rules():
    assert ls.predicted_cached([], [1] * 5000) == 0
    assert ls.predicted_cached([[1] * 2000], [1] * 1400 + [3]) == 1280
    assert ls.predicted_cached([[1] * 2000], [1] * 1000) == 0
    assert ls.predicted_cached([[2] * 3000, [1] * 1500], [1] * 3000) == 1408


def test_routing_in_the_harness():
    skills = ls.course_skills()
    assert ls.route_skills("GitHub Actions keeps failing on my PR, why?", skills)[0][1] == "ci-triage"
    assert ls.route_skills("zzz qqq", skills) == [] and ls.routing_hint("zzz qqq", skills) is None
    hint = ls.routing_hint("GitHub Actions keeps failing on my PR, why?", skills)
    assert hint.startswith("(The harness suggests") and "- ci-triage: Use when" in hint
