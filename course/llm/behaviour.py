"""What the teaching model says: small, readable rules instead of a neural network.

It is honest about being a stand-in. It behaves like a real model where the course depends on
it: it picks tools from the user's request and the tools' descriptions, fills arguments from
the request, calls independent tools in parallel, answers from tool results once it has them,
retries a call whose result is an error, and summarises a conversation when asked.
"""
from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime

from course.llm.summary import asks_for_summary, is_error_result, summarise
from course.llm.template import content_text

STOPWORDS = frozenset(
    "a an the is are was were be been of in on at to for from by with and or not what what's "
    "whats how who when where which why can could would should will do does did please me my i "
    "you your it its this that these those then first after also get tell show give find us "
    "current currently now there here some any".split()
)
# Ask separators: independent asks are called in parallel; "then" makes the next ask wait.
PARALLEL_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\balso\b|以及|和|并且|同时|，|；)\s*", re.I)
SEQUENTIAL_SPLIT = re.compile(r"\s*(?:\bthen\b|\bafter that\b|\bafterwards\b|然后|之后再|再)\s*", re.I)
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d+")


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> set[str]:
    """Content words (stemmed) for Latin text, character bigrams for CJK text."""
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    terms = {_stem(w.lower()) for w in WORD.findall(words) if w.lower() not in STOPWORDS}
    for run in CJK.findall(text):
        terms.update(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    return terms


def _tool_terms(tool: dict) -> tuple[set[str], set[str]]:
    fn = tool["function"]
    name_terms = _terms(fn["name"])
    other = _terms(fn.get("description", ""))
    for pname, spec in ((fn.get("parameters") or {}).get("properties") or {}).items():
        other |= _terms(pname)
        if isinstance(spec, dict):
            other |= _terms(str(spec.get("description", "")))
    return name_terms, other


def _score(ask: str, tool: dict) -> int:
    ask_terms = _terms(ask)
    name_terms, other = _tool_terms(tool)
    return 2 * len(ask_terms & name_terms) + len(ask_terms & other)


def plan_tool_groups(request: str, tools: list[dict]) -> list[list[str]]:
    """Tool names per step: tools in one group are independent and called in parallel."""
    groups: list[list[str]] = []
    for step in SEQUENTIAL_SPLIT.split(request):
        group: list[str] = []
        for ask in PARALLEL_SPLIT.split(step):
            if not ask.strip():
                continue
            scored = [(_score(ask, tool), -i, tool["function"]["name"]) for i, tool in enumerate(tools)]
            best = max(scored, default=(0, 0, None))
            if best[0] > 0 and best[2] not in group and not any(best[2] in g for g in groups):
                group.append(best[2])
        if group:
            groups.append(group)
    return groups


# ---------------------------------------------------------------- arguments from the request
QUOTED = re.compile(r"[\"“'`]([^\"”'`]{1,200})[\"”'`]")
URL = re.compile(r"https?://[^\s\"'<>]+")
PATH = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]+|\b[\w-]+\.[A-Za-z]{1,5}\b")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
PLACE_AFTER = re.compile(r"\b(?:in|for|at|of|about|near)\s+((?:[A-Z][\w'-]*)(?:\s+[A-Z][\w'-]*)*)")
CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)*)")
EXAMPLE = re.compile(r"e\.g\.,?\s*([^\s,;)]+)")


def _entity(text: str) -> str | None:
    match = PLACE_AFTER.search(text) or CAPITALISED.search(text)
    return match.group(1) if match else None


def _argument(pname: str, spec: dict, request: str, ask: str):
    kind = spec.get("type", "string")
    lname = pname.lower()
    enum = spec.get("enum")
    if enum:
        for value in enum:
            if str(value).lower() in request.lower():
                return value
        return enum[0]
    if kind in ("integer", "number"):
        numbers = NUMBER.findall(request)
        if not numbers:
            return None
        return int(float(numbers[0])) if kind == "integer" else float(numbers[0])
    if kind == "boolean":
        return None
    if "url" in lname:
        match = URL.search(request)
        return match.group(0) if match else None
    if any(k in lname for k in ("path", "file", "dir")):
        match = PATH.search(URL.sub("", request))
        return match.group(0) if match else None
    quoted = QUOTED.search(request)
    if any(k in lname for k in ("query", "pattern", "text", "keyword", "command", "q", "term")):
        if quoted:
            return quoted.group(1)
        return ask.strip(" ?.!。？")
    entity = _entity(request)
    if entity:
        # Prefer an example from the description that mentions the entity
        # ("Timezone name, e.g. America/Vancouver" -> "America/Vancouver").
        for example in EXAMPLE.findall(str(spec.get("description", ""))):
            if entity.lower() in example.lower():
                return example
        return entity
    return quoted.group(1) if quoted else None


def fill_arguments(tool: dict, request: str, ask: str) -> dict:
    params = tool["function"].get("parameters") or {}
    properties = params.get("properties") or {}
    required = set(params.get("required") or ())
    args = {}
    for pname, spec in properties.items():
        value = _argument(pname, spec if isinstance(spec, dict) else {}, request, ask)
        if value is None and pname in required:
            value = ask.strip(" ?.!。？")
        if value is not None:
            args[pname] = value
    return args


# ---------------------------------------------------------------- answers from tool results
def _place(args: dict, data: dict) -> str | None:
    for source in (data, args):
        for key in ("city", "location", "place"):
            if isinstance(source.get(key), str):
                return source[key]
    zone = data.get("timezone") or args.get("timezone")
    if isinstance(zone, str) and "/" in zone:
        return zone.rsplit("/", 1)[-1].replace("_", " ")
    return None


