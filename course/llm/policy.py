"""How the teaching model decides: one ordered list of small rules.

The teaching model is not a language model. Its reply is a function of the request alone (the
messages, the tools, `tool_choice` and `parallel_tool_calls`, and `temperature`, `top_p` and
`seed`): nothing is remembered between requests except the prompt cache, which changes the bill,
never the reply. The rules are tried in this order; the first that decides makes the reply:

    #   rule               what it does
    1   validation         a request a provider would reject gets HTTP 400 naming the problem;
                           one over the model's context window (course/llm/models.py) gets
                           OpenAI's 400 context_length_exceeded, stating the limit and its size;
                           a reasoning model refuses what its history policy forbids
                           (reasoning_content sent back to strip, missing from a tool-call
                           message for pass_back: course/llm/reasoning.py)
    2   tool_choice        "none": no call; a named function: exactly that call; "required": at
                           least one call; parallel_tool_calls false: at most one call per reply
    3   summary            asked to summarise or compact the conversation: a structured summary
                           built from every role, identifiers copied whole
    4   untrusted_content  an instruction in a tool result of this turn is followed (a simulated
                           weakness) unless the system prompt declares <external_content> to be
                           data and the instruction is inside such a fence
    5   instructions       a numbered procedure in the system prompt that the request fits is
                           followed step by step, one call per reply, stopping where a step
                           says to stop on failure; a bulleted rule that names a tool is applied
                           only when the request or the last result names its trigger; "NEVER
                           use X for T; use Y instead" swaps the call (course/llm/procedures.py)
                           [sampled: which procedure, or none]
    6   retry_failed       calls of the last round whose result is an error are made again
    7   own_state          questions about the run are answered from the latest <agent_status>
                           block (trusted), else by counting what is visible; a request to call
                           again repeats the latest such call unless a limit (a counter at its
                           max in the bar, else one in the system prompt) forbids it
    8   skills             with an <available_skills> catalogue and load_skill: load the skill
                           the request matches, then follow its steps, one call per step
                           [sampled: which skill, or none]
    9   memory             the window is the memory: a needed call whose result (same tool, same
                           arguments) is visible is answered from it; any other is made
                           [sampled: the tool of each ask, a few-shot rut's tool raised
                           (course/llm/rut.py); with no tool fitting, which earlier result
                           answers, or none]
    10  tool_search        no offered tool fits and tool_search is offered: search for one
    11  required           tool_choice "required" and nothing else called: the best-fitting tool
                           [sampled: which tool]
    12  results            answer from the tool results of this turn
    13  default            say what the teaching model is, and repeat the request

Rules 2 to 12 are each a small function here or in the module named in RULES; `tool_choice`
limits are applied by `Context.call` and `Context.answer`, so a rule that would call a tool when
no call is allowed (or answer in text when a call is required) steps aside and the next rule
is tried. Arguments of every call a rule makes come from the request
(`planning.fill_arguments`), each valid for its parameter's JSON-schema type and enum: an
optional parameter with no valid value in the request is left out, a required one gets the
ask's text in its type [sampled: an enum's value, the form of a name]. Every rule that looks and
finds something adds a step to the trace, which the server returns as the extra top-level field
`teaching_trace` (`course.llm.explain` renders it).

[sampled] marks a choice among scored candidates. An omitted temperature is 0 for the teaching
model (OpenAI's default is 1): each such choice is then its best-scored candidate, ties to the
first, and every lesson's reply is the same every run. At a temperature above 0 the choice is
drawn from the softmax of the scores at that temperature, cut by `top_p` (nucleus sampling),
with draws fixed by `seed` (derived from the prompt when none is sent, and said so): the same
seed and request give the same reply, another seed may give another. The scores come from the
context (tool names and descriptions, enums, description examples, skill catalogue lines), so
better definitions make the right choice more likely. course/llm/sampling.py states the scores
and the rules; the trace shows each choice's candidates, scores, probabilities and draw.
Validation (rule 1) refuses a temperature outside [0, 2], a top_p outside [0, 1] and a seed that
is not a 64-bit integer, naming the field, as OpenAI does.

Before rule 2, a request whose `response_format` is the JSON schema named "memory_records" is
answered by chapter 17's extraction rule (course/llm/memory.py: the request, the rule and the
reply's shape), unless tool_choice requires a call.

Before rule 2, and before the context window is checked, a request that carries
`context_management` (a simulation of Anthropic's context editing, clear_tool_uses_20250919:
course/llm/context_editing.py) has its oldest tool results cleared once its prompt is over the
trigger; every rule then reads the edited messages, and the trace says what was cleared.

A reasoning model (course/llm/reasoning.py) runs the same rules on the same messages; its reply
then starts with `reasoning_content`, the trace so far in words, and its trace gets a step
`reasoning` (the history policy and which earlier reasoning the prompt holds).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

from course.llm.answers import describe_result
from course.llm.context import Context, Decision, show_call
from course.llm.memory import asks_for_memories, memories_reply
from course.llm.planning import (ask_terms, best_tool, fill_arguments, key_terms, ordinary_tools,
                                 plan_tool_groups, score, terms)
from course.llm.procedures import rule_instructions
from course.llm.rut import rut_bias
from course.llm.skills import rule_skills
from course.llm.status import rule_own_state
from course.llm.summary import asks_for_summary, summarise
from course.llm.untrusted import rule_untrusted_content
from course.llm.validation import validate_request

MIN_RECALL_TERMS = 2


@dataclass(frozen=True)
class Rule:
    name: str
    summary: str
    apply: Callable[[Context], Decision | None] | None  # None: validation, run on the raw body


def rule_tool_choice(ctx: Context) -> Decision | None:
    """A named function is called at once; "none", "required" and parallel limits are noted."""
    if ctx.forced:
        tool = ctx.by_name[ctx.forced]
        return ctx.call("tool_choice", f"tool_choice names {ctx.forced}: exactly that call",
                        [(ctx.forced, fill_arguments(tool, ctx.request, sampler=ctx.sampler))])
    if ctx.tool_choice == "none" and ctx.tools:
        ctx.note("tool_choice", "tool_choice is \"none\": text only, whatever the request")
    if ctx.must_call:
        ctx.note("tool_choice", "tool_choice is \"required\": the reply must call a tool")
    return None  # parallel_tool_calls false is applied (and noted) where calls are made


def rule_summary(ctx: Context) -> Decision | None:
    last = len(ctx.messages) - 1
    if ctx.last_role not in ("user", "system", "developer") or not asks_for_summary(ctx.text(last)):
        return None
    return ctx.answer("summary", f"messages[{last}] asks for a summary of the conversation: "
                                 f"structured sections from every role, identifiers verbatim",
                      summarise(ctx.messages), [last])


def rule_retry_failed(ctx: Context) -> Decision | None:
    failed = [c for c in ctx.last_round() if c.id in ctx.results and ctx.results[c.id].error]
    if not failed:
        return None
    where = ", ".join(f"messages[{ctx.results[c.id].index}]" for c in failed)
    return ctx.call("retry_failed", f"the last round's result in {where} is an error: try again",
                    [(c.name, c.arguments) for c in failed], [ctx.results[c.id].index for c in failed])


def _recall(ctx: Context) -> Decision | None:
    """No tool fits: a result from an earlier turn that shares the question's words answers it."""
    if not any(result.index < ctx.last_user for _, result in ctx.answered.values()):
        return None
    wanted = ask_terms(ctx.request)
    earlier = []  # the latest first: it wins a tie
    for call, result in reversed(list(ctx.answered.values())):
        if result.index < ctx.last_user:
            earlier.append((call, result, wanted & (terms(result.content) | terms(call.name)
                                                    | terms(call.arguments))))
    # "none" scores between MIN_RECALL_TERMS - 1 and MIN_RECALL_TERMS shared words
    scored = [(f"{call.name} in messages[{result.index}]", len(shared))
              for call, result, shared in earlier] + [("none", MIN_RECALL_TERMS - 0.5)]
    pick = ctx.sampler.choose("which earlier result answers the question, if any", scored)
    if pick == len(earlier):
        return None
    call, result, shared = earlier[pick]
    return ctx.answer("memory", f"no offered tool fits; the {call.name} result still in "
                                f"messages[{result.index}] shares {len(shared)} words with the "
                                f"question: answer from it",
                      f"As {call.name} returned earlier: "
                      + describe_result(call.name, call.args, result.content),
                      [ctx.last_user, result.index])


