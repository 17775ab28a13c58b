"""The teaching model's summaries: structured, built from every role, identifiers kept whole.

Asked to summarise or compact the conversation, the teaching model answers with the sections a
good compaction prompt asks for, filled by rules from every message before the request:

    Goal                      the first user message; later user requests follow it
    Constraints               must / never / only / keep ... sentences of system and user messages
    Confirmed facts           what tool calls returned (a short output's first line; of a long
                              one only its "found X: ..." lines), and the statements of the
                              assistant (not its narration: "First I look at ...")
    Changes made              successful calls of tools that write (write, edit, patch, ...)
    Failed attempts (and why) tool results that report an error or a non-zero exit code, with
                              the lines that give the cause; failures the assistant told in prose
    Open items                the latest unanswered user request, the assistant's last stated
                              plans, failures never followed by a success of the same tool
    Identifiers (verbatim)    every identifier not already quoted above (see course/identifiers.py),
                              up to MAX_IDENTIFIERS; past that budget the most recently
                              mentioned ones, which the agent needs to continue, and a line
                              that counts the older ones left out

Long items (a goal, a call's arguments, an output line) are shortened, and say so with " ...";
every kept identifier is whole: one that does not fit is left out whole, and the Identifiers
section lists it.

A summary found in the transcript (from an earlier compaction) is carried forward section by
section. It is rule-based: it copies and sorts, it does not understand. Chapter 04 compares it
with the study guide's rule-based summary.
"""
from __future__ import annotations

import re

from course.llm.answers import is_error_result
from course.identifiers import cut_whole, error_causes, identifiers, unique
from course.llm.template import content_text

__all__ = ["asks_for_summary", "summarise", "identifiers", "is_error_result"]

# A request to summarise the conversation (not "a weather summary for Paris"): compacting, a
# summary of the conversation or of text handed over, or the Chinese words for it.
SUMMARY_REQUEST = re.compile(
    r"\b(?:compact|condense)\b|\bcompaction\b"
    r"|\bsummari[sz](?:e|ing)\b[^.\n]{0,80}?(?:conversation|transcript|history|so far|above|"
    r"chat|discussion|session|progress|run\b|what happened|everything|following|:(?:\s|$))"
    r"|\bsummary of (?:the |this |our )?(?:conversation|transcript|history|chat|session|run)"
    r"|总结|摘要|压缩", re.I)
CONSTRAINT = re.compile(r"\b(must|never|do not|don't|only|should|always|without|avoid|required?|"
                        r"keep|make sure|ensure)\b|必须|不要|不能|禁止|只能|务必", re.I)
FACT = re.compile(r"\b(confirmed|found|root cause|because|turns out|is caused|verified)\b"
                  r"|确认|原因|发现", re.I)
FAILURE_PROSE = re.compile(r"\b(failed|fails|failure|error|exception|refused|denied|could not|"
                           r"couldn't|cannot|can't|not found|undefined reference|timed out|"
                           r"crash(?:ed)?)\b|[a-z](?:Error|Exception)\b|失败|错误", re.I)
# The assistant saying what it does right now ("First I look at ...", "Checking the log.").
NARRATION = re.compile(r"^(?:(?:first|now|next|then),? (?:i|let me|we)\b|let me\b|let's\b|"
                       r"[a-z]+ing\b(?! (?:is|was|are|were|has|had)\b))", re.I)
OPEN = re.compile(r"\b(next|todo|remaining|still|need to|will|pending|open)\b|下一步|待办|还需", re.I)
CHANGE_TOOL = re.compile(r"write|edit|patch|create|update|delete|remove|apply|set|move|rename|"
                         r"install|commit|save|append|replace|mkdir", re.I)
