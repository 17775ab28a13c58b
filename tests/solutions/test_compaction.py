"""Compaction with pair-checking (solutions/compaction/): the study guide's demonstration,
every kind of pairing problem, backups, the model summary, the trigger and chained compactions.
Property tests over random transcripts are in test_compaction_properties.py."""
import copy
import functools
import importlib.util
import json

import openai
import pytest

from course.llm.summary import identifiers

from solutions.compaction import (BACKUPS_HEADING, COMPACTION_INSTRUCTION,
                                  ModelSummarizer, check_pairing, compact,
                                  drop_oldest_messages, is_summary, load_transcript, replay,
                                  rule_based_summary, save_transcript, should_compact,
                                  split_head, split_turns, summary_parts,
                                  unique_call_ids)
from solutions.tokens import count_request_tokens, request_token_ids
from solutions.truncation import Workspace
from course.paths import DATA_DIR
from tests.messages import calling as asks, tool_call, tool_result as result

DATA = DATA_DIR / "compaction"
MODEL = "teaching-model"


@pytest.fixture(scope="module")
def seed():
    return load_transcript(DATA / "seed_example.jsonl")


@pytest.fixture(scope="module")
def long_run():
    return load_transcript(DATA / "long_run.jsonl")


@pytest.fixture(scope="module")
def tools():
    return json.loads((DATA / "tools.json").read_text())


def call(call_id, name="run_command", **args):
    return tool_call(call_id, name, args)


def old_part(original, compacted):
    """The messages of `original` that `compacted` replaced by its summary."""
    head, rest = split_head(original)
    recent = len(compacted) - len(head) - 1
    return rest[:len(rest) - recent]


def texts_of(messages):
    """Every text a summary could draw on: contents and call arguments."""
    for m in messages:
        yield m.get("content") or ""
        for c in m.get("tool_calls") or ():
            yield c["function"]["arguments"]


HEAD = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Do the task."}]


# ------------------------------------------------------------------ the study guide's lab


def test_seed_demonstration_10_messages_become_7_with_pairing_intact(seed):
    assert len(seed) == 10 and check_pairing(seed).ok
    small = compact(seed)  # keep_turns=2, the rule-based summary
    assert len(small) == 7 and check_pairing(small).ok
    assert small[:2] == seed[:2]        # system + task verbatim
    assert small[3:] == seed[6:]        # the last two turns whole
    body, backups = summary_parts(small[2]["content"])
    assert small[2]["role"] == "user" and backups == []
    assert body.splitlines() == ["Earlier progress:",
                                 '- called run_command {"command": "cmake try1"}',
                                 "- Could NOT find ZLIB",
                                 '- called run_command {"command": "cmake try2"}',
                                 "- zlib.h not found"]


def test_seed_wrong_cut_is_reported_at_index_2(seed):
    bad = seed[:2] + seed[3:]  # drops the first assistant call, keeps its result
    verdict = check_pairing(bad)
    assert (verdict.ok, verdict.index, verdict.kind, verdict.call_id) == (False, 2, "orphan_result", "call_1")
    assert str(verdict).startswith("message 2: ")


def test_the_teaching_model_rejects_the_wrong_cut_and_accepts_the_compacted_list(seed, client):
    with pytest.raises(openai.BadRequestError, match="messages\\[2\\]"):
        client.chat.completions.create(model=MODEL, messages=seed[:2] + seed[3:])
    reply = client.chat.completions.create(model=MODEL, messages=compact(seed))
    assert reply.choices[0].finish_reason == "stop"


