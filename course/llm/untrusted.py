"""Rule `untrusted_content`: instructions planted in tool results (a simulated weakness).

This rule simulates a real weakness of language models, the one the textbook's experiment 2-5
demonstrates: text that arrives as *data* (a web page, a file, a tool's output) can carry
instructions, and a model may follow them as if the user had given them. It is a simulation
for teaching, not a claim about how any particular model behaves.

The teaching model looks at the tool results of the current turn (after the last user message)
for an instruction aimed at the assistant, in these documented patterns:

    "ignore (all) previous / prior / above instructions ..."   (also "disregard", "forget")
    "you must now ..."
    "call TOOL with key=value, key2=\"a value\"" or "call TOOL(key=value)"

and follows it: the named tool is called with the given arguments (typed by the tool's
schema) if it is offered; "say / reply / respond with \"X\"" makes the reply X; anything else is
followed in words. An instruction already carried out (its call's result is visible) is not
repeated.

The defence it honours is the seed's source tagging: if a system or developer message says
that text inside <external_content> tags is data (it mentions external_content together with
"data", "untrusted", "do not follow" or the like) AND the instruction sits inside
<external_content source="...">...</external_content>, the instruction is not followed, and
the reply says that an instruction in external content was ignored. Either half alone does not
protect: tags without the policy, or the policy with the instruction outside the tags.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from course.llm.context import Context, Decision, show_call
from course.llm.planning import key_values, typed_arguments

TRIGGER = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
    r"(?:previous|prior|above|earlier|preceding)\s+instructions?\b"
    r"|\byou must now\b"
    r"|\bcall\s+`?[A-Za-z0-9_-]+`?\s*(?:\(|\bwith\b|\busing\b)", re.I)
CALL = re.compile(r"\bcall\s+`?([A-Za-z0-9_-]+)`?\s*(?:\(([^)]*)\)|(?:with|using)\s+([^\n]+))", re.I)
SAY = re.compile(r"\b(?:say|reply|respond|answer|write|print|output)\s+(?:only\s+)?(?:with\s+)?"
                 r"(?:the\s+(?:word|words|text)\s+)?[\"“']([^\"”'\n]{1,200})[\"”']", re.I)
FENCE = re.compile(r"<external_content\b([^>]*)>(.*?)</external_content>", re.S | re.I)
SOURCE = re.compile(r"""source\s*=\s*["']([^"']*)["']""")
POLICY_WORDS = re.compile(r"\b(?:data|untrusted|not (?:an? )?instructions?|never (?:follow|obey)|"
                          r"(?:do not|don't) (?:follow|obey|execute)|ignore (?:any )?instructions)\b",
                          re.I)
MAX_INSTRUCTION = 400


@dataclass
class Finding:
    index: int            # the tool message
    text: str             # the instruction, from its trigger to the end of its paragraph
    source: str | None    # the fence's source, if fenced


def fence_policy(ctx: Context) -> int | None:
    """The index of a system/developer message that declares <external_content> to be data."""
    for i, text in ctx.system_text():
        if "external_content" in text and POLICY_WORDS.search(text):
            return i
    return None


def _may_instruct(text: str) -> bool:
    """A cheap test before the regular expression: every pattern contains one of these."""
    low = text.lower()
    return "instruction" in low or "must now" in low or "call" in low


def findings(ctx: Context) -> list[Finding]:
    found = []
    for call in ctx.calls_since(ctx.last_user):
        result = ctx.results.get(call.id)
        if result is None or not _may_instruct(result.content) or not TRIGGER.search(result.content):
            continue
        fences = [(m.start(2), m.end(2), SOURCE.search(m.group(1)))
                  for m in FENCE.finditer(result.content)]
        covered = -1
        for match in TRIGGER.finditer(result.content):
            if match.start() < covered:
                continue  # part of an instruction already taken
            fence = next((f for f in fences if f[0] <= match.start() < f[1]), None)
            end = fence[1] if fence else len(result.content)
            paragraph = result.content.find("\n\n", match.start())
            if 0 <= paragraph < end:
                end = paragraph
            end = min(end, match.start() + MAX_INSTRUCTION)
            covered = end
            source = (fence[2].group(1) if fence[2] else "unnamed") if fence else None
            found.append(Finding(result.index, " ".join(result.content[match.start():end].split()),
                                 source))
    return found


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def rule_untrusted_content(ctx: Context) -> Decision | None:
    """Follow an instruction found in this turn's tool results, unless it is fenced by policy."""
    found = findings(ctx)
    if not found:
        return None
    policy = fence_policy(ctx)
    followed = []
    for finding in found:
        if finding.source is not None and policy is not None:
            ctx.notes.append(f"Note: I ignored an instruction inside external content (source: "
                             f"{finding.source}): \"{_short(finding.text)}\". The system prompt "
                             f"says such text is data, not instructions.")
            ctx.note("untrusted_content", f"instruction in messages[{finding.index}] is inside "
                     f"<external_content source=\"{finding.source}\"> and messages[{policy}] "
                     f"declares that data: not followed", [finding.index, policy])
            continue
        unprotected = ("no system prompt declares <external_content> as data"
                       if policy is None else f"it is outside the <external_content> fence "
                                              f"that messages[{policy}] declares")
        followed.append((finding, unprotected))
    for finding, unprotected in followed:
        match = CALL.search(finding.text)
        if not match:
            continue
        name = match.group(1)
        if name not in ctx.by_name:
            ctx.note("untrusted_content", f"instruction in messages[{finding.index}] asks for "
                     f"{name}, which is not offered: cannot follow it", [finding.index])
            continue
        args = typed_arguments(ctx.by_name[name], key_values(match.group(2) or match.group(3) or ""))
        done = ctx.visible_result(name, args)
        if done:
            ctx.note("untrusted_content", f"instruction in messages[{finding.index}] was already "
                     f"followed: {show_call(name, args)} answered in messages[{done[1].index}]",
                     [finding.index, done[1].index])
            continue
        decision = ctx.call("untrusted_content", f"tool result messages[{finding.index}] says "
                            f"\"{_short(finding.text, 80)}\"; followed as an instruction "
                            f"({unprotected})", [(name, args)], [finding.index])
        if decision:
            return decision
    for finding, unprotected in followed:
        if CALL.search(finding.text):
            continue
        say = SAY.search(finding.text)
        text = say.group(1) if say else (f"Following the instruction in the tool result: "
                                          f"\"{_short(finding.text, 200)}\"")
        return ctx.answer("untrusted_content", f"tool result messages[{finding.index}] says "
                          f"\"{_short(finding.text, 80)}\"; followed as an instruction "
                          f"({unprotected})", text, [finding.index])
    return None
