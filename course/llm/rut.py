"""The few-shot rut: a model imitating the pattern of its own recent actions (a simulation).

Manus' sixth principle (the second textbook section, 21.6.12): a language model is a strong
imitator, so a context full of similar action-observation pairs (twenty pages of a document
read one after another, each the same call and the same kind of result) pulls it into repeating
them, even when the next request wants something else. The remedy is structured variation:
serialise similar actions and observations with slightly different wording or order, so that
the context is not one long template.

What the teaching model does, only when it samples (temperature > 0), in rule 9 (memory)'s
choice of the tool that fits an ask (course/llm/planning.plan_tool_groups):

  - the rut is the run of assistant turns just before the request's user message, counted back
    from it, in which every turn made exactly one call to the same tool and the turns are
    *written alike*: the assistant texts are equal once every number is masked, and so are the
    first lines of their results;
  - with a rut of at least RUT_MIN turns, that tool's score gets RUT_BONUS per turn of the rut,
    counting at most RUT_CAP turns; the trace's sampling step shows the raised score, and a
    step `rut` says which turns made it.

Structured variation breaks the run: turns worded differently are not alike, so no bonus. At
temperature 0 nothing changes (the best-scored tool is taken, unbiased), which keeps every
reply of the lessons that do not sample as it was.

What a real model does differently: it imitates without any threshold or template test, at any
temperature, and in what it writes as well as in which tool it calls; how strongly depends on
the model and on how similar the turns are. The rule reproduces the direction, not a size.
"""
from __future__ import annotations

import re

RUT_MIN = 3        # alike turns before the rut pulls
RUT_BONUS = 1.0    # score added to the repeated tool per turn of the rut ...
RUT_CAP = 6        # ... counting at most this many turns
_NUMBER = re.compile(r"\d+")


def _masked(text) -> str:
    return _NUMBER.sub("#", text if isinstance(text, str) else "")


def _first_line(text) -> str:
    return _masked(text).split("\n", 1)[0]


def rut(messages: list[dict], last_user: int) -> tuple[str, list[int]] | None:
    """(the repeated tool, the indices of the rut's assistant messages) when the turns just
    before messages[last_user] form a rut of at least RUT_MIN alike turns; else None."""
    results = {m.get("tool_call_id"): m.get("content") for m in messages[:last_user]
               if m.get("role") == "tool"}
    turns = []  # (index, tool, masked text, masked first line of its result), newest first
    for i in range(last_user - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "tool":
            continue
        calls = m.get("tool_calls") or []
        if m.get("role") != "assistant" or len(calls) != 1:
            break
        call = calls[0]
        turns.append((i, call["function"]["name"], _masked(m.get("content")),
                      _first_line(results.get(call["id"]))))
    run = []
    for turn in turns:
        if run and turn[1:] != run[0][1:]:
            break
        run.append(turn)
    if len(run) < RUT_MIN:
        return None
    return run[0][1], sorted(i for i, *_ in run)


def rut_bias(ctx) -> dict[str, float]:
    """{tool: bonus} for the sampled choice of rule memory; empty when not sampling or no rut."""
    if not ctx.sampler.sampling or ctx.last_user < 0:
        return {}
    found = rut(ctx.messages, ctx.last_user)
    if found is None:
        return {}
    tool, turns = found
    bonus = RUT_BONUS * min(len(turns), RUT_CAP)
    ctx.note("rut", f"the {len(turns)} turns before the request each called {tool}, written alike "
                    f"(a few-shot rut): +{bonus:g} to {tool}'s score when sampling", turns)
    return {tool: bonus}
