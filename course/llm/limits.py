"""Part of rule `own_state`: a request to make a call again, checked against the agent's limits.

"Can you call them again?" names no target. A request that asks for a call again (it names an
offered tool by whole word, as "call" names the tool `call`, or says "try/do/run/repeat ...
again"; "what was the temperature again?" only asks to be reminded and is left to the later
rules) makes the teaching model repeat the latest visible call of the tool it names, or of any
tool when it names none, with the same arguments. Before it makes that call it looks for a
limit, in this order:

1. The latest <agent_status> block: a counter `calls <tool> <target>` (the target being one of
   the call's argument values) or else `calls <tool>`, whose value reads "N/M" (as in
   "calls call Xfinity: 3/3 max, limit reached"). At or over the limit the call is declined;
   below it the call is made. The bar is trusted even when the visible history shows more
   calls, as real models trust what their harness tells them (the trace shows both).
2. With no such counter: a limit stated in the system prompt ("call any one merchant at most
   3 times per task": a clause with "at most N times" or "at most N calls" that names the
   tool), against the calls visible in the window to the same tool with the same first
   argument. Calls that have left the window are not counted, so after a sliding window the
   teaching model may call once too often: the consequence chapter 08 shows.

A declined call is answered in text that says which limit stopped it (the seed's system prompt
asks for that: "when a rule stops you, say so"). No visible call to repeat: this part steps
aside and the later rules decide.
"""
from __future__ import annotations

import re

from course.llm.context import Call, Context, Decision, canonical

AGAIN = re.compile(r"\b(?:again|once more|one more time)\b", re.I)
# "What was the temperature again?" asks to be reminded: only a request that names an offered
# tool, or says "try/do/run/repeat ... again", asks for a call.
ACT_AGAIN = re.compile(r"\b(?:try|do|run|repeat|redo)\b[^.?!]{0,30}?\b(?:again|once more|one more time)\b", re.I)
COUNTER = re.compile(r"(\d+)\s*/\s*(\d+)")
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10}
AT_MOST = re.compile(r"\bat most (\d+|" + "|".join(NUMBER_WORDS) + r") (?:times|calls)\b", re.I)


def _word(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I) is not None


def _key_text(value) -> str:
    """A value as the status bar writes it inside a key (chapter 08's render_status)."""
    return " ".join(re.sub(r"[^\w -]", "_", str(value)).lower().split())


def call_to_repeat(ctx: Context, named: list[str]) -> Call | None:
    """The latest visible call of the tools the request names (`named`); when it names none,
    the latest visible call of any tool. None when there is no such call in the window."""
    calls = [c for c in ctx.calls if c.name in named] if named else ctx.calls
    return calls[-1] if calls else None


def _targets(call: Call) -> list[str]:
    return [v for v in call.args.values() if isinstance(v, str) and v.strip()]


def counter_in_bar(fields: dict, call: Call) -> tuple[str, int, int] | None:
    """(key, used, limit) of the bar's counter for this call's target, else for its tool."""
    keys = [f"calls {call.name} {_key_text(t)}" for t in _targets(call)] + [f"calls {call.name}"]
    for wanted in keys:
        for key, value in fields.items():
            match = COUNTER.search(str(value))
            if " ".join(key.split()) == wanted and match:
                return f"{key}: {value}", int(match.group(1)), int(match.group(2))
    return None


def limit_in_system_prompt(ctx: Context, tool: str) -> tuple[int, int, str] | None:
    """(message index, limit, the clause) of an "at most N times" clause naming the tool."""
    for i, text in ctx.system_text():
        for clause in re.split(r"[.;\n]", text):
            clause = re.sub(r"^\s*\w+:\s*", "", clause)  # a label such as "Rules:"
            match = AT_MOST.search(clause)
            if match and _word(clause, tool):
                n = match.group(1).lower()
                return i, int(NUMBER_WORDS.get(n, n)), " ".join(clause.split())
    return None


def _decline(ctx: Context, call: Call, why: str, reason: str, evidence) -> Decision | None:
    target = next(iter(_targets(call)), call.name)
    return ctx.answer("own_state", f"asked to use {call.name} again; {why}: declined",
                      f"I will not use {call.name} again for {target}: {reason}. "
                      f"That is the limit I work under, so I am stopping here. Next best step: I can "
                      f"report what the earlier calls established, or do something else you ask.",
                      [ctx.last_user, *evidence])


AGAIN_WORDS = ("again", "once more", "one more time")


def asks_again(text: str) -> bool:
    """AGAIN.search(text), cheaply: the regular expression tries its words at every position
    (about 9 ms on a 400 KB message), a substring search on ASCII text is C-speed."""
    if text.isascii():  # str.lower and re.I agree on ASCII
        low = text.lower()
        if not any(word in low for word in AGAIN_WORDS):
            return False
    return AGAIN.search(text) is not None


def rule_call_again(ctx: Context, status: tuple[int, dict] | None) -> Decision | None:
    """A request to call again: repeat the latest matching call unless a limit forbids it."""
    if not asks_again(ctx.request):
        return None
    named = [name for name in ctx.by_name if _word(ctx.request, name)]
    if not named and not ACT_AGAIN.search(ctx.request):
        return None
    call = call_to_repeat(ctx, named)
    if call is None:
        ctx.note("own_state", "asked to do something again, but no earlier call of that kind is "
                              "visible to repeat", [ctx.last_user])
        return None
    same = [c for c in ctx.calls if c.name == call.name]
    first = next(iter(call.args), None)
    if first is not None:
        same = [c for c in same if canonical({first: c.args.get(first)}) == canonical({first: call.args[first]})]
    seen = f"the visible history shows {len(same)} such call{'s' * (len(same) != 1)}"
    counter = counter_in_bar(status[1], call) if status else None
    if counter:
        key, used, limit = counter
        why = f"the <agent_status> block in messages[{status[0]}] says {key!r} ({seen})"
        if used >= limit:
            return _decline(ctx, call, why, f"my status block says {key}", [status[0]])
        return ctx.call("own_state", f"asked to use {call.name} again; {why}: below the limit, "
                                     f"trusted", [(call.name, call.arguments)], [ctx.last_user, status[0]])
    stated = limit_in_system_prompt(ctx, call.name)
    if stated:
        where, limit, clause = stated
        why = f"messages[{where}] sets a limit ({clause!r}) and {seen} (calls outside the window are not counted)"
        if len(same) >= limit:
            return _decline(ctx, call, why, f"I can see {len(same)} such calls and my instructions "
                                            f"say \"{clause}\"", [where, *(c.index for c in same)])
        return ctx.call("own_state", f"asked to use {call.name} again; {why}: below the limit",
                        [(call.name, call.arguments)], [ctx.last_user, where, *(c.index for c in same)])
    return ctx.call("own_state", f"asked to use {call.name} again, and no limit is set: repeat "
                                 f"the call in messages[{call.index}]", [(call.name, call.arguments)],
                    [ctx.last_user, call.index])
