"""The KV cache for real: time to first token when the prefix is cached, and when one line of it
changes (chapter 05's `Current time:` incident), measured on a real model.

One round at one prompt length sends, in this order:

    cold            a system prompt the model has never seen (its time line is new)
    again           the same request again
    new_question    the same system prompt, another question
    end_change      the same system prompt with its LAST line changed, first question
    top_change      the same system prompt with its FIRST line (`Current time: ...`) changed

Each request is timed from the stream (TTFT) and its usage says how many prompt tokens the
backend took from its cache. Rounds repeat with fresh prompts (a new seed, so a new first line
and new rules), and each scenario's TTFT is summarised as a median with its spread.

`against_teaching_model` sends the same rounds to the teaching model (course.llm), whose
`teaching_timing` simulates a provider, and computes which figures agree with the measured ones
and which do not.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from course.usage import read_usage
from lesson_support.real_model.filler import policy
from lesson_support.real_model.stream import spread, stream_summary, timed_stream

SCENARIOS = ("cold", "again", "new_question", "end_change", "top_change")
QUESTIONS = ("A customer asks for a refund of 300 dollars. What do you need?",
             "Can I exchange five items this month?")


def system_prompt(seed: int, length: int, count: Callable[[str], int], minute: int = 0,
                  last_line: str = "Open tickets: 14") -> str:
    """A support agent's system prompt of about `length` tokens: a time line first (the
    incident's line), numbered rules, a ticket counter last."""
    rules = policy(seed, length, count)
    return "\n".join([f"Current time: 2026-12-06 09:{minute:02d}:{seed % 60:02d}", *rules, last_line])


def round_requests(seed: int, length: int, count: Callable[[str], int]) -> list[tuple[str, list[dict]]]:
    """The five (scenario, messages) pairs of one round, in the order they are sent."""
    base = system_prompt(seed, length, count)
    end = system_prompt(seed, length, count, last_line="Open tickets: 15")
    top = system_prompt(seed, length, count, minute=1)

    def ask(system: str, question: str) -> list[dict]:
        return [{"role": "system", "content": system}, {"role": "user", "content": question}]

    return [("cold", ask(base, QUESTIONS[0])), ("again", ask(base, QUESTIONS[0])),
            ("new_question", ask(base, QUESTIONS[1])), ("end_change", ask(end, QUESTIONS[0])),
            ("top_change", ask(top, QUESTIONS[0]))]


def measure_request(request, messages, max_tokens: int = 4) -> dict:
    """One request timed from its stream: TTFT, prompt and cached tokens (None if the backend
    does not say), the number evaluated."""
    record = timed_stream(lambda: request(messages, max_tokens=max_tokens))
    summary = stream_summary(record)
    usage = read_usage(record["usage"]) if record["usage"] else None
    prompt = usage.prompt if usage else None
    cached = usage.cached if usage else None
    return {"ttft_s": summary["ttft_s"], "prompt_tokens": prompt, "cached_tokens": cached,
            "evaluated_tokens": None if prompt is None or cached is None else prompt - cached}


def measure_rounds(request, count: Callable[[str], int], lengths: Sequence[int], rounds: int,
                   reset: Callable[[], None] | None = None, seed: int = 0,
                   progress: Callable[[str], None] = lambda _: None) -> list[dict]:
    """Every round at every length: one row per request, with length, round and scenario.
    `reset` (if the backend has one) empties the cache before each round's cold request; without
    it, a new first line makes the prompt one the cache has never seen."""
    rows = []
    for length in lengths:
        for r in range(rounds):
            if reset is not None:
                reset()
            for scenario, messages in round_requests(seed + 1000 * length + r, length, count):
                row = measure_request(request, messages)
                rows.append({"length": length, "round": r, "scenario": scenario, **row})
                progress(f"length {length} round {r} {scenario}: {row}")
    return rows


def summarise(rows: Sequence[dict]) -> list[dict]:
    """Per (length, scenario): TTFT median with min/max/quartiles, median tokens evaluated and
    cached, and the median TTFT as a fraction of the same length's cold median."""
    out = []
    for length in sorted({r["length"] for r in rows}):
        at = [r for r in rows if r["length"] == length]
        cold = spread(r["ttft_s"] for r in at if r["scenario"] == "cold")["median"]
        for scenario in SCENARIOS:
            these = [r for r in at if r["scenario"] == scenario]
            if not these:
                continue
            ttft = spread(r["ttft_s"] for r in these)
            evaluated = [r["evaluated_tokens"] for r in these if r["evaluated_tokens"] is not None]
            cached = [r["cached_tokens"] for r in these if r["cached_tokens"] is not None]
            out.append({"length": length, "scenario": scenario, "n": ttft["n"],
                        "prompt_tokens": spread(r["prompt_tokens"] for r in these)["median"],
                        "ttft_median_s": ttft["median"], "ttft_min_s": ttft["min"],
                        "ttft_max_s": ttft["max"], "ttft_q1_s": ttft["q1"], "ttft_q3_s": ttft["q3"],
                        "evaluated_median": spread(evaluated)["median"] if evaluated else None,
                        "cached_median": spread(cached)["median"] if cached else None,
                        "of_cold": ttft["median"] / cold if cold else None})
    return out


