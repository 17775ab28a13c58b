"""The cache measurements: where the skill text sits (three placements), what a change to the
tool list does, their tables, and the cached tokens predicted offline."""
from __future__ import annotations

from course.usage import NOT_REPORTED, describe, total
from course.tables import text_table
from lesson_support.cache_experiment import expected_cached_tokens
from lesson_support.skills.catalogue import CATALOG_BUDGET
from lesson_support.skills.harness import SYSTEM_PROMPT, skill_result_text
from lesson_support.skills.model_calls import ask, usage_of
from lesson_support.skills.scripted_work import call_turn, earlier_work
from solutions.costs import OPENAI_RULES
from solutions.skills import Skill, add_tools, build_catalog


# ------------------------------------------------------------------ where skills go: three placements
PLACEMENTS = {
    "system prompt": "catalogue and loaded bodies in the system prompt (method 1)",
    "file in the middle": "catalogue in the system prompt, body read with read_file (method 2)",
    "catalogue at the end": "catalogue appended as a message, body as a load_skill result (method 3)",
}


def placement_requests(placement: str, skills: list[Skill], loaded: Skill, installed: Skill,
                       requests: tuple[str, str]) -> list[tuple[str, list[dict]]]:
    """The scripted session for one placement: (label, messages) of the requests to send.

    Request 1 starts a task without a skill (the conversation then holds its five tool calls,
    `earlier_work`); request 2 asks for work `loaded` fits; request 3 is sent after its body
    arrived; then `installed` is added to the catalogue mid-session and
    request 4 asks for something else. The assistant's turns are scripted, so the three
    placements send the same conversation and differ only in where the skill text sits.
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}: one of {list(PLACEMENTS)}")
    before = [s for s in skills if s.name != installed.name]
    catalog_before = build_catalog(before, CATALOG_BUDGET).text
    catalog_after = build_catalog(before + [installed], CATALOG_BUDGET).text
    second, third = requests
    work = earlier_work()
    system = SYSTEM_PROMPT
    head = []
    if placement == "catalogue at the end":
        head = [{"role": "user", "content": catalog_before}]
    else:
        system = SYSTEM_PROMPT + "\n" + catalog_before
    out = [("1 a task without a skill", [{"role": "system", "content": system}] + head + work[:1])]
    convo = head + work + [{"role": "user", "content": second}]
    out.append(("2 a task a skill fits", [{"role": "system", "content": system}] + convo))
    if placement == "system prompt":
        system = system + "\n\n" + skill_result_text(loaded)
        convo += [call_turn("call_load", "load_skill", {"name": loaded.name}),
                  {"role": "tool", "tool_call_id": "call_load",
                   "content": f"skill {loaded.name} is now in the system prompt"}]
    elif placement == "file in the middle":
        convo += [call_turn("call_load", "read_file", {"path": f"skills/{loaded.name}/SKILL.md"}),
                  {"role": "tool", "tool_call_id": "call_load", "content": skill_result_text(loaded)}]
    else:
        convo += [call_turn("call_load", "load_skill", {"name": loaded.name}),
                  {"role": "tool", "tool_call_id": "call_load", "content": skill_result_text(loaded)}]
    out.append(("3 after the skill loaded", [{"role": "system", "content": system}] + convo))
    convo = convo + [{"role": "assistant", "content": f"Done, following {loaded.name}."}]
    if placement == "catalogue at the end":
        convo += [{"role": "user", "content": catalog_after}]
    else:
        system = system.replace(catalog_before, catalog_after)
    convo += [{"role": "user", "content": third}]
    out.append(("4 after a skill was installed", [{"role": "system", "content": system}] + convo))
    return out


REPLY_TOKENS = 64  # a measurement reads the prompt's usage: the reply itself is not needed


def measure_placement(client, model: str, placement: str, skills: list[Skill], loaded: Skill,
                      installed: Skill, requests: tuple[str, str],
                      tools: list[dict]) -> list[dict]:
    """Send the placement's scripted requests; one row per request with its usage (a cached
    figure the provider does not report is None)."""
    rows = []
    for label, messages in placement_requests(placement, skills, loaded, installed, requests):
        prompt, cached = usage_of(ask(client, model, messages, tools, tool_choice="none",
                                      max_completion_tokens=REPLY_TOKENS))
        rows.append({"placement": placement, "request": label, "prompt_tokens": prompt,
                     "cached_tokens": cached})
    return rows


def _figure(value: int | None, width: int) -> str:
    return f"{value:>{width},}" if value is not None else f"{'n/r':>{width}}"


def _of(cached: int | None, prompt: int | None, cached_width: int = 8) -> str:
    """"cached of prompt" for a table; n/r where the provider did not report a figure."""
    return f"{_figure(cached, cached_width)} of {_figure(prompt, 6)}"


def _uncached(rows: list[dict]) -> int | None:
    return total(None if None in (r["prompt_tokens"], r["cached_tokens"])
                 else r["prompt_tokens"] - r["cached_tokens"] for r in rows)


def _not_reported_note(rows) -> list[str]:
    return ([f"n/r: {NOT_REPORTED}"] if any(r["cached_tokens"] is None or r["prompt_tokens"] is None
                                            for r in rows) else [])


def format_placements(rows_by_placement: dict[str, list[dict]]) -> str:
    """The placements side by side (cached of prompt tokens per request), then what each
    placement computed afresh over its requests."""
    placements = list(rows_by_placement)
    labels = [r["request"] for r in rows_by_placement[placements[0]]]
    # a cell is 25 characters under a 24-character heading: the table as the lesson first printed it
    lines = [text_table(["request", *placements],
                        [[label] + [f"{_of(rows[i]['cached_tokens'], rows[i]['prompt_tokens'], 11)}    "
                                    for rows in rows_by_placement.values()] for i, label in enumerate(labels)],
                        "<" + ">" * len(placements), widths=[32] + [24] * len(placements), sep="")]
    for placement, rows in rows_by_placement.items():
        lines.append(f"{placement:<22} tokens computed afresh over the {len(rows)} requests: "
                     f"{describe(_uncached(rows))}")
    return "\n".join(lines + _not_reported_note(
        [r for rows in rows_by_placement.values() for r in rows]))


# ------------------------------------------------------------------ what a tool-list change does
TOOL_CHANGES = {
    "unchanged": "the same tools in the same order",
    "appended": "one tool added at the end (add_tools)",
    "reordered": "the same tools, sorted by name (a registry rebuilt from a set)",
    "removed": "one unused tool taken out of the middle",
    "masked": "the same tools; tool_choice limits the call to one of them",
}


def changed_tools(change: str, tools: list[dict], extra: dict, request: str):
    """(tools, extra request arguments) of the second request under `change`."""
    if change == "unchanged":
        return tools, {}
    if change == "appended":
        return add_tools(tools, [extra]), {}
    if change == "reordered":
        return sorted(tools, key=lambda t: t["function"]["name"]), {}
    if change == "removed":
        middle = len(tools) // 2
        return tools[:middle] + tools[middle + 1:], {}
    if change == "masked":
        name = tools[0]["function"]["name"]
        return tools, {"tool_choice": {"type": "function", "function": {"name": name}}}
    raise ValueError(f"unknown change {change!r}: one of {list(TOOL_CHANGES)}")


def measure_tool_change(client, model: str, change: str, tools: list[dict], extra: dict,
                        messages: list[dict], request: str) -> dict:
    """Warm the cache with `messages` and `tools`, then send one more turn with the tool list
    changed; the second request's usage, and the third's with the same (changed) list (a
    cached figure the provider does not report is None)."""
    short = {"tool_choice": "none", "max_completion_tokens": REPLY_TOKENS}
    ask(client, model, messages, tools, **short)
    after = messages + [{"role": "assistant", "content": "Noted."},
                        {"role": "user", "content": request}]
    new_tools, extra_args = changed_tools(change, tools, extra, request)
    prompt, cached = usage_of(ask(client, model, after, new_tools, **(short | extra_args)))
    again = after + [{"role": "assistant", "content": "Working on it."},
                     {"role": "user", "content": "Go on."}]
    prompt3, cached3 = usage_of(ask(client, model, again, new_tools, **(short | extra_args)))
    return {"change": change, "tools": len(new_tools), "prompt_tokens": prompt,
            "cached_tokens": cached, "next_prompt_tokens": prompt3, "next_cached_tokens": cached3}


def format_tool_changes(rows: list[dict]) -> str:
    """One line per change: the next request's cached tokens, and the one after's."""
    lines = [text_table(["change", "the next request", "and the one after", "what changed"],
                        [[r["change"], f"{_of(r['cached_tokens'], r['prompt_tokens'])} cached",
                          f"{_of(r['next_cached_tokens'], r['next_prompt_tokens'])} cached",
                          TOOL_CHANGES[r["change"]]] for r in rows],
                        "<>><", widths=[10, 22, 22, 0], sep=[" ", " ", "   "])]
    return "\n".join(lines + _not_reported_note(rows))


# ------------------------------------------------------------------ the cache, predicted offline
def predicted_cached(earlier: list[list[int]], ids: list[int]) -> int:
    """Cached tokens a prefix cache reports for `ids` after the requests `earlier`: the longest
    shared prefix, rounded down to 128-token blocks, 0 below 1,024 tokens (OpenAI's rules, also
    the teaching model's) — chapter 05's prediction, applied here."""
    return expected_cached_tokens(earlier, ids, OPENAI_RULES)