def rule_memory(ctx: Context) -> Decision | None:
    """Plan the calls the request needs; answer from visible results, call for the rest."""
    if ctx.last_user < 0:
        return None
    groups = plan_tool_groups(ctx.request, ctx.tools, ctx.sampler, rut_bias(ctx))
    if not groups:
        return _recall(ctx)
    seen = []
    for group in groups:
        todo = []
        for name in group:
            args = fill_arguments(ctx.by_name[name], ctx.request, sampler=ctx.sampler)
            found = ctx.visible_result(name, args)
            if found:
                seen.append(found)
            else:
                todo.append((name, args))
        if todo:
            gone = ", ".join(show_call(n, a) for n, a in todo)
            why = f"the request needs {gone}; no such result is visible"
            if seen:
                why += (f" ({', '.join(c.name for c, _ in seen)} answered from "
                        f"{', '.join(f'messages[{r.index}]' for _, r in seen)})")
            return ctx.call("memory", why, todo, [ctx.last_user] + [r.index for _, r in seen])
    parts = []
    for call, result in seen:
        text = describe_result(call.name, call.args, result.content)
        parts.append(text if result.index > ctx.last_user else f"As {call.name} returned earlier: {text}")
    listed = ", ".join(f"{show_call(c.name, c.args)} in messages[{r.index}]" for c, r in seen)
    return ctx.answer("memory", f"every call the request needs has a visible result ({listed}): "
                                f"answer without calling", "\n\n".join(parts),
                      [ctx.last_user] + [r.index for _, r in seen])


