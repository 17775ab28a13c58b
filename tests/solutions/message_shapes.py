"""Hypothesis strategies for message lists of every shape: valid ones, near-valid ones (a valid
list with one field changed, deleted or one message moved), and arbitrary JSON.

Shared by the tests that require a function taking a transcript to give a verdict, never an
exception, whatever it is given (the differential validator test, the compaction tests).
"""
import json

from hypothesis import strategies as st

ROLES = ("system", "developer", "user", "assistant", "tool")

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**64),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
json_values = st.recursive(json_scalars,
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                           max_leaves=8)

ids = st.one_of(st.integers(0, 9).map(lambda n: f"call_{n}"),
                st.sampled_from(["", "tool.call-1", "toolu_01A", "é-ï", "0"]))
text_parts = st.lists(st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=8)),
                      min_size=1, max_size=2)
texts = st.one_of(st.text(max_size=12), text_parts)
arguments = st.one_of(st.dictionaries(st.sampled_from(["path", "q", "n"]), json_scalars,
                                      max_size=2).map(json.dumps),
                      st.sampled_from(['{"path": "a.c"', "not json", "", "{}"]))
tool_names = st.sampled_from(["read_file", "run.command", "search-files", "x"])

# The values a mutation writes into a field: wrong types, near misses, and other fields' values.
ODD_VALUES = [None, 5, 2.5, True, "", "user", "tool", "assistant", "call_0", [], {}, ["call_0"],
              {"a": 1}, [{"type": "text", "text": "x"}], [{"type": "text", "text": 5}],
              [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}],
              [{"type": "refusal", "refusal": "no"}], ["x"], [None],
              [{"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
              {"name": "f", "arguments": {"path": "a.c"}}]
odd_values = st.one_of(st.sampled_from(ODD_VALUES), json_values)
MESSAGE_KEYS = ["role", "content", "name", "tool_calls", "tool_call_id"]
CALL_KEYS = ["id", "type", "function"]
FUNCTION_KEYS = ["name", "arguments"]


@st.composite
def valid_lists(draw, max_segments=6):
    """A list the Chat Completions API accepts: instructions, user and assistant text, calls
    (parallel, results in any order, content null/missing/text), names, content parts."""
    messages = []
    for role in draw(st.lists(st.sampled_from(["system", "developer"]), max_size=2)):
        messages.append({"role": role, "content": draw(texts)})
    used: set = set()
    for _ in range(draw(st.integers(1 if not messages else 0, max_segments))):
        kind = draw(st.sampled_from(["user", "text", "calls", "calls"]))
        if kind == "user":
            message = {"role": "user", "content": draw(texts)}
        elif kind == "text":
            message = {"role": "assistant", "content": draw(texts)}
        else:
            fresh = draw(st.lists(ids.filter(lambda i: i not in used), min_size=1, max_size=4,
                                  unique=True))
            used.update(fresh)
            calls = [{"id": i, "type": "function",
                      "function": {"name": draw(tool_names), "arguments": draw(arguments)}}
                     for i in fresh]
            if draw(st.booleans()):
                for c in calls:
                    c.pop("type")  # the type may be left out
            message = {"role": "assistant", "tool_calls": calls}
            content = draw(st.one_of(st.just("absent"), st.none(), texts))
            if content != "absent":
                message["content"] = content
        if draw(st.integers(0, 5)) == 0:
            message["name"] = draw(st.text(max_size=6))
        messages.append(message)
        if kind == "calls":
            for i in draw(st.permutations(fresh)):
                messages.append({"role": "tool", "tool_call_id": i, "content": draw(texts)})
    return messages


def dicts_in(message, key: str) -> list:
    """The dicts in the list message[key] (calls, content parts), if message is a dict."""
    items = message.get(key) if isinstance(message, dict) else None
    return [x for x in items if isinstance(x, dict)] if isinstance(items, list) else []


@st.composite
def mutated(draw, messages):
    """`messages` with one thing changed: a field of a message, a call or a part set to an odd
    value or deleted, or one message replaced, deleted, repeated or moved."""
    messages = json.loads(json.dumps(messages))  # a deep copy
    i = draw(st.integers(0, len(messages) - 1))
    message = messages[i]
    action = draw(st.sampled_from(["set", "set", "delete", "call", "call", "part", "replace",
                                   "drop", "repeat", "swap"]))
    if action in ("set", "delete") and isinstance(message, dict):
        key = draw(st.sampled_from(MESSAGE_KEYS))
        if action == "set":
            message[key] = draw(odd_values)
        else:
            message.pop(key, None)
    elif action == "call" and dicts_in(message, "tool_calls"):
        call = draw(st.sampled_from(dicts_in(message, "tool_calls")))
        if draw(st.booleans()) or not isinstance(call.get("function"), dict):
            key = draw(st.sampled_from(CALL_KEYS))
            if draw(st.booleans()):
                call[key] = draw(odd_values)
            else:
                call.pop(key, None)
        else:
            call["function"][draw(st.sampled_from(FUNCTION_KEYS))] = draw(odd_values)
    elif action == "part" and dicts_in(message, "content"):
        part = draw(st.sampled_from(dicts_in(message, "content")))
        part[draw(st.sampled_from(["type", "text", "image_url"]))] = draw(odd_values)
    elif action == "replace":
        messages[i] = draw(odd_values)
    elif action == "drop":
        del messages[i]
    elif action == "repeat":
        messages.insert(i, json.loads(json.dumps(message)))
    elif action == "swap" and i + 1 < len(messages):
        messages[i], messages[i + 1] = messages[i + 1], messages[i]
    return messages


@st.composite
def near_valid_lists(draw):
    """A valid list changed one to three times."""
    messages = draw(valid_lists())
    for _ in range(draw(st.integers(1, 3))):
        if messages:
            messages = draw(mutated(messages))
    return messages


shaped_messages = st.fixed_dictionaries(
    {}, optional={"role": st.one_of(st.sampled_from(ROLES), json_values), "content": json_values,
                  "tool_calls": json_values, "tool_call_id": json_values, "name": json_values})

# Everything a transcript read from JSON might be, weighted towards what is almost right.
any_messages = st.one_of(valid_lists(), near_valid_lists(), near_valid_lists(),
                         st.lists(st.one_of(shaped_messages, json_values), max_size=4),
                         json_values)