EXIT_CODE = re.compile(r"exit code:? [1-9]|exit_code\W+[1-9]", re.I)
HEADER_LINE = re.compile(r"^\[(?:exit code: \d+|[^\]]*: lines \d+-\d+ of \d+[^\]]*)\]$")
FOUND_LINE = re.compile(r"\bfound\b[^:\n]*:\s*\S", re.I)
# A sentence ends at . ! ? followed by a space or the end (so "build/libpng16.so" stays whole).
SHORT_OUTPUT_LINES = 3
SENTENCE = re.compile(r".+?(?:[.!?](?=\s|$)|[。！？]|$)", re.M)
SUMMARY_TITLE = "Summary of the conversation so far (teaching model, rule-based):"
SECTIONS = ("Goal", "Constraints", "Confirmed facts", "Changes made", "Failed attempts (and why)",
            "Open items")
MAX_IDENTIFIERS = 400  # the budget of the identifiers section, in identifiers


SUMMARY_WORDS = ("summar", "compact", "condense", "总结", "摘要", "压缩")


def asks_for_summary(text: str) -> bool:
    low = (text or "").lower()
    return any(word in low for word in SUMMARY_WORDS) and bool(SUMMARY_REQUEST.search(text))


def _sentences(text: str) -> list[str]:
    return [s for s in (" ".join(s.split()) for s in SENTENCE.findall(text)) if s]


def _short(text: str, limit: int = 240) -> str:
    """`text` on one line, at most `limit` characters and " ..." when shortened. Every kept
    identifier is whole (one that does not fit is left out whole; the Identifiers section then
    lists it)."""
    return cut_whole(" ".join(text.split()), limit, " ...")


def _failed(content: str) -> bool:
    # For the summary a non-zero exit code also counts as a failed attempt.
    return is_error_result(content) or bool(EXIT_CODE.search(content[:200] if content else ""))


def _informative(content: str) -> list[str]:
    """What a successful result says: a short output is the fact itself (its first line); of a
    long one only its "found X: ..." lines are kept (the rest is the full output of a command
    that succeeded, which a compaction leaves out)."""
    lines = [line for line in map(str.strip, content.splitlines())
             if line and not (line[0] == "[" and HEADER_LINE.match(line))]
    if not lines:
        return ["(no output)"]
    found = [line for line in lines if "ound" in line and FOUND_LINE.search(line)][:2]
    if len(lines) > SHORT_OUTPUT_LINES:
        return [_short(line, 160) for line in found] or [f"ok ({len(lines)} lines of output)"]
    return unique(_short(line, 160) for line in [lines[0]] + found)


def _earlier_summary(text: str) -> dict[str, list[str]] | None:
    """The sections of a summary this model wrote before (for chained compactions)."""
    if SUMMARY_TITLE not in text:
        return None
    sections: dict[str, list[str]] = {}
    current = None
    for line in text[text.index(SUMMARY_TITLE):].splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections.setdefault(current, [])
        elif current and line.startswith("- ") and line[2:].strip() not in ("(none)",
                                                                            "(none beyond those above)"):
            sections[current].append(line[2:].strip())
    return sections


class _Sections:
    def __init__(self):
        self.items: dict[str, list[str]] = {title: [] for title in SECTIONS}
        self.carried_identifiers: list[str] = []

    def add(self, title: str, item: str) -> None:
        self.items[title].append(item)


def _read_user(text: str, first: bool, out: _Sections) -> None:
    if first:
        out.add("Goal", _short(text, 400))
    for sentence in _sentences(text):
        if CONSTRAINT.search(sentence):
            out.add("Constraints", sentence)
        elif not first and FACT.search(sentence):
            out.add("Confirmed facts", f"user: {sentence}")
    if not first:
        out.add("Goal", f"then: {_short(text, 300)}")


def _read_assistant(text: str, out: _Sections) -> None:
    for sentence in _sentences(text):
        if NARRATION.match(sentence):
            continue
        if FAILURE_PROSE.search(sentence):
            out.add("Failed attempts (and why)", f"assistant: {sentence}")
        else:
            out.add("Confirmed facts", f"assistant: {sentence}")