def test_fixtures_are_reproduced_by_their_script(seed, long_run, tools):
    spec = importlib.util.spec_from_file_location("make_fixtures", DATA / "make_fixtures.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.seed_example() == seed
    assert script.long_run() == long_run
    assert script.TOOLS == tools
    assert (DATA / "long_run.jsonl").read_text() == "".join(
        json.dumps(m, ensure_ascii=False) + "\n" for m in script.long_run())


def test_long_run_is_valid_and_has_the_shapes_the_chapter_needs(long_run, client, tools):
    assert check_pairing(long_run).ok
    parallel = [m for m in long_run if len(m.get("tool_calls") or ()) > 1]
    assert len(parallel) >= 4
    assert sum(m["role"] == "user" for m in long_run) == 2  # the task and a later request
    usage = client.chat.completions.create(model=MODEL, messages=long_run, tools=tools).usage
    assert usage.prompt_tokens == count_request_tokens(long_run, tools)


# ------------------------------------------------------------------ check_pairing, problem by problem


@pytest.mark.parametrize("messages, index, kind", [
    (HEAD + [result("a")], 2, "orphan_result"),
    (HEAD + [asks(call("a"))], 2, "missing_result"),                       # missing at the end
    (HEAD + [asks(call("a"), call("b")), result("a"), {"role": "user", "content": "?"}],
     2, "missing_result"),                                                 # one of two parallel
    (HEAD + [asks(call("a")), {"role": "user", "content": "hm"}, result("a")], 4, "late_result"),
    (HEAD + [asks(call("a")), result("a"), result("a")], 4, "duplicate_result"),
    (HEAD + [asks(call("a"), call("a")), result("a"), result("a")], 2, "duplicate_id"),
    (HEAD + [asks(call("a")), result("a"), asks(call("a")), result("a")], 4, "reused_id"),
    (HEAD + [{"role": "robot", "content": "?"}], 2, "malformed"),
    (HEAD + ["not a dict"], 2, "malformed"),
    (HEAD + [{"role": "tool", "content": "no id"}], 2, "malformed"),
    (HEAD + [{"role": "assistant", "content": None, "tool_calls": []}], 2, "malformed"),
    (HEAD + [asks({"type": "function", "function": {"name": "x", "arguments": "{}"}})], 2, "malformed"),
    (HEAD + [{"role": "user", "content": "hi"}, result("x")], 3, "orphan_result"),
])
def test_each_problem_is_found_at_the_right_message(messages, index, kind):
    verdict = check_pairing(messages)
    assert (verdict.ok, verdict.index, verdict.kind) == (False, index, kind), str(verdict)
    assert verdict.reason


@pytest.mark.parametrize("messages", [
    HEAD + [asks(call("a"))],
    HEAD + [result("a")],
    HEAD + [asks(call("a")), {"role": "user", "content": "hm"}, result("a")],
    HEAD + [asks(call("a")), result("a"), result("a")],
    HEAD + [asks(call("a"), call("a")), result("a"), result("a")],
    HEAD + [asks(call("a")), result("a"), asks(call("a")), result("a")],
])
def test_the_teaching_model_rejects_what_the_checker_rejects(messages, client):
    assert not check_pairing(messages).ok
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=MODEL, messages=messages)


def test_valid_shapes_pass(client):
    messages = HEAD + [
        asks(call("a"), call("b"), call("c"), content="three at once"),
        result("c"), result("a"), result("b"),   # results in any order
        {"role": "assistant", "content": "thinking"},
        {"role": "user", "content": "more"},
        asks(call("d")), result("d"),
        {"role": "assistant", "content": "done"},
    ]
    assert check_pairing(messages).ok and str(check_pairing(messages)) == "pairing intact"
    client.chat.completions.create(model=MODEL, messages=messages)


def test_check_pairing_wants_a_list():
    verdict = check_pairing({"role": "user"})
    assert (verdict.ok, verdict.index, verdict.kind) == (False, None, "malformed")
    assert str(verdict) == "check_pairing expects a list of message dicts, got dict"


@pytest.mark.parametrize("role", [["user"], {"name": "user"}, 5, None, True])
def test_a_role_that_is_not_a_string_is_refused_in_a_sentence(role):
    # JSON from another agent can hold any value; a list role used to raise TypeError
    messages = HEAD + [{"role": role, "content": "x"}]
    verdict = check_pairing(messages)
    assert (verdict.ok, verdict.index, verdict.kind) == (False, 2, "malformed")
    with pytest.raises(ValueError, match="already broken: message 2: not a message with a known role"):
        compact(messages)
    with pytest.raises(ValueError, match="message 2 is not a message with a known role"):
        split_turns(messages)


