"""The teaching model's extraction rule (chapter 17): what it keeps from a finished session.

The teaching model is a documented simulation, so its memory extraction is a rule, not
judgement. Each sentence a *user* wrote is matched against the patterns below, in order; the
first that matches gives one candidate memory (kind, key, value, single). Assistant messages are
never a source: what the user said is the evidence. English and Chinese patterns say the same
things:

    I live in X / I moved to X / 我住在X / 我搬到了X              fact        city       single
    I work at X / 我在X工作                                      fact        employer   single
    I prefer X for editing / 我写代码用X                          preference  editor     single
    I drink X every morning / 我每天早上喝X                       preference  drink      single
    I went to X / 我去了X                                         fact        trip       many
    We decided to use X for the T because R / 我们决定T用X，因为R   decision    decision:T single
    Remind me to X / TODO: X / 提醒我X                             open_item   todo       many
    My K is X / 我的K是X                                          fact        K          single
    My <relation> <Name> has|is X / 我的<relation><Name>…          fact        <relation> <Name>  single

The rule does NOT judge what may be stored: "My API key is sk-…" is extracted like any "My K is
X". Refusing secrets, credentials and other people's private data is the filter's job
(lab 17's `filter_records`), by code, after extraction, so that no model's judgement
stands between a secret and the store.

The request that gets the rule from the server (course/llm/policy.py, before rule 2): a chat
completion whose `response_format` is the JSON schema named "memory_records" (RECORDS_SCHEMA).
Its last user message is the transcript, one JSON object a line, {"message": i, "role", "content"}
(`transcript`); the reply's content is {"memories": [{"kind", "key", "value", "message", "text"},
...]}: the rule applied to those messages, "message" the line's number. Anything else in the
request (the system prompt, which a real model needs) is not read. The same request, with the
schema as a grammar, asks a real model (lesson_support/memory/extraction.py).
"""
from __future__ import annotations

import json
import re

from course.givens.memory import MEMORY_KINDS

# A sentence ends at . ! ? followed by white space or the end ("example.com" and "v1.2" do not
# end one), or at 。！？ or a line break anywhere.
_SENTENCES = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=[^\s.!?]))+[.!?。！？]*")
_EN = r"([A-Za-z0-9][\w .'+#/-]*?)"
_ZH = r"([^，。！？,.!?\s][^，。！？,.!?]*?)"
RELATIONS = r"(colleague|friend|sister|brother|wife|husband|mother|father|boss|neighbour|neighbor|同事|朋友|姐姐|妹妹|哥哥|弟弟|妻子|丈夫|妈妈|爸爸|老板|邻居)"

# (pattern, kind, key or None (the pattern's "key" group), single)
RULES: tuple[tuple[re.Pattern, str, str | None, bool], ...] = tuple(
    (re.compile(p, re.I), kind, key, single) for p, kind, key, single in (
        (rf"^\s*i (?:live in|moved to|have moved to) {_EN}\s*[.!]?$", "fact", "city", True),
        (rf"^\s*我(?:住在|搬到了|搬到){_ZH}了?\s*[。！]?$", "fact", "city", True),
        (rf"^\s*i work (?:at|for) {_EN}\s*[.!]?$", "fact", "employer", True),
        (rf"^\s*我在{_ZH}工作\s*[。！]?$", "fact", "employer", True),
        (rf"^\s*i (?:prefer|use) {_EN} for editing\s*[.!]?$", "preference", "editor", True),
        (rf"^\s*我写代码(?:用|喜欢用){_ZH}\s*[。！]?$", "preference", "editor", True),
        (rf"^\s*i drink {_EN} every morning\s*[.!]?$", "preference", "drink", True),
        (rf"^\s*我每天早上喝{_ZH}\s*[。！]?$", "preference", "drink", True),
        (rf"^\s*i (?:went|travelled|traveled) to {_EN}(?: last \w+| this \w+)?\s*[.!]?$", "fact", "trip", False),
        (rf"^\s*我(?:上个月|上周|今年)?去了{_ZH}\s*[。！]?$", "fact", "trip", False),
        (rf"^\s*we decided to use {_EN} for the (?P<topic>[\w -]+?) because (?P<why>.+?)\s*[.!]?$",
         "decision", "decision", True),
        (rf"^\s*我们决定(?P<topic>[^，。用]+?)用{_ZH}，因为(?P<why>.+?)\s*[。！]?$", "decision", "decision", True),
        (r"^\s*(?:remind me to|todo:)\s*(.+?)\s*[.!]?$", "open_item", "todo", False),
        (r"^\s*提醒我(.+?)\s*[。！]?$", "open_item", "todo", False),
        (rf"^\s*my {RELATIONS} (?P<name>[A-Z][a-z]+) (?:has|is|lives|earns|was) (.+?)\s*[.!]?$", "fact", None, True),
        (rf"^\s*我的{RELATIONS}(?P<name>\S{{1,4}}?)(?:有|是|住在|得了)(.+?)\s*[。！]?$", "fact", None, True),
        (r"^\s*my (?P<key>[\w -]{2,30}?) is (.+?)\s*[.!]?$", "fact", None, True),
        (r"^\s*我的(?P<key>[^是，。]{1,10})是(.+?)\s*[。！]?$", "fact", None, True),
    ))