def eviction_and_restore(engine, count: Callable[[str], int], length: int, seed: int = 0) -> dict:
    """On the raw binding (one cache slot): prompt A cold, A again (cached), then prompt B evicts
    A, A once more (cold again), then A's saved state restored and A sent (cached again). Also
    the state's size and the seconds to save and restore it."""
    a = round_requests(seed, length, count)[0][1]
    b = round_requests(seed + 1, length, count)[0][1]
    engine.reset()
    result = {"length": length, "a_cold": measure_request(engine, a),
              "a_again": measure_request(engine, a)}
    state, result["save_s"] = engine.save()
    result["state_bytes"] = int(state.llama_state_size)
    result["b_evicts_a"] = measure_request(engine, b)
    result["a_after_eviction"] = measure_request(engine, a)
    measure_request(engine, b)  # the slot holds B again
    result["restore_s"] = engine.restore(state)
    result["a_restored"] = measure_request(engine, a)
    return result


# --- the teaching model's simulation, set against the measurement ------------------------------

def teaching_rounds(client, model: str, count: Callable[[str], int], lengths: Sequence[int],
                    seed: int = 0) -> list[dict]:
    """The same rounds (one per length) on the teaching model: its usage and its simulated
    `teaching_timing`. Use a private server (`course.llm.serve()`) so nothing else warms it."""
    rows = []
    for length in lengths:
        for scenario, messages in round_requests(seed + 1000 * length, length, count):
            reply = client.chat.completions.create(model=model, messages=messages, max_tokens=4)
            usage = read_usage(reply.usage)
            timing = reply.model_extra["teaching_timing"]
            rows.append({"length": length, "scenario": scenario, "prompt_tokens": usage.prompt,
                         "cached_tokens": usage.cached, "ttft_s": timing["time_to_first_token_s"]})
    return rows


def comparison(measured: Sequence[dict], simulated: Sequence[dict]) -> list[dict]:
    """Per (length, scenario): the measured median TTFT and its fraction of cold beside the
    teaching model's, and whether they agree: `agree` when both put the scenario on the same
    side of half the cold time (cached vs recomputed), else `disagree`. The absolute seconds
    are never expected to agree (a simulated accelerator against this CPU)."""
    by_key = {(r["length"], r["scenario"]): r for r in simulated}
    colds = {r["length"]: r["ttft_s"] for r in simulated if r["scenario"] == "cold"}
    rows = []
    for m in measured:
        s = by_key.get((m["length"], m["scenario"]))
        if s is None:
            continue
        sim_of_cold = s["ttft_s"] / colds[m["length"]] if colds.get(m["length"]) else None
        fast_real = m["of_cold"] is not None and m["of_cold"] < 0.5
        fast_sim = sim_of_cold is not None and sim_of_cold < 0.5
        rows.append({"length": m["length"], "scenario": m["scenario"],
                     "real_ttft_s": m["ttft_median_s"], "real_of_cold": m["of_cold"],
                     "real_cached": m["cached_median"], "sim_ttft_s": s["ttft_s"],
                     "sim_of_cold": sim_of_cold, "sim_cached": s["cached_tokens"],
                     "verdict": "agree" if fast_real == fast_sim else "disagree",
                     "why": _why(m, s, fast_real, fast_sim)})
    return rows


def _why(measured: dict, simulated: dict, fast_real: bool, fast_sim: bool) -> str:
    if fast_real == fast_sim:
        return "both reuse the prefix" if fast_real else "both recompute the prompt"
    if fast_real and not simulated["cached_tokens"]:
        return ("llama.cpp reuses any shared prefix; the simulated provider caches nothing under "
                "1,024 tokens")
    if fast_real:
        return "the simulated provider reuses only whole 128-token blocks"
    return "the real model recomputed more than the simulation expects"


def rate_comparison(stream_rows: Sequence[dict]) -> list[dict]:
    """The teaching model's constant rates (course/llm/timing.py) against the medians measured
    from cold streams (data/real_model/stream.json rows): prefill and decode tokens per second,
    and how prefill speed changes from the shortest prompt to the longest. `agree` when the two
    are within a factor of 2."""
    from course.llm.timing import DECODE_TOKENS_PER_S, PREFILL_TOKENS_PER_S

    lengths = sorted({r["length"] for r in stream_rows})

    def median_of(key: str, length: int | None = None) -> float:
        return spread(r[key] for r in stream_rows if length is None or r["length"] == length)["median"]

    trend = median_of("prefill_tokens_per_s", lengths[-1]) / median_of("prefill_tokens_per_s", lengths[0])
    rows = [("prefill tokens/s", PREFILL_TOKENS_PER_S, median_of("prefill_tokens_per_s"),
             "the simulation prices a mid-sized model on an accelerator; this is 135M parameters on "
             "this machine's CPU"),
            ("decode tokens/s", DECODE_TOKENS_PER_S, median_of("decode_tokens_per_s"),
             "decode reads every weight once per token: bound by memory bandwidth, not by the prompt"),
            (f"prefill speed at {lengths[-1]:,} vs {lengths[0]:,} tokens", 1.0, trend,
             "the simulation's prefill is linear; a real prefill amortises fixed costs over a "
             "longer batch and pays attention's quadratic term as prompts grow")]
    return [{"figure": name, "simulated": sim, "measured": real,
             "verdict": "agree" if 0.5 <= real / sim <= 2 else "disagree", "why": why}
            for name, sim, real, why in rows]