def test_split_turns_and_compact_refuse_what_is_not_a_list():
    with pytest.raises(ValueError, match="split_turns expects a list of message dicts, got dict"):
        split_turns({"role": "user"})
    with pytest.raises(ValueError, match="already broken: check_pairing expects a list"):
        compact("not a list")


def test_a_call_with_a_malformed_function_is_summarised_not_a_crash():
    # check_pairing judges ids only; the summary used to raise AttributeError on function: 5
    messages = HEAD + [asks({"id": "a", "type": "function", "function": 5}), result("a"),
                       {"role": "assistant", "content": "done"}]
    small = compact(messages, keep_turns=1)
    assert "called None None" in small[2]["content"]


# ------------------------------------------------------------------ reused ids


def test_unique_call_ids_renames_a_reused_id_and_its_result():
    messages = HEAD + [asks(call("a"), call("b")), result("b"), result("a"),
                       asks(call("a")), result("a", "second"),
                       asks(call("a"), call("a-2")), result("a-2"), result("a", "third")]
    assert check_pairing(messages).kind == "reused_id"
    before = copy.deepcopy(messages)
    fixed = unique_call_ids(messages)
    assert messages == before, "the input must not change"
    assert check_pairing(fixed).ok, str(check_pairing(fixed))
    assert [c["id"] for c in fixed[2]["tool_calls"]] == ["a", "b"]     # first use keeps its id
    assert [c["id"] for c in fixed[5]["tool_calls"]] == ["a-3"]        # a-2 is taken later on
    assert fixed[6] == result("a-3", "second")
    assert [c["id"] for c in fixed[7]["tool_calls"]] == ["a-4", "a-2"]
    assert fixed[9] == result("a-4", "third")
    assert unique_call_ids(fixed) == fixed


def test_unique_call_ids_leaves_unique_and_malformed_transcripts_equal(seed):
    assert unique_call_ids(seed) == seed and unique_call_ids(seed) is not seed
    odd = HEAD + ["text", {"role": ["user"]}, asks(call("a"), call("a")), result("a"), result("a"),
                  asks({"id": ["a"]}), {"role": "tool", "tool_call_id": ["a"], "content": "x"}]
    assert unique_call_ids(odd) == odd
    with pytest.raises(ValueError, match="unique_call_ids expects a list"):
        unique_call_ids({"role": "user"})


def test_compact_refusal_of_reused_ids_names_the_helper():
    messages = HEAD + [asks(call("a")), result("a"), asks(call("a")), result("a")]
    with pytest.raises(ValueError, match=r"unique_call_ids\(messages\) renames reused ids"):
        compact(messages)
    assert check_pairing(compact(unique_call_ids(messages), keep_turns=1)).ok


# ------------------------------------------------------------------ turns and head


def test_split_turns_keeps_parallel_results_with_their_call():
    messages = [asks(call("a"), call("b")), result("b"), result("a"),
                {"role": "assistant", "content": "x"}]
    assert split_turns(messages) == [messages[:3], messages[3:]]
    assert split_turns([]) == []


def test_split_turns_refuses_a_leading_tool_result():
    with pytest.raises(ValueError, match="message 0 is a tool result"):
        split_turns([result("a")])


def test_split_head_takes_system_messages_and_the_first_task(seed):
    head, rest = split_head(seed)
    assert head == seed[:2] and rest == seed[2:]
    two_system = [{"role": "system", "content": "a"}, {"role": "developer", "content": "b"},
                  {"role": "user", "content": "task"}, {"role": "user", "content": "more"}]
    assert split_head(two_system) == (two_system[:3], two_system[3:])
    system = {"role": "system", "content": "a"}
    assert split_head([system, asks(call("x"))]) == ([system], [asks(call("x"))])


