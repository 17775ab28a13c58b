"""Every reference function that takes a transcript keeps its promises on real-world shapes.

The shapes are `lesson_support.foreign_transcripts` (assistant-first openings, ids reused across
turns, 12 parallel calls answered out of order, content parts and null contents, dotted and
dashed tool names, arguments that are not JSON, a 1 MiB result, 500+ messages with 1,000+
identifiers, and all of them combined). Each function is run on a fixed corpus (CORPUS: a few
seeds of every shape) and, in one property test, on random mixtures of the cheap features:

    no crash, or a clear refusal in a sentence (a ValueError) where the docstring says so
    pairing intact (check_pairing) in everything a function returns
    the head (system messages and the user's task) kept verbatim
    nothing promised lost: offloaded files hold the full outputs, backups equal the transcript,
      every call and error stays in a summary, identifiers stay whole in archives
    within the window, or a signal that says it is not

The teaching model (through course.llm.serve()) answers each shape with 200 or a JSON 400, and
validate_messages and count_request_tokens agree with it.
"""
import copy
import functools
import json
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

import course.llm
from course.identifiers import identifiers
from lesson_support.foreign_transcripts import FEATURES, SHAPES, transcripts
from solutions.agent_loop import validate_messages
from solutions.compaction import (check_pairing, compact, is_summary, load_transcript, replay,
                                  rule_based_summary, save_transcript, should_compact,
                                  split_head, split_turns, summary_parts, unique_call_ids)
from solutions.costs.cache_friendly import cache_friendly_request
from solutions.injection.roles import separate_roles
from solutions.production_compaction import (RESULTS_DIR, CircuitBreaker, LayeredCompactor,
                                             ResultStore, Settings, TokenMeter, archive_turn,
                                             budget_tool_results, compact_with_breaker,
                                             drop_noise, micro_compact)
from solutions.status_bar import (events_from_messages, latest_status, new_status, open_calls,
                                  place_status, render_status)
from solutions.tokens import count_request_tokens
from solutions.truncation import Workspace
from tests.course.test_llm_server import raw_post

# Transcripts drawn per shape: the expensive shapes (1 MiB, 500+ messages) fewer times.
DRAWS = {shape: 2 if shape in ("huge_result", "long_run", "combined") else 4 for shape in SHAPES}
CORPUS = [(shape, seed, 1 + 2 * seed) for shape in SHAPES for seed in range(DRAWS[shape])]
IDS = [f"{shape}-{seed}" for shape, seed, _ in CORPUS]
CHEAP = [f for f in FEATURES if f not in ("huge_result", "long_run")]
MIXTURES = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
PATH = re.compile(re.escape(RESULTS_DIR) + r"/\S+?\.txt")
WINDOW = Settings(window=8_000, budget_chars=2_000, keep_turns=3)


@functools.cache
def _generated(shape, seed, size):
    return SHAPES[shape](seed, size)


@pytest.fixture(params=CORPUS, ids=IDS)
def messages(request):
    """A fresh copy of a corpus transcript (a function that modifies its input is caught by
    the comparison with the cached original)."""
    return copy.deepcopy(_generated(*request.param))


@pytest.fixture(scope="module")
def teaching_model():
    with course.llm.serve() as server:
        yield server


# ----------------------------------------------------------------------------- helpers

def text(content) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def task_of(messages) -> dict:
    return next(m for m in messages if m["role"] == "user")


def reuses_ids(messages) -> bool:
    return check_pairing(messages).kind == "reused_id"


def unique(messages):
    """The transcript with reused ids renamed (a reference function's documented remedy)."""
    return unique_call_ids(messages) if reuses_ids(messages) else messages


def originals(messages) -> dict:
    """tool_call_id -> the result's full text (ids are unique here)."""
    return {m["tool_call_id"]: text(m["content"]) for m in messages if m["role"] == "tool"}


