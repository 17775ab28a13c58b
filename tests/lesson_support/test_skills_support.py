"""Chapter 09 lesson support (lesson_support/skills/): layers, review, tool search, the
placement and tool-change measurements against the teaching model."""
import json

import pytest

from lesson_support import skills as ls


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


# ------------------------------------------------------------------ a provider beside the teaching model
class _Scripted:
    """A stand-in client whose replies are scripted: a model that follows none of the teaching
    model's rules. `sent` keeps every request's arguments."""

    def __init__(self, replies):
        from types import SimpleNamespace as NS

        self.replies, self.sent, self.NS = list(replies), [], NS
        self.chat = NS(completions=NS(create=self.create))

    def create(self, **request):
        self.sent.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        NS = self.NS
        calls = [NS(id=f"c{i}", function=NS(name=name, arguments=raw))
                 for i, (name, raw) in enumerate(reply.get("calls", ()))] or None
        return NS(choices=[NS(message=NS(content=reply.get("content"), tool_calls=calls))],
                  usage={"prompt_tokens": 100, "completion_tokens": 5})  # no cache figures


def test_try_session_keeps_what_a_real_model_did_and_the_error_that_stopped_it():
    import httpx
    import openai

    refused = openai.APIConnectionError(request=httpx.Request("POST", "http://provider.test"))
    client = _Scripted([{"calls": [("load_skill", "{not json")]},
                        {"content": "I would rather not load anything."}, refused])
    start = ls.session_start("<available_skills>\n</available_skills>")
    steps, error = ls.try_session(client, "m", ["first", "second"], start, [ls.LOAD_SKILL_TOOL])
    assert len(start) == 2, "the caller's messages are not grown"
    assert steps[0].calls == [("load_skill", {"unparsed arguments": "{not json"})]
    assert steps[0].prompt_tokens == 100 and steps[0].cached_tokens is None
    assert error.startswith("APIConnectionError")
    assert ls.first_reply(steps[1:]) == "first reply: no tool call, it answered: I would rather not load anything."
    assert ls.reply_lines(steps).splitlines()[1] == "reply 2: answer: I would rather not load anything."
    assert ls.first_reply([]) == "first reply: none"
    assert ls.hostile_view(steps[1:]) == "it called no tool\nit sent nothing out (no http_post call)"


def test_try_session_is_bounded_per_request():
    client = _Scripted([{"calls": [("read_file", '{"path": "a"}')]}] * 3)
    steps, error = ls.try_session(client, "m", ["go"], ls.session_start("x"), [], max_calls=3)
    assert len(steps) == len(client.sent) == 3 and error is None


def test_provider_demo_runs_only_on_the_provider_and_labels_it(capsys):
    from course.llm import Target

    teaching = Target("teaching model (private cache)", _Scripted([]), "teaching-model", True)
    provider = Target("m (your provider)", _Scripted([{"content": "Hello."}]), "m", False)
    assert ls.provider_demo([teaching], ["hi"], ls.session_start("x"), [], ls.first_reply) is None
    assert capsys.readouterr().out == ""
    ls.provider_demo([teaching, provider], ["hi"], ls.session_start("x"), [], ls.first_reply,
                     max_calls=1)
    assert len(provider.client.sent) == 1 and not teaching.client.sent
    assert capsys.readouterr().out == "\n[m (your provider)]\nfirst reply: no tool call, it answered: Hello.\n"


def test_measurements_without_cache_figures_print_not_reported():
    skills = ls.course_skills()
    by = {s.name: s for s in skills}
    client = _Scripted([{"content": "ok"}] * 4)
    rows = ls.measure_placement(client, "m", "system prompt", skills, by["slides-from-paper"],
                                by["ci-triage"], ("a", "b"), ls.core_tools())
    assert all(r["cached_tokens"] is None and r["prompt_tokens"] == 100 for r in rows)
    assert all(sent["max_completion_tokens"] == ls.REPLY_TOKENS for sent in client.sent)
    table = ls.format_placements({"system prompt": rows})
    assert "n/r of    100" in table and "over the 4 requests: not reported by this provider" in table
    client = _Scripted([{"content": "ok"}] * 3)
    row = ls.measure_tool_change(client, "m", "masked", ls.core_tools(), ls.TOOL_SEARCH_TOOL,
                                 ls.session_start("x"), "weather?")
    assert row["cached_tokens"] is None and row["next_cached_tokens"] is None
    assert client.sent[1]["tool_choice"]["function"]["name"] == "read_file"
    assert all(sent["max_completion_tokens"] == ls.REPLY_TOKENS for sent in client.sent)
    assert ls.format_tool_changes([row]).splitlines()[-1] == "n/r: not reported by this provider"


def test_provider_demo_says_when_a_session_hit_the_cap(capsys):
    from course.llm import Target

    looping = _Scripted([{"calls": [("read_file", '{"path": "a"}')]}] * 2)
    ls.provider_demo([Target("m (your provider)", looping, "m", False)], ["go"],
                     ls.session_start("x"), [], ls.reply_lines, max_calls=2)
    assert capsys.readouterr().out.splitlines()[-1] == \
        "request(s) [1] stopped at the cap of 2 replies, still calling tools"


def test_the_trace_counts_the_catalogue_and_a_loaded_skill_as_skills():
    """Tagged by the code that put them in the context (course.tracing.tag), not by their text."""
    from course.tracing.composition import compose

    client = _Scripted([{"calls": [("load_skill", json.dumps({"name": "csv-report"})),
                                   ("read_file", '{"path": "a"}')]},
                        {"content": "Done."}])
    messages = ls.session_start("<available_skills>\n- csv-report\n</available_skills>")
    ls.run_session(client, "m", ["make the report"], messages, [ls.LOAD_SKILL_TOOL])
    catalogue, skill, other = messages[1], messages[4], messages[5]
    assert "csv-report" in skill["content"] and other["role"] == "tool"
    units = dict(zip(map(json.dumps, messages), compose(messages).parts))
    assert [units[json.dumps(m)] for m in (catalogue, skill, other)] == ["skills", "skills", "tool results"]