GREETING = {"role": "assistant", "content": "Hi! How can I help?"}
TASK = {"role": "user", "content": "Rename the build target to libcore and rebuild."}


def test_split_head_keeps_a_greeting_and_the_task_after_it():
    system = {"role": "system", "content": "a"}
    messages = [system, GREETING, TASK, asks(call("x")), result("x")]
    assert split_head(messages) == (messages[:3], messages[3:])
    assert split_head([GREETING, TASK]) == ([GREETING, TASK], [])
    # calls before any user message: the task is in the instructions, not in a later message
    acting = [system, asks(call("x")), result("x"), TASK]
    assert split_head(acting) == ([system], acting[1:])
    # a summary is never the task: chained compactions keep the same head
    summary = compact([system, asks(call("x")), result("x"), GREETING], keep_turns=1)
    assert split_head(summary) == ([system], summary[1:])


def test_compact_keeps_the_task_verbatim_when_the_assistant_speaks_first():
    messages = [{"role": "system", "content": "You are a build agent."}, GREETING, TASK]
    for n in range(4):
        messages += [asks(call(f"c{n}", path=f"src/{n}.c")), result(f"c{n}")]
    small = compact(messages, keep_turns=1)
    assert small[:3] == messages[:3] and is_summary(small[3])
    assert check_pairing(small).ok
    assert compact(small + [asks(call("c9")), result("c9")], keep_turns=1)[:3] == messages[:3]


# ------------------------------------------------------------------ compact


def test_compact_does_not_modify_its_input(seed):
    before = copy.deepcopy(seed)
    compact(seed, keep_turns=1)
    assert seed == before


def test_compact_with_nothing_old_returns_an_equal_copy(seed):
    same = compact(seed, keep_turns=4)
    assert same == seed and same is not seed
    once = compact(seed, keep_turns=2)
    assert compact(once, keep_turns=2) == once  # only the summary is old: nothing new to fold in


def test_keep_zero_summarises_everything_after_the_head(seed):
    small = compact(seed, keep_turns=0)
    assert len(small) == 3 and is_summary(small[2]) and check_pairing(small).ok


def test_compact_refuses_a_broken_transcript_and_bad_settings(seed):
    with pytest.raises(ValueError, match="already broken: message 2"):
        compact(seed[:2] + seed[3:])
    with pytest.raises(ValueError, match="keep_turns must be a non-negative integer"):
        compact(seed, keep_turns=-1)


def test_parallel_calls_and_multi_tool_turns_stay_whole():
    messages = HEAD + [asks(call("a"), call("b")), result("a"), result("b"),
                       asks(call("c"), call("d"), call("e")), result("e"), result("c"), result("d"),
                       asks(call("f")), result("f")]
    for keep in range(4):
        small = compact(messages, keep_turns=keep)
        assert check_pairing(small).ok
        kept = [m for m in small if not is_summary(m)][2:]
        assert kept == messages[len(messages) - len(kept):]


def test_chained_compactions_carry_the_earlier_summary_forward(seed):
    first = compact(seed, keep_turns=2)
    extended = first + [asks(call("call_5", command="make")),
                        result("call_5", json.dumps({"ok": False, "error": "No rule to make target"}))]
    second = compact(extended, keep_turns=1)
    assert check_pairing(second).ok and len(second) == 5
    body, _ = summary_parts(second[2]["content"])
    for line in summary_parts(first[2]["content"])[0].splitlines()[1:]:
        assert line in body.splitlines()
    assert "- undefined reference to inflate" in body.splitlines()
    assert body.count("Earlier progress:") == 1


def test_rule_based_summary_ignores_non_json_and_records_json_errors():
    messages = [asks(call("a", command="x")), result("a", "plain error text"),
                asks(call("b", command="y")), result("b", json.dumps({"error": "E42 boom"}))]
    assert rule_based_summary(messages).splitlines()[1:] == [
        '- called run_command {"command": "x"}', '- called run_command {"command": "y"}', "- E42 boom"]
    assert rule_based_summary([]) == "Earlier progress: (no calls or errors yet)"