def assert_saved_outputs_are_full(context, full, store):
    """Every result a layer replaced names a file, and that file holds the full output."""
    for m in context:
        if m.get("role") != "tool" or text(m["content"]) == full[m["tool_call_id"]]:
            continue
        named = PATH.findall(text(m["content"]))
        if not named:  # changed without a file: only noise removal may do that
            assert "[noise removed: " in text(m["content"]), text(m["content"])[:200]
            continue
        saved = store.read(named[0])
        assert saved == full[m["tool_call_id"]], (
            f"{named[0]} holds {len(saved):,} characters, not the full output of "
            f"{m['tool_call_id']} ({len(full[m['tool_call_id']]):,}): {saved[:120]!r}")


def assert_head_kept(context, messages):
    head = split_head(messages)[0]
    assert task_of(messages) in head, "split_head lost the user's task"
    assert all(m in head for m in messages[:messages.index(task_of(messages))]
               if m["role"] == "system")
    assert context[:len(head)] == head, "the head (instructions and task) was not kept verbatim"


def kept_facts(messages):
    """What rule_based_summary promises: every call made and every error, verbatim."""
    for m in messages:
        for c in m.get("tool_calls") or ():
            yield f"called {c['function']['name']} {c['function']['arguments']}"
        if m["role"] == "tool" and text(m["content"]).startswith('{"ok": false'):
            yield json.loads(text(m["content"]))["error"]


# ----------------------------------------------------------------------------- the checks
# Each takes a transcript (and a folder): the corpus tests and the mixture test share them.

def check_pairing_and_unique_ids(messages, folder=None):
    verdict = check_pairing(messages)
    if reuses_ids(messages):
        assert "unique_call_ids" in verdict.reason
        renamed = unique_call_ids(messages)
        assert check_pairing(renamed).ok, check_pairing(renamed)
        assert len(renamed) == len(messages)
        for old, new in zip(messages, renamed):  # only ids change
            assert {k: v for k, v in old.items() if k not in ("tool_calls", "tool_call_id")} == \
                {k: v for k, v in new.items() if k not in ("tool_calls", "tool_call_id")}
    else:
        assert verdict.ok, verdict
        assert unique_call_ids(messages) == messages


def check_turns_and_head(messages, folder=None):
    head, rest = split_head(messages)
    assert head + rest == messages
    assert_head_kept(messages, messages)
    turns = split_turns(rest)
    assert [m for turn in turns for m in turn] == rest
    for turn in turns:
        assert turn[0]["role"] != "tool"
        made = {c["id"] for c in turn[0].get("tool_calls") or ()}
        assert {m["tool_call_id"] for m in turn[1:]} == made


def check_compact(messages, folder):
    if reuses_ids(messages):
        with pytest.raises(ValueError, match="unique_call_ids"):
            compact(messages)
    messages = unique(messages)
    head, rest = split_head(messages)
    turns = split_turns(rest)
    workspace = Workspace(folder)
    for keep in (0, 2):
        small = compact(messages, keep_turns=keep, workspace=workspace)
        if keep >= len(turns):  # nothing old to fold in
            assert small == messages
            continue
        assert check_pairing(small).ok, check_pairing(small)
        assert_head_kept(small, messages)
        assert small[len(head) + 1:] == [m for t in turns[len(turns) - keep:] for m in t]
        summary = small[len(head)]["content"]
        assert is_summary(small[len(head)])
        old = [m for t in turns[:len(turns) - keep] for m in t]
        for fact in kept_facts(old):
            assert fact in summary, f"the summary lost {fact[:100]!r}"
        backup = summary_parts(summary)[1][0].split()[1]
        assert load_transcript(workspace.resolve(backup)) == messages


def check_replay(messages, folder=None):
    messages = unique(messages)
    contexts = []

    def shrink(context):
        contexts.append(compact(context, keep_turns=2))
        return contexts[-1]

    # Half way between the head and the whole transcript: replay must compact at least once.
    threshold = (count_request_tokens(split_head(messages)[0]) + count_request_tokens(messages)) // 2
    result = replay(messages, threshold, shrink)
    assert contexts, "the threshold is below every transcript's size: replay must compact"
    for context in contexts + [result.messages]:
        assert check_pairing(context).ok, check_pairing(context)
        assert_head_kept(context, messages)
    assert should_compact(messages, threshold) == (count_request_tokens(messages) > threshold)


