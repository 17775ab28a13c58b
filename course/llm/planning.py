"""Which tools a request needs, and with which arguments: word overlap, not understanding.

A request is split into asks ("the time and the weather" is two asks; "X, then Y" makes Y wait
for X). Each ask is scored against every offered tool: two points per content word shared with
the tool's name, one per word shared with its description and parameters, where a few related
words count as the same ("temperature" fits a weather tool, "clock" a time tool). The best tool
of an ask with a positive score is planned; tools in one step are independent and may be called
in parallel. Arguments are filled from the request by the parameters' names and types.

At a temperature above 0 (course/llm/sampling.py) the tool of an ask, the best-fitting tool, an
enum's value and the form of a name are drawn from the softmax of these same scores instead of
taken as the best; without a `sampler` (or at temperature 0) the best is taken, ties to the first.

The meta-tools `load_skill` and `tool_search` are never planned here: their own rules (skills,
tool search) decide when to call them.
"""
from __future__ import annotations

import re

from course.llm.sampling import Sampler, choose

META_TOOLS = frozenset({"load_skill", "tool_search"})
STOPWORDS = frozenset(
    "a an the is are was were be been of in on at to for from by with and or not what what's "
    "whats how who when where which why can could would should will do does did please me my i "
    "you your it its this that these those then first after also get tell show give find us "
    "current currently now there here some any again".split()
)
# Words a user says for what a tool's description calls something else (stems on both sides).
RELATED = {
    "weather": ("temperature", "temp", "forecast", "rain", "humid", "humidity", "wind", "windy",
                "snow", "sunny", "hot", "cold", "warm", "celsius", "fahrenheit"),
    "time": ("clock", "hour", "date", "today", "o'clock"),
}
_RELATED_BY_WORD = {word: key for key, words in RELATED.items() for word in words}
# Ask separators: independent asks are called in parallel; "then" makes the next ask wait.
PARALLEL_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\balso\b|以及|和|并且|同时|，|；)\s*", re.I)
SEQUENTIAL_SPLIT = re.compile(r"\s*(?:\bthen\b|\bafter that\b|\bafterwards\b|然后|之后再|再)\s*", re.I)
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d+")


def stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms(text: str) -> set[str]:
    """Content words (stemmed, lower case) for Latin text, character bigrams for CJK text."""
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    found = {stem(w) for w in set(WORD.findall(words.lower())) if w not in STOPWORDS}
    for run in CJK.findall(text):
        found.update(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    return found


def ask_terms(text: str) -> set[str]:
    """The terms of what a user asks, with the related words of RELATED added."""
    found = terms(text)
    return found | {_RELATED_BY_WORD[t] for t in found if t in _RELATED_BY_WORD}


def key_terms(text: str, limit: int = 8) -> str:
    """The request's content words in their original spelling and order (for a search query)."""
    seen, out = set(), []
    for word in WORD.findall(text):
        low = word.lower()
        if low not in STOPWORDS and low not in seen and (len(low) > 2 or word.isdigit()):
            seen.add(low)
            out.append(word)
    out += [run for run in CJK.findall(text) if run not in seen]
    return " ".join(out[:limit])


def tool_name(tool: dict) -> str:
    return tool["function"]["name"]


def _tool_terms(tool: dict) -> tuple[set[str], set[str]]:
    fn = tool["function"]
    name_terms = terms(fn["name"])
    other = terms(fn.get("description") or "")
    properties = (fn.get("parameters") or {}).get("properties") or {}
    if isinstance(properties, dict):
        for pname, spec in properties.items():
            other |= terms(str(pname))
            if isinstance(spec, dict):
                other |= terms(str(spec.get("description", "")))
    return name_terms, other


def _fit(wanted: set[str], tool_terms: tuple[set[str], set[str]]) -> int:
    name_terms, other = tool_terms
    return 2 * len(wanted & name_terms) + len(wanted & other)


def score(ask: str, tool: dict) -> int:
    """How well a tool fits an ask: 2 per shared name word, 1 per shared description word."""
    return _fit(ask_terms(ask), _tool_terms(tool))


def ordinary_tools(tools: list[dict]) -> list[dict]:
    return [t for t in tools if tool_name(t) not in META_TOOLS]


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def plan_tool_groups(request: str, tools: list[dict],
                     sampler: Sampler | None = None, bias: dict | None = None) -> list[list[str]]:
    """Tool names per step: tools in one group are independent and called in parallel. An ask
    some tool scores above 0 for gets the best (or, sampling, a drawn) tool. `bias` adds to a
    tool's score in the sampled choice only (the few-shot rut: course/llm/rut.py)."""
    tools = ordinary_tools(tools)
    groups: list[list[str]] = []
    if not tools:
        return groups
    # Each tool's terms once per request, each ask's once: not once per ask and tool.
    offered = [(_tool_terms(tool), -i, tool_name(tool)) for i, tool in enumerate(tools)]
    for step in SEQUENTIAL_SPLIT.split(request):
        group: list[str] = []
        for ask in PARALLEL_SPLIT.split(step):
            if not ask.strip():
                continue
            wanted = ask_terms(ask)
            scored = [(_fit(wanted, tool_terms), order, name) for tool_terms, order, name in offered]
            best = max(scored, default=(0, 0, None))
            if best[0] <= 0:
                continue  # no tool fits this ask, at any temperature
            if sampler is not None:
                best = scored[sampler.choose(f"which tool fits the ask \"{_short(ask)}\"",
                                             [(name, fit + (bias or {}).get(name, 0))
                                              for fit, _, name in scored])]
            if best[2] not in group and not any(best[2] in g for g in groups):
                group.append(best[2])
        if group:
            groups.append(group)
    return groups


def best_tool(request: str, tools: list[dict], sampler: Sampler | None = None) -> dict:
    """The offered tool that fits the request best (ties: the first offered); sampling, one
    drawn by its score."""
    candidates = ordinary_tools(tools) or tools
    wanted = ask_terms(request)
    scored = [(tool_name(t), _fit(wanted, _tool_terms(t))) for t in candidates]
    return candidates[choose(sampler, "which tool fits the request best", scored)]


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


def _argument(pname: str, spec: dict, request: str, ask: str, sampler: Sampler | None = None):
    kind = spec.get("type", "string")
    lname = pname.lower()
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        # 5 if the request names the value, +2 for the first: the best is the first named value,
        # else the first value
        low = request.lower()
        scored = [(str(value), 5 * (str(value).lower() in low) + 2 * (i == 0))
                  for i, value in enumerate(enum)]
        return enum[choose(sampler, f"which value fills {pname}", scored)]
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
        # ("Timezone name, e.g. America/Vancouver" -> "America/Vancouver"): 2 to the entity's 1.
        forms = [(example, 2) for example in EXAMPLE.findall(str(spec.get("description", "")))
                 if entity.lower() in example.lower()] + [(entity, 1)]
        return forms[choose(sampler, f"which form of {entity!r} fills {pname}", forms)][0]
    return quoted.group(1) if quoted else None


def _properties(tool: dict) -> tuple[dict, set]:
    params = tool["function"].get("parameters") or {}
    properties = params.get("properties") if isinstance(params, dict) else None
    required = params.get("required") if isinstance(params, dict) else None
    return (properties if isinstance(properties, dict) else {},
            set(r for r in required if isinstance(r, str)) if isinstance(required, list) else set())


KINDS = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list,
         "object": dict}


