"""Chapter 08's lesson support: the replayed run, the requests each placement sends, the usage
replay, and the specimens (a bar in the system prompt; a bar filled from tool-result text)."""
import pytest

import course.llm
from lesson_support.status_bar import (PLACEMENTS, STRATEGIES, bar_from_result_text,
                                       bar_in_system_prompt, load_run, replay_usage,
                                       request_messages, with_counter, without_targets)
from solutions.compaction import check_pairing
from solutions.status_bar import (is_status_message, latest_status, parse_status, render_status,
                                  status_accuracy)

RUN = load_run()


def test_the_run_has_fifty_steps_and_three_calls_to_xfinity():
    assert RUN.n_requests >= 50
    truth = RUN.status(len(RUN.steps), follow_up=True)
    assert truth["calls"]["call.Xfinity"] == 3
    assert parse_status(render_status(truth))["calls call Xfinity"] == "3/3 max, limit reached"
    assert RUN.follow_up["content"] == "Can you call them again to follow up?"


def test_calls_are_interleaved_with_searches():
    names = [m["tool_calls"][0]["function"]["name"] for step in RUN.steps for m in step["messages"]
             if m.get("tool_calls")]
    xfinity = [i for i, n in enumerate(names) if n == "call"]
    assert len(xfinity) == 3 and all("web_search" in names[a:b] for a, b in zip(xfinity, xfinity[1:]))


def test_unknown_run_is_a_clear_error():
    with pytest.raises(FileNotFoundError, match="merchant_refund"):
        load_run("nope")


@pytest.mark.parametrize("placement, mode", [("none", "replace"), *STRATEGIES])
@pytest.mark.parametrize("follow_up", [False, True])
def test_every_request_keeps_pairing(placement, mode, follow_up):
    upto = len(RUN.steps) if follow_up else 20
    messages = request_messages(RUN, upto, placement, mode, follow_up=follow_up)
    assert check_pairing(messages).ok
    bars = sum(map(is_status_message, messages))
    assert bars == {"none": 0, "system": 0}.get(placement, upto if mode == "append" else 1)
    if placement == "end":
        assert latest_status(messages) == render_status(RUN.status(upto, follow_up=follow_up))


def test_append_requests_extend_each_other_and_system_placement_changes_the_first_message():
    for j in range(1, 12):
        before = request_messages(RUN, j, "end", "append")
        after = request_messages(RUN, j + 1, "end", "append")
        assert after[:len(before)] == before
    one, two = (request_messages(RUN, j, "system") for j in (5, 6))
    assert one[0]["content"] != two[0]["content"] and one[0]["content"].startswith(RUN.system)


def test_bad_placement():
    with pytest.raises(ValueError, match="placement must be one of"):
        request_messages(RUN, 3, "middle")
    with pytest.raises(ValueError, match="system prompt"):
        bar_in_system_prompt([{"role": "user", "content": "hi"}], render_status(RUN.status(1)))


def test_stamped_history_prefixes_user_and_tool_messages_only():
    messages = RUN.history(3, stamped=True)
    assert messages[0]["content"] == RUN.system
    assert messages[1]["content"].startswith("[2025-09-14 10:00:00] ")
    assert all(m["content"].startswith("[2025-09-14") for m in messages if m["role"] == "tool")


def test_the_poisoned_bar_believes_the_page_and_the_call_log_does_not():
    messages = RUN.history(len(RUN.steps))
    poisoned = messages + [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "p1", "type": "function",
         "function": {"name": "web_search", "arguments": "{\"query\": \"Xfinity dispute\"}"}}]},
        {"role": "tool", "tool_call_id": "p1", "content": RUN.poisoned_result}]
    assert bar_from_result_text(poisoned, RUN.limits)["calls"] == {"call.Xfinity": 0}
    from solutions.status_bar import events_from_messages, replay
    honest = replay(events_from_messages(poisoned, RUN.target_args), RUN.initial_status())
    assert honest["calls"]["call.Xfinity"] == 3