def rule_tool_search(ctx: Context) -> Decision | None:
    if "tool_search" not in ctx.by_name or ctx.last_user < 0 or not ctx.request.strip():
        return None
    if any(score(ctx.request, tool) > 0 for tool in ordinary_tools(ctx.tools)):
        return None
    properties = (ctx.by_name["tool_search"]["function"].get("parameters") or {}).get("properties")
    names = [k for k, v in (properties or {}).items()
             if isinstance(v, dict) and v.get("type", "string") == "string"]
    args = {names[0] if names else "query": key_terms(ctx.request)}
    done = ctx.visible_result("tool_search", args)
    if done:
        ctx.note("tool_search", f"tool_search already answered in messages[{done[1].index}] and "
                                f"still no offered tool fits the request", [done[1].index])
        return None
    return ctx.call("tool_search", "no offered tool fits the request; tool_search is offered",
                    [("tool_search", args)], [ctx.last_user])


def rule_required(ctx: Context) -> Decision | None:
    if not ctx.must_call:
        return None
    tool = best_tool(ctx.request, ctx.tools, ctx.sampler)
    name = tool["function"]["name"]
    if ctx.sampler.sampling:
        fit = f"{name} drawn, scoring {score(ctx.request, tool)}"
    else:
        fit = (f"{name} fits the request best" if score(ctx.request, tool) > 0
               else f"no tool fits the request, so the first offered, {name}")
    return ctx.call("required", f"tool_choice is \"required\" and no other rule called a tool: "
                                f"{fit}", [(name, fill_arguments(tool, ctx.request,
                                                                 sampler=ctx.sampler))])


def rule_results(ctx: Context) -> Decision | None:
    answered = [(c, ctx.results[c.id]) for c in ctx.calls_since(ctx.last_user) if c.id in ctx.results]
    if not answered:
        return None
    # Report what worked; report failures only when nothing did.
    shown = [(c, r) for c, r in answered if not r.error] or answered
    text = "\n\n".join(describe_result(c.name, c.args, r.content) for c, r in shown)
    return ctx.answer("results", "nothing more to call: answer from this turn's tool results",
                      text, [r.index for _, r in shown])