def check_budget(messages, folder):
    """Layer 1 on the raw transcript, reused ids included: a later result must never be
    shown as the preview of an earlier one (or the input is refused in a sentence)."""
    store = ResultStore(folder)
    limit = 2_000
    try:
        out = budget_tool_results(messages, limit, store)
    except ValueError as refusal:
        assert reuses_ids(messages), f"refused a transcript with unique ids: {refusal}"
        return
    assert len(out) == len(messages)
    for before, after in zip(messages, out):
        if before["role"] != "tool":
            assert after == before
            continue
        full, shown = text(before["content"]), text(after["content"])
        if len(full) > limit:
            named = PATH.findall(shown)
            assert named, f"a result of {len(full):,} characters was kept in context"
            assert store.read(named[0]) == full
            assert (folder / named[0]).read_text(encoding="utf-8") == full
        else:
            assert after == before
    assert budget_tool_results(messages, limit, store) == out  # frozen decisions


def check_noise(messages, folder=None):
    rules = Settings().noise_rules
    out = drop_noise(messages, rules)
    assert len(out) == len(messages)
    patterns = [re.compile(p) for p in rules.values()]
    for before, after in zip(messages, out):
        if after == before:
            continue
        assert before["role"] == "tool" and after["tool_call_id"] == before["tool_call_id"]
        *kept, note = text(after["content"]).split("\n")
        assert note.startswith("[noise removed: ")
        assert kept == [line for line in text(before["content"]).split("\n")
                        if not any(p.search(line) for p in patterns)]


def check_budget_then_micro(messages, folder):
    """Issue 25, item 1: clearing a result that layer 1 offloaded keeps the full output."""
    messages = unique(messages)
    store = ResultStore(folder)
    budgeted = budget_tool_results(messages, 2_000, store)
    out, _ = micro_compact(budgeted, 1, store, {}, True)
    assert check_pairing(out).ok, check_pairing(out)
    assert [m.get("tool_call_id") for m in out] == [m.get("tool_call_id") for m in messages]
    assert_saved_outputs_are_full(out, originals(messages), store)


def check_archive(messages, folder=None):
    """Every identifier in a record is whole: it is an identifier of the turn it records."""
    for turn in split_turns(split_head(unique(messages))[1]):
        record = archive_turn(turn)
        assert isinstance(record, str) and record.startswith("- ")
        own = set(identifiers("\n".join(
            [text(m.get("content")) for m in turn]
            + [f"{c['function']['name']} {c['function']['arguments']}"
               for c in turn[0].get("tool_calls") or ()])))
        cut = [i for i in identifiers(record) if i not in own]
        assert not cut, f"identifiers cut or made up in the record: {cut[:5]}"


def check_breaker(messages, folder=None):
    messages = unique(messages)
    breaker = CircuitBreaker(2)
    assert compact_with_breaker(messages, rule_based_summary, breaker, 2) == \
        compact(messages, keep_turns=2)

    def failing(prefix):
        raise RuntimeError("the summariser is down")

    assert compact_with_breaker(messages, failing, breaker, 0) == messages
    assert compact_with_breaker(messages, failing, breaker, 0) == messages
    assert breaker.is_open and breaker.calls == 3


def steps(messages):
    """The histories an agent passes the compactor: one per turn, the whole transcript last."""
    head = len(split_head(messages)[0])
    cuts = [i for i in range(head + 1, len(messages)) if messages[i]["role"] != "tool"]
    return [messages[:i] for i in cuts] + [messages]


def over_window_signal(compactor, size) -> bool:
    """The compactor said that the context it returned does not fit (an event over the window)."""
    return any(e.tokens_after > compactor.settings.window and e.tokens_after >= size
               for e in compactor.events if e.request == compactor.requests)


def check_layered(messages, folder, layers=("budget", "noise", "micro", "archive", "full")):
    if reuses_ids(messages):
        with pytest.raises(ValueError):
            LayeredCompactor(layers, WINDOW, rule_based_summary)(messages)
    messages = unique(messages)
    full = originals(messages)
    store = ResultStore(folder)
    compactor = LayeredCompactor(layers, WINDOW, rule_based_summary, store=store)
    meter = TokenMeter()
    for history in steps(messages):
        context = compactor(history)
        assert check_pairing(context).ok, check_pairing(context)
        assert_head_kept(context, messages)
        assert_saved_outputs_are_full(context, full, store)
        size = meter(context)
        assert size <= WINDOW.window or over_window_signal(compactor, size), (
            f"request {compactor.requests}: {size:,} tokens, over the {WINDOW.window:,}-token "
            f"window with no signal; events {compactor.events[-3:]}")


