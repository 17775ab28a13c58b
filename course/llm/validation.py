"""Request validation, the way a real provider does it: reject with HTTP 400 and say why.

Every check raises `RequestError`, which the server turns into an OpenAI-style error body:
`{"error": {"message": ..., "type": "invalid_request_error", "param": ..., "code": ...}}`.
The `openai` SDK raises `openai.BadRequestError` carrying that message.
"""
from __future__ import annotations

import re

ROLES = ("system", "developer", "user", "assistant", "tool")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class RequestError(Exception):
    def __init__(self, message: str, param: str | None = None, code: str | None = None,
                 status: int = 400, error_type: str = "invalid_request_error"):
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = status
        self.error_type = error_type

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.error_type,
                          "param": self.param, "code": self.code}}


def _type_name(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
            float: "number", type(None): "null"}.get(type(value), type(value).__name__)


def expect_type(value, kinds: tuple, param: str, what: str) -> None:
    """HTTP 400 naming `param` unless `value` is one of `kinds` (a JSON type: bool is not an int)."""
    # bool is an int in Python, but not in JSON
    if isinstance(value, bool) and bool not in kinds:
        ok = False
    else:
        ok = isinstance(value, kinds)
    if not ok:
        raise RequestError(f"Invalid type for '{param}': expected {what}, but got "
                           f"{_type_name(value)} instead.", param, "invalid_type")