# The keys whose values accumulate (the rule's "many" rows); every other key is single.
ACCUMULATING = ("trip", "todo")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.findall(text) if s.strip()]


def _value(match: re.Match) -> str:
    """The pattern's value: its last unnamed group that matched."""
    named = set(match.re.groupindex.values())
    groups = [i for i in range(1, (match.re.groups or 0) + 1) if i not in named and match.group(i)]
    return match.group(groups[-1]).strip(" .。") if groups else ""


def extract_sentence(sentence: str) -> dict | None:
    """The candidate memory one user sentence gives ({"kind", "key", "value", "single"}), or None."""
    for pattern, kind, key, single in RULES:
        match = pattern.match(sentence)
        if not match:
            continue
        groups = match.groupdict()
        if key == "decision":
            key = f"decision:{groups['topic'].strip().lower()}"
        elif key is None and groups.get("name"):
            key = f"{match.group(1).lower()} {groups['name']}"
        elif key is None:
            key = groups["key"].strip().lower()
        value = _value(match)
        if value:
            return {"kind": kind, "key": key, "value": value, "single": single}
    return None


def extract_memories(messages) -> list[dict]:
    """Every candidate memory of a session's messages, in order: the fields of `extract_sentence`
    plus "message" (the index of the message it came from) and "text" (the sentence)."""
    found = []
    for index, message in enumerate(messages):
        if message.get("role") != "user" or not isinstance(message.get("content"), str):
            continue
        for sentence in sentences(message["content"]):
            candidate = extract_sentence(sentence)
            if candidate:
                found.append({**candidate, "message": index, "text": sentence})
    return found


# -- the request that asks the server for the rule (see the module's docstring) ---------------
SCHEMA_NAME = "memory_records"
RECORDS_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["memories"],
    "properties": {"memories": {"type": "array", "maxItems": 10, "items": {
        "type": "object", "additionalProperties": False,
        "required": ["kind", "key", "value", "message", "text"],
        "properties": {"kind": {"enum": list(MEMORY_KINDS)}, "key": {"type": "string", "maxLength": 40},
                       "value": {"type": "string", "maxLength": 120}, "message": {"type": "integer"},
                       "text": {"type": "string", "maxLength": 300}}}}},
}


def transcript(messages) -> str:
    """A session's messages as an extraction request's last user message: one JSON object a line."""
    return "\n".join(json.dumps({"message": i, "role": m.get("role"), "content": m.get("content")},
                                ensure_ascii=False) for i, m in enumerate(messages))


def read_transcript(text: str) -> list[dict]:
    """The lines of `transcript`'s text that are such objects (any other line is skipped)."""
    found = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("message"), int) and isinstance(item.get("role"), str):
            found.append(item)
    return found


def asks_for_memories(body) -> bool:
    """True for a request whose response_format is the JSON schema named SCHEMA_NAME."""
    wanted = body.get("response_format") if isinstance(body, dict) else None
    schema = wanted.get("json_schema") if isinstance(wanted, dict) and wanted.get("type") == "json_schema" else None
    return isinstance(schema, dict) and schema.get("name") == SCHEMA_NAME


def memories_reply(text: str) -> str:
    """The reply's content for a transcript's text: {"memories": [...]} as JSON."""
    lines = read_transcript(text)
    found = extract_memories([{"role": line["role"], "content": line.get("content")} for line in lines])
    return json.dumps({"memories": [{"kind": c["kind"], "key": c["key"], "value": c["value"],
                                     "message": lines[c["message"]]["message"], "text": c["text"]}
                                    for c in found]}, ensure_ascii=False)