def _fits(value, spec: dict) -> bool:
    """Whether `value` is valid for the schema's enum and type (bool is not a number here)."""
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        return value in enum
    kind = KINDS.get(spec.get("type", "string"))
    if kind is None:
        return True
    if isinstance(value, bool) and spec.get("type") != "boolean":
        return False
    return isinstance(value, kind)


def _fallback(spec: dict, ask: str):
    """A required parameter's value when the request gives none: the ask's text, as its type."""
    text = ask.strip(" ?.!。？")
    kind = spec.get("type", "string")
    if kind == "array":
        items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
        return [text] if _fits(text, items) else []
    return {"string": text, "integer": 0, "number": 0, "boolean": False, "object": {}}.get(kind, text)


def fill_arguments(tool: dict, request: str, ask: str | None = None,
                   sampler: Sampler | None = None) -> dict:
    """Arguments for `tool` read from the request, each valid for its schema's type and enum.

    An optional parameter the request gives no valid value for is left out (never filled with
    a guess such as the tool's own name); a required one falls back to the ask's text, typed.
    With a sampler, an enum's value and a name's form are drawn (sampling.py).
    """
    ask = request if ask is None else ask
    properties, required = _properties(tool)
    own_name = tool["function"].get("name")
    args = {}
    for pname, spec in properties.items():
        spec = spec if isinstance(spec, dict) else {}
        value = _argument(str(pname), spec, request, ask, sampler)
        if value is not None and (not _fits(value, spec) or value == own_name):
            value = None
        if value is None and pname in required:
            value = _fallback(spec, ask)
        if value is not None:
            args[pname] = value
    return args


def typed_arguments(tool: dict | None, raw: dict[str, str]) -> dict:
    """`key=value` strings (from an instruction or a skill step) typed by the tool's schema."""
    properties = _properties(tool)[0] if tool else {}
    args = {}
    for key, value in raw.items():
        kind = (properties.get(key) or {}).get("type") if isinstance(properties.get(key), dict) else None
        if kind in ("integer", "number") and NUMBER.fullmatch(value):
            args[key] = int(float(value)) if kind == "integer" else float(value)
        elif kind == "boolean" and value.lower() in ("true", "false"):
            args[key] = value.lower() == "true"
        else:
            args[key] = value
    return args


KEY_VALUE = re.compile(r"\b([A-Za-z_][\w-]*)\s*=\s*(\"[^\"]*\"|'[^']*'|`[^`]*`|[^\s,;)]+)")


def key_values(text: str) -> dict[str, str]:
    """`key=value` pairs written in text, quotes removed, in order."""
    pairs = {}
    for key, value in KEY_VALUE.findall(text):
        if value[:1] in "\"'`" and value[-1:] == value[:1] and len(value) >= 2:
            value = value[1:-1]
        pairs[key] = value.rstrip(".")
    return pairs