def rule_default(ctx: Context) -> Decision | None:
    said = " ".join(ctx.request.split())
    if len(said) > 200:
        said = said[:200] + "..."
    return ctx.answer("default", "no other rule applies: say what I am", (
        "I am the course's teaching model: a small rule-based stand-in for an LLM, not a real "
        "one. I call the tools a request gives me, answer from their results, and summarise a "
        f"conversation when asked. You said: \"{said}\""), [ctx.last_user] if ctx.last_user >= 0 else [])


RULES: tuple[Rule, ...] = (
    Rule("validation", "a request a provider would reject gets HTTP 400 naming the problem", None),
    Rule("tool_choice", "\"none\": no call; a named function: exactly that call; \"required\": at "
                        "least one call; parallel_tool_calls false: at most one call", rule_tool_choice),
    Rule("summary", "asked to summarise the conversation: structured sections from every role, "
                    "identifiers copied whole", rule_summary),
    Rule("untrusted_content", "an instruction inside a tool result is followed, unless fenced in "
                              "<external_content> under a system-prompt policy", rule_untrusted_content),
    Rule("instructions", "a numbered procedure of the system prompt, step by step; a bulleted "
                         "rule only when its trigger is named; NEVER X ... use Y instead",
         rule_instructions),
    Rule("retry_failed", "a call whose result is an error is made again", rule_retry_failed),
    Rule("own_state", "questions about the run: from the latest <agent_status> block, else by "
                      "counting what is visible; a call asked for again is declined at its limit",
         rule_own_state),
    Rule("skills", "load the catalogue skill the request matches, then one call per step",
         rule_skills),
    Rule("memory", "a needed result still visible is used; a missing one is fetched by calling",
         rule_memory),
    Rule("tool_search", "no offered tool fits and tool_search is offered: search for one",
         rule_tool_search),
    Rule("required", "tool_choice \"required\" and no call yet: the best-fitting tool", rule_required),
    Rule("results", "answer from this turn's tool results", rule_results),
    Rule("default", "say what the teaching model is and repeat the request", rule_default),
)


def rule_table() -> list[tuple[int, str, str]]:
    """(position, rule, what it does) for every rule, in the order they are tried."""
    return [(n, rule.name, rule.summary) for n, rule in enumerate(RULES, 1)]


def decide(body, validated: bool = False, prompt_hash: str = "") -> tuple[Decision, Context]:
    """Validate the request (HTTP 400 on a problem; skipped when the caller has), then let the
    first rule that decides reply. `prompt_hash` (hex) derives the seed of a request sampled
    without one."""
    if not validated:
        validate_request(body)
    ctx = Context(body, prompt_hash)
    n, t = len(ctx.messages), len(ctx.tools)
    ctx.note("validation", f"a valid request: {n} message{'s' * (n != 1)}, {t} tool{'s' * (t != 1)}")
    if ctx.sampler.shown:
        ctx.note("sampling", ctx.sampler.settings())
    if asks_for_memories(body) and ctx.last_user >= 0:   # chapter 17 (see the module's docstring)
        decision = ctx.answer("memory_extraction", f"response_format asks for memory_records: the "
                                                   f"extraction rule on the transcript in messages[{ctx.last_user}]",
                              memories_reply(ctx.text(ctx.last_user)), [ctx.last_user])
        if decision is not None:
            return decision, ctx
    for rule in RULES[1:]:
        decision = rule.apply(ctx)
        if decision is not None:
            return decision, ctx
    raise AssertionError("the default rule always decides")  # pragma: no cover


def _call_id(seed: str, index: int) -> str:
    return "call_" + hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()[:24]


def reply_message(decision: Decision, ctx: Context, seed: str) -> dict:
    """The assistant message: the decision, the notes every reply carries, ids from the seed."""
    parts = ([decision.content] if decision.content else []) + ctx.notes
    message = {"role": "assistant", "content": "\n\n".join(parts) if parts else None}
    if decision.calls:
        message["tool_calls"] = [{"id": _call_id(seed, i), "type": "function",
                                  "function": {"name": name, "arguments": arguments}}
                                 for i, (name, arguments) in enumerate(decision.calls)]
    return message