def test_injected_errors_and_a_bar_without_targets():
    truth = RUN.status(len(RUN.steps))
    wrong = with_counter(truth, "call.Xfinity", 1)
    assert parse_status(render_status(wrong))["calls call Xfinity"] == "1/3 max"
    assert truth["calls"]["call.Xfinity"] == 3  # the original is untouched
    narrow = without_targets(truth)
    assert "calls call Xfinity" not in parse_status(render_status(narrow))
    assert status_accuracy([wrong, truth], [truth, truth]) < 1.0


def test_usage_replay_system_placement_caches_nothing_and_the_end_caches(tmp_path):
    by = {}
    for placement, mode in STRATEGIES:  # a fresh prompt cache for each strategy
        with course.llm.serve() as server:
            by[(placement, mode)] = replay_usage(RUN, server.client(), course.llm.model_name(),
                                                 placement, mode, requests=14)
    assert all(r["cached_tokens"] == 0 for r in by[("system", "replace")])
    for placement, mode in (("end", "replace"), ("end", "append")):
        records = by[(placement, mode)]
        assert records[-1]["cached_tokens"] > 0
        assert all(r["cached_tokens"] <= r["prompt_tokens"] for r in records)


def test_placements_listed():
    assert PLACEMENTS == ("none", "system", "end")


@pytest.mark.parametrize("mode", ["replace", "append"])
def test_a_bar_refreshed_every_fifth_request_stays_in_place_between_refreshes(mode):
    messages = request_messages(RUN, 12, "end", mode, every=5)
    assert check_pairing(messages).ok
    bars = [i for i, m in enumerate(messages) if is_status_message(m)]
    assert len(bars) == (1 if mode == "replace" else 3)  # refreshed at requests 1, 6 and 11
    assert latest_status(messages) == render_status(RUN.status(11))
    assert messages[bars[-1] + 1:] == RUN.steps[11]["messages"]  # step 11 came after the bar
    # each request extends the previous one, except where replace drops the old bar
    if mode == "append":
        for j in range(1, 20):
            before, after = (request_messages(RUN, k, "end", "append", every=5) for k in (j, j + 1))
            assert after[:len(before)] == before


def test_every_and_window_are_checked():
    with pytest.raises(ValueError, match="every must be"):
        request_messages(RUN, 5, "end", "replace", every=0)
    with pytest.raises(ValueError, match="window"):
        request_messages(RUN, 5, "system", "replace", keep_steps=3)


# ------------------------------------------------------------------ the truth, carried forward

def test_the_carried_status_is_the_replay_from_the_start_at_every_step():
    from solutions.status_bar import replay
    for upto in range(len(RUN.steps) + 1):
        for follow_up in (False, True):
            expected = replay(RUN.events(upto), RUN.initial_status())
            if follow_up:
                expected = replay([{"type": "clock", "now": RUN.follow_up["at"]}], expected)
            assert RUN.status(upto, follow_up=follow_up) == expected, upto


def test_a_status_is_a_fresh_copy_and_upto_is_checked():
    RUN.status(10)["calls"]["call.Xfinity"] = 99
    assert RUN.status(10)["calls"].get("call.Xfinity") != 99
    with pytest.raises(ValueError, match="upto must be between 0 and"):
        RUN.status(len(RUN.steps) + 1)


def test_a_replay_counts_the_history_once_per_step_not_once_per_earlier_step(monkeypatch):
    """Before: every request of the end placements recomputed the status of every earlier step
    from the start, each with a token count of the whole history (1,540 for one replay)."""
    import lesson_support.status_bar as module
    counted = []
    real = module.count_request_tokens
    monkeypatch.setattr(module, "count_request_tokens", lambda *a, **k: counted.append(1) or real(*a, **k))
    run = load_run()
    last = run.n_requests + 1
    for j in range(1, last + 1):
        request_messages(run, j, "end", "replace", follow_up=j == last)
    assert len(counted) <= len(run.steps) + 2