def test_naive_window_breaks_pairing_and_the_checker_sees_it(seed):
    verdicts = [check_pairing(drop_oldest_messages(seed, n)) for n in range(1, 8)]
    assert any(not v.ok for v in verdicts) and any(v.ok for v in verdicts)
    assert all(v.kind == "orphan_result" for v in verdicts if not v.ok)


# ------------------------------------------------------------------ backups


def test_backup_is_written_first_and_readable_with_the_agents_own_tool(seed, tmp_path):
    ws = Workspace(tmp_path)
    small = compact(seed, workspace=ws)
    _, backups = summary_parts(small[2]["content"])
    assert backups == ["- .agent/transcripts/transcript-0001.jsonl (10 messages)"]
    assert BACKUPS_HEADING in small[2]["content"]
    page = ws.read_file(".agent/transcripts/transcript-0001.jsonl")
    assert [json.loads(line) for line in page.splitlines()[1:]] == seed
    assert load_transcript(ws.resolve(".agent/transcripts/transcript-0001.jsonl")) == seed


def test_chained_backups_are_all_listed(seed, tmp_path):
    ws = Workspace(tmp_path)
    first = compact(seed, keep_turns=3, workspace=ws)
    second = compact(first, keep_turns=1, workspace=ws)
    _, backups = summary_parts(second[2]["content"])
    assert backups == [f"- .agent/transcripts/transcript-0001.jsonl ({len(seed)} messages)",
                       f"- .agent/transcripts/transcript-0002.jsonl ({len(first)} messages)"]
    assert load_transcript(ws.resolve(".agent/transcripts/transcript-0002.jsonl")) == first


