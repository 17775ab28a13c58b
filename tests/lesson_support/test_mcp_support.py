"""Chapter 18's lesson support: the generated servers, the token table and the cache, the three
strategies on the same tasks, code execution in the sandbox, the risks and MCP's other primitives."""
import json
import sys

import jsonschema
import pytest

from course.mcp import connect
from lesson_support.mcp import cost, risks
from lesson_support.mcp.code_execution import run_program
from lesson_support.mcp.generated import SHAPES, generate_tools, generated_server, record
from lesson_support.mcp.primitives import primitives, resource_or_tool
from lesson_support.mcp.strategies import TASKS, compare, totals
from solutions.costs import OPENAI_RULES
from solutions.mcp import schema_tokens
from solutions.sandbox.confine import bubblewrap_problem


# ------------------------------------------------------------------ generated servers
@pytest.mark.parametrize("shape", SHAPES)
def test_a_generated_server_is_seeded_valid_and_served_as_generated(shape):
    tools = generate_tools(shape)
    assert len(tools) == SHAPES[shape].count
    assert generate_tools(shape) == tools and generate_tools(shape, seed=19) != tools
    assert len({t["name"] for t in tools}) == len(tools)
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
    with connect(generated_server(shape)) as conn:
        listed = conn.list_tools()
    assert [(t["name"], t["description"], t["inputSchema"]) for t in listed] == \
        [(t["name"], t["description"], t["inputSchema"]) for t in tools]


def test_a_generated_server_answers_from_its_records():
    with connect(generated_server("code_host")) as conn:
        found = conn.call_tool("get_issue", {"repo": "atlas", "number": 17})
        page = conn.call_tool("list_issue", {"repo": "atlas"})
        missing = conn.call_tool("get_issue", {"repo": "nowhere", "number": 1})
    assert found["structuredContent"]["title"] == record("code_host", "issue", "atlas", 17)["title"]
    assert len(page["structuredContent"]["items"]) == 30
    assert missing["isError"] and "no repo 'nowhere'" in missing["content"][0]["text"]


# ------------------------------------------------------------------ the bill and the cache
def test_the_token_table_counts_and_prices_the_schemas():
    rows = cost.token_table(requests=(1, 10))
    assert [r["tools"] for r in rows[::2]] == [42, 76, 100, 122]
    four = cost.session_tools(cost.listings())
    assert rows[-1]["schema_tokens"] == schema_tokens(four)["total"]
    for row in rows:
        assert row["tokens_sent"] == row["schema_tokens"] * row["requests"]
        openai_cached, openai_plain = row["OpenAI gpt-5.6-sol: cached"], row["OpenAI gpt-5.6-sol: uncached"]
        # one request pays the cache-write premium; ten mostly read at a tenth of the price
        assert (openai_cached > openai_plain) if row["requests"] == 1 else (openai_cached < openai_plain / 3)


def test_the_teaching_model_bills_the_tools_as_the_table_assumes():
    first, second, third = cost.measured_session()
    tokens = schema_tokens(cost.session_tools(cost.listings()))["total"]
    assert first["cached_tokens"] == 0 and first["prompt_tokens"] > tokens
    assert second == third and second["cached_tokens"] == OPENAI_RULES.cached(second["prompt_tokens"])


def test_a_tool_added_mid_session_costs_the_cache_from_where_it_lands():
    rows = {r["change"]: r for r in cost.mid_session()}
    whole = rows["nothing"]["cached_tokens"]
    assert rows["a tool added at the end of the list"]["cached_tokens"] == whole
    first_server = schema_tokens(cost.session_tools(cost.listings(cost.ORDER[:1])))["total"]
    assert 0 < rows["a tool added to the first server"]["cached_tokens"] <= first_server
    assert rows["a description edited in the first server"]["cached_tokens"] == 0
    assert rows["servers connected in another order"]["cached_tokens"] == 0


# ------------------------------------------------------------------ the strategies
def test_the_judge_wants_the_one_fact_and_no_change():
    task = TASKS[0]
    assert task.judge(f"The title is {task.expected()}.", ["code_host__get_issue"])
    assert not task.judge(f"{task.expected()} and {task.value(3)}", ["code_host__list_issue"])
    assert not task.judge(task.expected(), ["code_host__delete_issue"])
    assert not task.judge("I do not know", ["code_host__get_issue"])