# ------------------------------------------------------------------ a replay, carried forward

def _wire(bodies: list):
    """An openai client whose transport keeps each request's body and answers a fixed reply."""
    import httpx2
    import openai

    reply = {"id": "r", "object": "chat.completion", "created": 0, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "ok"}}],
             "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11,
                       "prompt_tokens_details": {"cached_tokens": 4}}}

    def answer(request):
        bodies.append(request.content)
        return httpx2.Response(200, json=reply)

    return openai.OpenAI(api_key="k", base_url="http://replay.invalid/v1", max_retries=0,
                         http_client=httpx2.Client(transport=httpx2.MockTransport(answer)))


@pytest.mark.parametrize("placement, mode", [("none", "replace"), *STRATEGIES])
@pytest.mark.parametrize("every", [1, 5])
def test_a_replay_sends_what_request_messages_builds_for_each_request(placement, mode, every):
    from lesson_support.status_bar import replay_requests
    last = RUN.n_requests + 1
    sent = list(replay_requests(RUN, placement, mode, every))
    assert len(sent) == last
    for j, messages in enumerate(sent, start=1):
        built = request_messages(RUN, j, placement, mode, follow_up=j == last, every=every)
        assert messages == built, j
        assert list(map(is_status_message, messages)) == list(map(is_status_message, built)), j
    assert len(list(replay_requests(RUN, placement, mode, every, requests=7))) == 7


def test_a_replay_puts_the_same_bytes_on_the_wire_as_a_plain_create():
    """replay_usage hands the messages to the SDK in extra_body (skipping its type walk): the
    body sent is byte for byte the one `create(messages=...)` sends."""
    replayed, plain = [], []
    client = _wire(replayed)
    records = replay_usage(RUN, client, "m", "end", "append", requests=6)
    assert records[-1] == {"request": 6, "prompt_tokens": 10, "cached_tokens": 4,
                           "completion_tokens": 1}
    client = _wire(plain)
    for j in range(1, 7):
        client.chat.completions.create(model="m", messages=request_messages(RUN, j, "end", "append"),
                                       tools=RUN.tools, max_completion_tokens=64)
    assert replayed == plain and len(plain) == 6


@pytest.mark.parametrize("placement, mode", STRATEGIES)
def test_a_replay_of_twice_the_steps_does_twice_the_work_not_four_times(monkeypatch, placement, mode):
    """Before, request j of the end placements asked for the status of every step before it,
    each a replay from the start with a token count of the whole history: N steps cost about
    N**2 / 2 statuses and token counts (1,540 for the lesson's run). Carried forward, each
    step's status is computed once, and the history's tokens are counted step by step."""
    import dataclasses
    import lesson_support.status_bar as module

    counted = {"statuses": 0, "token counts": 0}
    status, count = module.Run.status, module.count_request_tokens

    def counting_status(self, *args, **kwargs):
        counted["statuses"] += 1
        return status(self, *args, **kwargs)

    def counting_tokens(*args, **kwargs):
        counted["token counts"] += 1
        return count(*args, **kwargs)

    monkeypatch.setattr(module.Run, "status", counting_status)
    monkeypatch.setattr(module, "count_request_tokens", counting_tokens)

    def work(steps: int) -> dict:
        run = dataclasses.replace(RUN, steps=RUN.steps[:steps])  # a fresh run, nothing cached
        counted.update(dict.fromkeys(counted, 0))
        assert len(replay_usage(run, _wire([]), "m", placement, mode)) == steps
        return dict(counted)

    small, large = work(20), work(40)
    assert large["statuses"] == 2 * small["statuses"] == 2 * 20
    assert small["token counts"] < large["token counts"] <= 2 * small["token counts"]