def test_load_transcript_names_the_bad_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "x"}\n{oops\n')
    with pytest.raises(ValueError, match="line 2: not valid JSON"):
        load_transcript(path)
    path.write_text('[1, 2]\n')
    with pytest.raises(ValueError, match="line 1: expected a JSON object"):
        load_transcript(path)
    save_transcript(HEAD, path)
    assert load_transcript(path) == HEAD


# ------------------------------------------------------------------ the model summary


def test_summary_request_is_the_prefix_unchanged_plus_the_instruction(long_run, tools):
    summarizer = ModelSummarizer(client=None, model=MODEL, tools=tools)
    request = summarizer.request(long_run)
    assert request["messages"][:-1] == long_run
    assert all(a is b for a, b in zip(request["messages"], long_run))
    assert request["messages"][-1] == {"role": "user", "content": COMPACTION_INSTRUCTION}
    assert request["tools"] is tools and request["tool_choice"] == "none"
    for section in ("Goal and constraints", "Confirmed facts", "Changes made",
                    "Failed attempts and why", "Progress and open items", "verbatim"):
        assert section in COMPACTION_INSTRUCTION
    assert "tools" not in ModelSummarizer(None, MODEL).request(HEAD)


def test_cache_safe_summary_reuses_the_cached_prefix(long_run, tools, client):
    # The agent's last step sent the whole run; the summary request starts with the same tokens.
    agent_request = request_token_ids(long_run, tools)
    client.chat.completions.create(model=MODEL, messages=long_run, tools=tools)
    summarizer = ModelSummarizer(client, MODEL, tools)
    small = compact(long_run, keep_turns=4, summarize=summarizer)
    prefix = split_head(long_run)[0] + old_part(long_run, small)
    summary_request = request_token_ids(summarizer.request(prefix)["messages"], tools)
    common = next(i for i, (a, b) in enumerate(zip(agent_request, summary_request)) if a != b)
    usage = summarizer.last_usage
    assert usage.prompt_tokens == len(summary_request)
    assert common > 0.8 * len(summary_request)
    assert usage.prompt_tokens_details.cached_tokens == common // 128 * 128  # OpenAI's rule
    assert check_pairing(small).ok
    client.chat.completions.create(model=MODEL, messages=small, tools=tools)  # accepted


def test_a_summary_that_changes_the_tools_misses_the_cache(long_run, tools, client):
    client.chat.completions.create(model=MODEL, messages=long_run, tools=tools)
    summarizer = ModelSummarizer(client, MODEL)  # forgets the tools: the prefix differs
    compact(long_run, keep_turns=4, summarize=summarizer)
    assert summarizer.last_usage.prompt_tokens_details.cached_tokens == 0


def test_model_summary_keeps_the_identifiers_the_rule_loses(long_run, tools, client):
    model_text = compact(long_run, 4, ModelSummarizer(client, MODEL, tools))[2]["content"]
    rule_text = compact(long_run, 4)[2]["content"]
    old = old_part(long_run, compact(long_run, 4))
    found = identifiers("\n".join(texts_of(old)))
    assert found and all(i in model_text for i in found)
    lost = [i for i in found if i not in rule_text]
    # The rule keeps calls and JSON errors only: facts found in plain-text output are gone,
    # such as the host library that caused the link error.
    assert "/usr/lib/x86_64-linux-gnu/libz.so" in lost
    assert "collect2: error: ld returned 1 exit status" in model_text
    assert "collect2" not in rule_text


def test_a_summary_cut_short_is_refused_and_nothing_is_lost(seed, client):
    before = copy.deepcopy(seed)
    with pytest.raises(RuntimeError, match="cut off at max_tokens=5"):
        compact(seed, summarize=ModelSummarizer(client, MODEL, max_tokens=5))
    assert seed == before


# ------------------------------------------------------------------ the trigger and the saw-tooth


def test_should_compact_only_above_the_threshold(seed):
    tokens = count_request_tokens(seed)
    assert not should_compact(seed, tokens) and should_compact(seed, tokens - 1)


def test_replay_makes_a_sawtooth_and_every_chained_compaction_is_accepted(long_run, tools, client):
    contexts = []

    def shrink(messages):
        smaller = compact(messages, keep_turns=4)
        contexts.append(smaller)
        return smaller

    run = replay(long_run, 5000, shrink, tools)
    assert len(run.compacted_at) >= 3                      # chained: a third compaction and more
    for step, peak in zip(run.compacted_at, run.peaks, strict=True):
        assert run.sizes[step] < run.sizes[step - 1]       # the saw-tooth drops at each one...
        assert run.sizes[step] < 5000 < peak               # ...from above the threshold
    steps, tokens = run.sawtooth()
    assert len(steps) == len(run.sizes) + len(run.compacted_at) and steps == sorted(steps)
    assert max(tokens) == max(run.peaks) > max(run.sizes)
    assert run.sizes[-1] == count_request_tokens(run.messages, tools)
    assert sum(is_summary(m) for m in run.messages) == 1
    for context in contexts:
        assert check_pairing(context).ok
        client.chat.completions.create(model=MODEL, messages=context, tools=tools)
    without = replay(long_run, float("inf"), shrink, tools)
    assert without.compacted_at == [] and without.sizes[-1] == count_request_tokens(long_run, tools)
    assert max(run.sizes) < without.sizes[-1]


def test_replay_sizes_match_direct_counts(long_run, tools):
    steps, peaks = [], []
    shrink = functools.partial(compact, keep_turns=3)
    run = replay(long_run, 4000, shrink, tools)
    head, rest = split_head(long_run)
    context = list(head)
    for step, turn in enumerate(split_turns(rest)):
        context = context + turn
        if count_request_tokens(context, tools) > 4000:
            peaks.append(count_request_tokens(context, tools))
            context = shrink(context)
        steps.append(count_request_tokens(context, tools))
    assert steps == run.sizes and peaks == run.peaks


def test_the_summary_limit_is_sent_under_the_name_every_provider_accepts(client):
    request = ModelSummarizer(client, MODEL, max_tokens=300).request([{"role": "user", "content": "hi"}])
    assert request["max_completion_tokens"] == 300 and "max_tokens" not in request