def _validate_content(message: dict, i: int, allow_null: bool) -> None:
    param = f"messages[{i}].content"
    if "content" not in message or message["content"] is None:
        if allow_null:
            return
        raise RequestError(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")
    content = message["content"]
    if isinstance(content, str):
        return
    expect_type(content, (list,), param, "a string or an array of content parts")
    for j, part in enumerate(content):
        expect_type(part, (dict,), f"{param}[{j}]", "an object")
        if part.get("type") != "text":
            raise RequestError(f"Invalid value for '{param}[{j}].type': the teaching model reads "
                               f"only 'text' parts, got {part.get('type')!r}.", f"{param}[{j}].type",
                               "invalid_value")
        expect_type(part.get("text"), (str,), f"{param}[{j}].text", "a string")


def _validate_tool_calls(calls, i: int) -> list[str]:
    param = f"messages[{i}].tool_calls"
    expect_type(calls, (list,), param, "an array")
    if not calls:
        raise RequestError(f"Invalid '{param}': empty array. Expected an array with minimum "
                           f"length 1, but got an empty array instead.", param, "empty_array")
    ids = []
    for j, call in enumerate(calls):
        p = f"{param}[{j}]"
        expect_type(call, (dict,), p, "an object")
        expect_type(call.get("id"), (str,), f"{p}.id", "a string")
        if call.get("type", "function") != "function":
            raise RequestError(f"Invalid value for '{p}.type': expected 'function'.", f"{p}.type",
                               "invalid_value")
        fn = call.get("function")
        expect_type(fn, (dict,), f"{p}.function", "an object")
        expect_type(fn.get("name"), (str,), f"{p}.function.name", "a string")
        expect_type(fn.get("arguments"), (str,), f"{p}.function.arguments", "a string")
        if call["id"] in ids:
            raise RequestError(f"Duplicate tool call id '{call['id']}' in '{param}': every tool "
                               f"call needs its own id.", f"{p}.id", "duplicate_tool_call_id")
        ids.append(call["id"])
    return ids


def _validate_messages(messages) -> None:
    if messages is None:
        raise RequestError("Missing required parameter: 'messages'.", "messages",
                           "missing_required_parameter")
    expect_type(messages, (list,), "messages", "an array")
    if not messages:
        raise RequestError("Invalid 'messages': empty array. Expected an array with minimum "
                           "length 1, but got an empty array instead.", "messages", "empty_array")
    seen_ids: set[str] = set()
    pending: list[str] = []  # ids of the last assistant's calls that have no result yet
    pending_from = -1
    for i, message in enumerate(messages):
        expect_type(message, (dict,), f"messages[{i}]", "an object")
        role = message.get("role")
        if role is None:
            raise RequestError(f"Missing required parameter: 'messages[{i}].role'.",
                               f"messages[{i}].role", "missing_required_parameter")
        if role not in ROLES:
            raise RequestError(f"Invalid value: {role!r}. Supported values are: 'system', "
                               f"'developer', 'user', 'assistant', and 'tool'.",
                               f"messages[{i}].role", "invalid_value")
        if "name" in message:
            expect_type(message["name"], (str,), f"messages[{i}].name", "a string")
        if role != "assistant" and message.get("tool_calls") is not None:
            # the model code reads tool_calls only from assistants: anywhere else it is refused,
            # as OpenAI refuses a property a message of that role does not have
            raise RequestError(f"Invalid parameter: 'messages[{i}].tool_calls': only messages "
                               f"with role 'assistant' can have tool calls, this one has role "
                               f"{role!r}.", f"messages[{i}].tool_calls", "invalid_value")
        if role != "tool" and pending:
            raise RequestError(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(pending)} (the calls are in "
                f"messages[{pending_from}]; messages[{i}] is a {role} message).",
                f"messages[{i}].role", "missing_tool_response")
        if role == "tool":
            expect_type(message.get("tool_call_id"), (str,), f"messages[{i}].tool_call_id", "a string")
            _validate_content(message, i, allow_null=False)
            call_id = message["tool_call_id"]
            if call_id not in pending:
                raise RequestError(
                    f"Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceding message with 'tool_calls'. messages[{i}] answers "
                    f"tool_call_id {call_id!r}, "
                    + ("which was already answered." if call_id in seen_ids
                       else "which no earlier assistant message called."),
                    f"messages[{i}].tool_call_id", "orphan_tool_message")
            pending.remove(call_id)
        elif role == "assistant" and message.get("tool_calls") is not None:
            _validate_content(message, i, allow_null=True)
            ids = _validate_tool_calls(message["tool_calls"], i)
            for call_id in ids:
                if call_id in seen_ids:
                    raise RequestError(
                        f"Duplicate tool call id {call_id!r} in messages[{i}]: it was already "
                        f"used by an earlier call. Tool call ids must be unique in a "
                        f"conversation.", f"messages[{i}].tool_calls", "duplicate_tool_call_id")
            seen_ids.update(ids)
            pending, pending_from = list(ids), i
        else:  # content may be left out only when there are tool calls (OpenAI's rule)
            _validate_content(message, i, allow_null=False)
    if pending:
        raise RequestError(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(pending)} (the calls are in "
            f"messages[{pending_from}]).", f"messages[{pending_from}].tool_calls",
            "missing_tool_response")


def _validate_tools(tools) -> list[str]:
    if tools is None:
        return []
    expect_type(tools, (list,), "tools", "an array")
    names = []
    for j, tool in enumerate(tools):
        p = f"tools[{j}]"
        expect_type(tool, (dict,), p, "an object")
        if tool.get("type") != "function":
            raise RequestError(f"Invalid value for '{p}.type': expected 'function'.", f"{p}.type",
                               "invalid_value")
        fn = tool.get("function")
        expect_type(fn, (dict,), f"{p}.function", "an object")
        name = fn.get("name")
        expect_type(name, (str,), f"{p}.function.name", "a string")
        if not TOOL_NAME.match(name):
            raise RequestError(f"Invalid '{p}.function.name': string does not match pattern. "
                               f"Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' "
                               f"(1 to 64 characters).", f"{p}.function.name", "invalid_value")
        if "description" in fn:
            expect_type(fn["description"], (str,), f"{p}.function.description", "a string")
        if "parameters" in fn:
            expect_type(fn["parameters"], (dict,), f"{p}.function.parameters", "an object")
        if name in names:
            raise RequestError(f"Duplicate tool name {name!r} in 'tools'.", f"{p}.function.name",
                               "duplicate_tool_name")
        names.append(name)
    return names


def _validate_tool_choice(choice, names: list[str]) -> None:
    if choice is None:
        return
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise RequestError(f"Invalid value for 'tool_choice': {choice!r}. Supported values "
                               f"are 'none', 'auto', 'required' or a named function.",
                               "tool_choice", "invalid_value")
        if choice == "required" and not names:
            raise RequestError("'tool_choice' is 'required' but no 'tools' were given.",
                               "tool_choice", "invalid_value")
        return
    expect_type(choice, (dict,), "tool_choice", "a string or an object")
    name = (choice.get("function") or {}).get("name") if isinstance(choice.get("function"), dict) else None
    if choice.get("type") != "function" or not isinstance(name, str):
        raise RequestError("Invalid 'tool_choice': expected {'type': 'function', 'function': "
                           "{'name': ...}}.", "tool_choice", "invalid_value")
    if name not in names:
        raise RequestError(f"Invalid 'tool_choice': the function {name!r} is not among the "
                           f"request's tools.", "tool_choice", "invalid_value")


SEED_MIN, SEED_MAX = -(2 ** 63), 2 ** 63 - 1  # a signed 64-bit integer, as OpenAI takes it


def _shown(value) -> str:
    text = repr(value) if isinstance(value, float) else str(value)
    return text if len(text) <= 40 else text[:20] + "..." + text[-10:]


def _validate_sampling(body: dict) -> None:
    """temperature in [0, 2], top_p in [0, 1], seed a 64-bit integer: OpenAI's limits and
    wording (course/llm/sampling.py says what the teaching model does with them)."""
    for key, low, high in (("temperature", 0, 2), ("top_p", 0, 1)):
        value = body.get(key)
        if value is None:
            continue
        expect_type(value, (int, float), key, "a number")
        if value != value:  # NaN (Python's json reads it)
            raise RequestError(f"Invalid '{key}': expected a number between {low} and {high}, "
                               f"but got NaN instead.", key, "invalid_value")
        for bad, side, limit, code in ((value > high, "above maximum", f"<= {high}",
                                        "decimal_above_max_value"),
                                       (value < low, "below minimum", f">= {low}",
                                        "decimal_below_min_value")):
            if bad:
                raise RequestError(f"Invalid '{key}': decimal {side} value. Expected a value "
                                   f"{limit}, but got {_shown(value)} instead.", key, code)
    seed = body.get("seed")
    if seed is not None:
        expect_type(seed, (int,), "seed", "an integer")
        if not SEED_MIN <= seed <= SEED_MAX:
            side, limit, code = (("above maximum", f"<= {SEED_MAX}", "integer_above_max_value")
                                 if seed > SEED_MAX else
                                 ("below minimum", f">= {SEED_MIN}", "integer_below_min_value"))
            raise RequestError(f"Invalid 'seed': integer {side} value. Expected a value {limit}, "
                               f"but got {_shown(seed)} instead.", "seed", code)


def validate_request(body) -> None:
    """Raise RequestError for the first problem in a chat-completions request body."""
    expect_type(body, (dict,), "body", "a JSON object")
    if "model" not in body:
        raise RequestError("you must provide a model parameter", "model", "missing_required_parameter")
    expect_type(body["model"], (str,), "model", "a string")
    _validate_messages(body.get("messages"))
    names = _validate_tools(body.get("tools"))
    _validate_tool_choice(body.get("tool_choice"), names)
    if body.get("parallel_tool_calls") is not None:
        expect_type(body["parallel_tool_calls"], (bool,), "parallel_tool_calls", "a boolean")
    if body.get("stream") is not None:
        expect_type(body["stream"], (bool,), "stream", "a boolean")
    if body.get("stream_options") is not None:
        expect_type(body["stream_options"], (dict,), "stream_options", "an object")
        if not body.get("stream"):
            raise RequestError("Invalid 'stream_options': only allowed when 'stream' is true.",
                               "stream_options", "invalid_value")
        if body["stream_options"].get("include_usage") is not None:
            expect_type(body["stream_options"]["include_usage"], (bool,),
                    "stream_options.include_usage", "a boolean")
    _validate_sampling(body)
    for key in ("max_tokens", "max_completion_tokens"):
        if body.get(key) is not None:
            expect_type(body[key], (int,), key, "an integer")
            if body[key] < 1:
                raise RequestError(f"Invalid '{key}': must be at least 1.", key, "invalid_value")
    if body.get("n") not in (None, 1):
        raise RequestError("The teaching model returns one choice: 'n' must be 1.", "n",
                           "unsupported_value")