def _describe_time(data: dict, args: dict) -> str | None:
    try:
        moment = datetime.fromisoformat(str(data["datetime"]))
    except (KeyError, ValueError):
        return None
    clock = f"{moment.hour % 12 or 12}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"
    day = data.get("day_of_week") or moment.strftime("%A")
    text = f"It's currently {clock} on {day}, {moment.strftime('%B')} {moment.day}, {moment.year}"
    place = _place(args, data)
    return text + (f" in {place}." if place else ".")


def _describe_weather(data: dict, args: dict) -> str | None:
    if "temperature" not in data:
        return None
    unit = str(data.get("unit") or args.get("unit") or "celsius").lower()
    symbol = "°F" if unit.startswith("f") else "°C"
    text = f"Weather: {data['temperature']}{symbol}"
    conditions = data.get("conditions")
    if conditions:
        skies = " skies" if conditions in ("clear", "cloudy", "overcast", "sunny", "grey") else ""
        text += f" with {conditions}{skies}"
    if "humidity" in data:
        text += f" and {data['humidity']}% humidity"
    text += "."
    celsius = data["temperature"] if symbol == "°C" else (data["temperature"] - 32) * 5 / 9
    if isinstance(celsius, (int, float)) and celsius < 15:
        text += " It's quite cool - you might want to grab a jacket."
    return text


def describe_result(name: str, args: dict, content: str) -> str:
    try:
        data = json.loads(content)
    except (ValueError, TypeError):
        data = None
    if isinstance(data, dict):
        if "error" in data:
            return f"{name} failed: {data['error']}"
        for describe in (_describe_time, _describe_weather):
            text = describe(data, args)
            if text:
                return text
        fields = ", ".join(f"{key}: {value}" for key, value in data.items())
        return f"{name} returned {fields}."
    text = content.strip()
    if len(text) > 600:
        text = text[:600] + f"\n[... {len(content) - 600} more characters]"
    return f"{name} returned:\n{text}"


# ---------------------------------------------------------------- the decision
def _last_user_index(messages: list[dict]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "user":
            return i
    return -1


def _calls_since(messages: list[dict], start: int):
    """(call, result content) pairs after `start`, and the calls of the most recent round."""
    calls, results, last_round = {}, {}, []
    for message in messages[start + 1:]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            last_round = message["tool_calls"]
            for call in last_round:
                calls[call["id"]] = call
        elif message["role"] == "tool":
            results[message["tool_call_id"]] = content_text(message.get("content"))
    return calls, results, last_round


def _call_id(seed: str, index: int) -> str:
    return "call_" + hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()[:24]


def _make_calls(specs: list[tuple[str, str]], seed: str) -> list[dict]:
    return [{"id": _call_id(seed, i), "type": "function",
             "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in enumerate(specs)]


def _parse_args(arguments: str) -> dict:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def respond(messages: list[dict], tools: list[dict] | None, tool_choice, seed: str) -> dict:
    """The assistant message the teaching model answers with (already validated request)."""
    tools = tools or []
    last = messages[-1]
    if last["role"] in ("user", "system", "developer") and asks_for_summary(content_text(last.get("content"))):
        return {"role": "assistant", "content": summarise(messages)}

    u = _last_user_index(messages)
    request = content_text(messages[u].get("content")) if u >= 0 else ""
    calls, results, last_round = _calls_since(messages, u)
    by_name = {tool["function"]["name"]: tool for tool in tools}

    if tools and tool_choice != "none":
        # 1. retry the calls of the last round whose result was an error
        failed = [c for c in last_round if is_error_result(results.get(c["id"], ""))]
        specs = [(c["function"]["name"], c["function"]["arguments"]) for c in failed]
        # 2. otherwise the next step of the plan that has not succeeded yet
        if not specs:
            done = {c["function"]["name"] for cid, c in calls.items()
                    if cid in results and not is_error_result(results[cid])}
            if isinstance(tool_choice, dict):
                groups = [[tool_choice["function"]["name"]]]
            else:
                groups = plan_tool_groups(request, tools)
            for group in groups:
                todo = [name for name in group if name not in done]
                if todo:
                    specs = [(name, json.dumps(fill_arguments(by_name[name], request, request),
                                               ensure_ascii=False)) for name in todo]
                    break
            if not specs and tool_choice == "required":
                best = max(tools, key=lambda t: _score(request, t))
                specs = [(best["function"]["name"],
                          json.dumps(fill_arguments(best, request, request), ensure_ascii=False))]
        if specs:
            return {"role": "assistant", "content": None, "tool_calls": _make_calls(specs, seed)}

    if results:
        answered = [(calls[cid], content) for cid, content in results.items() if cid in calls]
        # Report what worked; report failures only when nothing did.
        shown = [(c, r) for c, r in answered if not is_error_result(r)] or answered
        parts = [describe_result(c["function"]["name"], _parse_args(c["function"]["arguments"]), r)
                 for c, r in shown]
        return {"role": "assistant", "content": "\n\n".join(parts)}

    said = " ".join(request.split())
    if len(said) > 200:
        said = said[:200] + "..."
    return {"role": "assistant", "content": (
        "I am the course's teaching model: a small rule-based stand-in for an LLM, not a real "
        "one. I call the tools a request gives me, answer from their results, and summarise a "
        f"conversation when asked. You said: \"{said}\"")}