def check_status_bar(messages, folder=None):
    events = events_from_messages(messages)
    made = [c for m in messages for c in m.get("tool_calls") or ()]
    assert [e["tool"] for e in events if e["type"] == "tool_call"] == \
        [c["function"]["name"] for c in made]
    assert open_calls(messages) == [] and latest_status(messages) is None
    block = render_status(new_status())
    once = place_status(messages, block)
    assert once[:-1] == messages and once[-1] == {"role": "user", "content": block}
    twice = place_status(once, block, mode="replace")
    assert twice == once, "replace must remove only the bar it placed"
    assert place_status(once, block, mode="append") == once + [once[-1]]


def check_passthrough(messages, folder):
    """Functions that promise to leave a history as it is: role separation with nothing fenced,
    the cache-friendly request, a JSONL round trip."""
    assert separate_roles(messages) == messages
    system, history = messages[0]["content"], messages[1:]
    if isinstance(system, str):
        sent, _ = cache_friendly_request(system, [], history, "2026-01-01 09:00:00", "Go on.")
        assert sent[1:-1] == history
    save_transcript(messages, folder / "t.jsonl")
    assert load_transcript(folder / "t.jsonl") == messages


CHECKS = [check_pairing_and_unique_ids, check_turns_and_head, check_compact, check_replay,
          check_budget, check_noise, check_budget_then_micro, check_archive, check_breaker,
          check_layered, check_status_bar, check_passthrough]


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__[len("check_"):] for c in CHECKS])
def test_reference_functions_keep_their_promises_on_every_shape(check, messages, tmp_path,
                                                                request):
    original = copy.deepcopy(messages)
    check(messages, tmp_path)
    assert messages == original, f"{check.__name__} modified its input"


def test_micro_after_budget_in_the_layered_compactor_keeps_full_outputs(tmp_path):
    """Issue 25, item 1, through LayeredCompactor(("budget", "micro")): the file layer 1
    wrote must still hold the full output after layer 3 clears the preview."""
    check_layered(SHAPES["huge_result"](3, 4), tmp_path, layers=("budget", "micro"))


@MIXTURES
@given(transcripts(features=CHEAP))
def test_any_mixture_of_shapes_keeps_every_promise(tmp_path_factory, messages):
    for check in CHECKS:
        folder = tmp_path_factory.mktemp(check.__name__)
        original = copy.deepcopy(messages)
        check(messages, folder)
        assert messages == original, f"{check.__name__} modified its input"


# ----------------------------------------------------------------------------- the server

def post(server, messages):
    body = json.dumps({"model": course.llm.MODEL_NAME, "messages": messages}).encode()
    return raw_post(server, body)


def test_the_teaching_model_answers_every_shape_with_200_or_a_json_400(teaching_model, messages):
    """And validate_messages (never raising) gives the same verdict; on a 200 the prompt tokens
    are count_request_tokens'. Reused ids are a 400, and 200 once unique_call_ids renamed them
    (unless the request is over the model's window, a 400 too)."""
    for attempt in ([messages, unique_call_ids(messages)] if reuses_ids(messages) else [messages]):
        problems = validate_messages(attempt)
        assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
        status, reply = post(teaching_model, attempt)
        assert status in (200, 400), (status, reply)
        if status == 200:
            assert problems == [], f"the server accepted what validate_messages refused: {problems}"
            assert reply["usage"]["prompt_tokens"] == count_request_tokens(attempt)
            continue
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
        if reply["error"].get("code") != "context_length_exceeded":
            assert problems, f"the server refused ({reply['error']['message']}), validate_messages did not"
    if reuses_ids(messages):
        assert post(teaching_model, messages)[1]["error"]["code"] == "duplicate_tool_call_id"


def test_the_corpus_covers_every_shape():
    drawn = Counter(shape for shape, _, _ in CORPUS)
    assert set(drawn) == set(SHAPES) and min(drawn.values()) >= 2