def summarise(messages: list[dict]) -> str:
    """Summarise every message before the last one (the last one is the request to summarise)."""
    transcript = messages[:-1]
    if not any(m["role"] in ("assistant", "tool") for m in transcript):
        # Nothing happened yet: summarise the text the user handed over instead.
        text = content_text(messages[-1].get("content"))
        transcript = [{"role": "user", "content": text.split("\n", 1)[-1] if "\n" in text else text}]

    out = _Sections()
    all_text: list[str] = []
    calls: dict[str, tuple[str, str]] = {}
    failed_names: list[str] = []
    succeeded: set[str] = set()
    seen_user = False
    open_items: list[str] = []
    for message in transcript:
        role = message["role"]
        text = content_text(message.get("content"))
        all_text.append(text)
        earlier = _earlier_summary(text)
        if earlier is not None:
            for title, items in earlier.items():
                if title in out.items:
                    out.items[title] += items
                elif title.startswith("Identifiers"):
                    out.carried_identifiers += [i for i in items if not i.startswith("... ")]
            continue
        if role in ("system", "developer"):
            out.items["Constraints"] += [s for s in _sentences(text) if CONSTRAINT.search(s)]
        elif role == "user":
            _read_user(text, not seen_user, out)
            seen_user = True
            open_items = [_short(text)]  # the latest user ask is open until answered
        elif role == "assistant":
            _read_assistant(text, out)
            for call in message.get("tool_calls") or ():
                fn = call.get("function") or {}
                calls[call.get("id")] = (fn.get("name", "?"), fn.get("arguments", ""))
                all_text.append(fn.get("arguments", ""))
            if text and not message.get("tool_calls"):
                open_items = [s for s in _sentences(text) if OPEN.search(s)]
        elif role == "tool":
            name, args = calls.get(message.get("tool_call_id"), ("?", ""))
            what = f"{name}({_short(args, 100)})"
            if _failed(text):
                out.add("Failed attempts (and why)", f"{what} -> {' | '.join(error_causes(text))}")
                failed_names.append(name)
            else:
                title = "Changes made" if CHANGE_TOOL.search(name) else "Confirmed facts"
                out.add(title, f"{what} -> {' | '.join(_informative(text))}")
                succeeded.add(name)
    out.items["Open items"] += open_items + [
        f"unresolved failure of {name}" for name in unique(failed_names) if name not in succeeded]
    if not out.items["Goal"]:
        out.items["Goal"] = ["(no user task found)"]

    lines = [SUMMARY_TITLE]
    for title in SECTIONS:
        lines.append(f"\n## {title}")
        lines += [f"- {item}" for item in unique(out.items[title])] or ["- (none)"]
    body = "\n".join(lines)
    # Identifiers the sections above already quote are not listed again. (One that appears
    # above only inside a longer identifier is listed: a repeat costs less than a search.)
    quoted = set(identifiers(body))
    missing = [i for i in unique(out.carried_identifiers + identifiers("\n".join(all_text)))
               if i not in quoted]
    kept = _newest(missing, out.carried_identifiers, all_text)
    lines.append("\n## Identifiers (verbatim)")
    if len(kept) < len(missing):
        lines.append(f"- ... {len(missing) - len(kept)} older identifiers left out (mentioned "
                     f"last before these): see the full transcript")
    lines += [f"- {i}" for i in kept] or ["- (none beyond those above)"]
    return "\n".join(lines)


def _newest(missing: list[str], carried: list[str], texts: list[str]) -> list[str]:
    """`missing` cut to MAX_IDENTIFIERS: the identifiers mentioned most recently (an earlier
    summary's count as mentioned first), still in order of first appearance."""
    if len(missing) <= MAX_IDENTIFIERS:
        return missing
    last = {i: (-1, n) for n, i in enumerate(carried)}
    for t, text in enumerate(texts):
        for n, i in enumerate(identifiers(text)):
            last[i] = (t, n)
    recent = set(sorted(missing, key=last.__getitem__)[-MAX_IDENTIFIERS:])
    return [i for i in missing if i in recent]