def test_three_strategies_on_the_same_tasks():
    rows = compare(tasks=(TASKS[0], TASKS[-1]))
    by = {(r["strategy"], r["task"]): r for r in rows}
    one, listing = TASKS[0].request, TASKS[-1].request
    assert all(by[(s, one)]["success"] for s in ("all schemas", "on demand", "code execution"))
    # a page of 30 records pasted whole is not an answer; the program prints only the one title
    assert not by[("all schemas", listing)]["success"] and by[("code execution", listing)]["success"]
    assert by[("on demand", one)]["called"] == ["tool_search", "code_host__get_issue"]
    summary = {t["strategy"]: t for t in totals(rows)}
    assert summary["all schemas"]["prompt_tokens"] > 5 * summary["on demand"]["prompt_tokens"]
    assert summary["on demand"]["prompt_tokens"] > summary["code execution"]["prompt_tokens"]
    assert all(r["program_by"] for r in rows if r["strategy"] == "code execution")


@pytest.mark.skipif(bool(bubblewrap_problem()), reason="bubblewrap cannot sandbox here")
def test_a_program_runs_confined():
    run = run_program("import os, socket, sys\n"
                      "print('etc/passwd:', os.path.exists('/etc/passwd'))\n"
                      "print('home:', os.path.exists('/home'))\n"
                      "print('beside the interpreter:', sorted(os.listdir(os.path.dirname(sys.base_prefix))))\n"
                      "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=5)\n"
                      "except OSError as exc:\n    print('no network:', type(exc).__name__)\n")
    assert run.confinement == "bubblewrap" and run.exit_code == 0
    assert "no network:" in run.output
    # only the system, the interpreter and the checkout are there, read-only
    assert "etc/passwd: False" in run.output and "home: False" in run.output
    if not sys.base_prefix.startswith("/usr/"):  # an interpreter of its own (pyenv): only it is bound
        assert f"beside the interpreter: ['{sys.base_prefix.rsplit('/', 1)[1]}']" in run.output


# ------------------------------------------------------------------ risks
def test_review_flags_a_poisoned_description_and_not_a_clean_one():
    assert risks.review_definition({"description": "Add two integers."}) == []
    assert len(risks.review_definition({"description": risks.POISON})) >= 4
    hidden = {"description": "Add.", "inputSchema": {"properties": {"a": {"description": "a\u200b"}}}}
    assert risks.review_definition(hidden) == ["invisible characters"]


def test_pinning_catches_the_rug_pull():
    result = risks.rug_pull()
    assert result["first_run"] and result["approved"] == "Add two integers."
    assert result["changes"] == {"changed": ["calc__add"], "added": [], "removed": []}
    assert risks.POISON in result["served_now"] and "approve" in result["refused"]


def test_colliding_names_are_refused_and_namespaces_keep_both():
    result = risks.collision()
    assert result["unprefixed_names"] == ["search", "search"]
    assert result["unprefixed"].startswith("HTTP 400") and "Duplicate tool name" in result["unprefixed"]
    assert result["namespaced_names"] == ["wiki__search", "tickets__search"]


@pytest.mark.parametrize("defence, tripped", [("none", True), ("provenance tags", False),
                                              ("least privilege", False)])
def test_an_injected_result_is_judged_by_its_canary(defence, tripped):
    result = risks.injected_result(defence)
    assert result["tripped"] is tripped
    assert ("chat__post_message" in result["tools_offered"]) is (defence != "least privilege")


# ------------------------------------------------------------------ resources and prompts
def test_resources_and_prompts_are_served_and_a_resource_costs_no_schema(tmp_path):
    found = primitives(tmp_path)
    assert ("course://desk/rules", "desk rules") in found["resources"]
    assert found["prompts"] == [("move_trip", ["booking_ref", "pin", "new_day"])]
    assert "verify_identity" in found["rules"]
    compared = resource_or_tool(found["rules"], 10)
    assert compared["as_resource"] < compared["as_tool"]
    assert json.dumps(compared)  # plain data, for the widget


def test_without_bubblewrap_a_program_still_runs_and_says_how(monkeypatch):
    from lesson_support.mcp import code_execution

    monkeypatch.setattr(code_execution, "bubblewrap_problem", lambda: "COURSE_NO_BWRAP=1 (test)")
    run = run_program("from lesson_support.mcp.code_api import call\n"
                      "print(call('code_host', 'get_issue', repo='atlas', number=17)['title'])\n")
    assert run.exit_code == 0 and run.output == record("code_host", "issue", "atlas", 17)["title"] + "\n"
    assert "COURSE_NO_BWRAP" in run.confinement
