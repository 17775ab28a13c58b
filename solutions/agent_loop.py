"""Chapter 01 — messages, roles and the agent loop (reference solution).

    run_agent(client, messages, tools, execute_tool, max_iterations)  the tool-calling loop
    validate_messages(messages)                                       problems, in plain words
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from course import tracing

ROLES = ("system", "developer", "user", "assistant", "tool")


def as_dict(message) -> dict:
    """A message as a plain dict (the SDK returns objects; the history must be re-sendable)."""
    if isinstance(message, dict):
        return message
    return message.model_dump(exclude_none=True)


def _tool_result(execute_tool, name: str, arguments: str) -> str:
    """Run one tool call; a failure becomes an error result the model can read, not a crash."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError as exc:
        return json.dumps({"error": f"arguments are not valid JSON: {exc}"})
    try:
        result = execute_tool(name, args)
    except Exception as exc:  # the model should see the failure and may retry
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"})
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def run_agent(client, messages: list, tools: list, execute_tool, max_iterations: int = 10,
              model: str | None = None) -> dict:
    """Call the model, run the tools it asks for, send the results back; repeat until it answers.

    execute_tool(name, arguments_dict) returns the result (a string, or anything JSON-able).
    Independent calls of one turn run in parallel. Returns a dict:
        outcome   "answered", or "max_iterations" when the limit stopped the loop
        text      the final answer (None if the limit was hit)
        messages  the full history, the input messages first (the input list is not changed)
        api_calls how many requests were sent
    """
    if max_iterations < 1:
        raise ValueError("max_iterations must be at least 1")
    if model is None:
        from course.llm import model_name

        model = model_name()
    history = [as_dict(m) for m in messages]
    with tracing.agent_run("run_agent"):  # the run's requests and tool calls are its children
        for call_number in range(1, max_iterations + 1):
            kwargs = {"tools": tools} if tools else {}
            reply = client.chat.completions.create(model=model, messages=history, **kwargs)
            message = reply.choices[0].message
            history.append(as_dict(message))
            if not message.tool_calls:
                return {"outcome": "answered", "text": message.content, "messages": history,
                        "api_calls": call_number}
            calls, run = message.tool_calls, tracing.context()

            def execute(c):
                with tracing.tool_call(c.function.name, c.id, context=run):
                    return _tool_result(execute_tool, c.function.name, c.function.arguments)

            with ThreadPoolExecutor(max_workers=min(8, len(calls))) as pool:
                results = list(pool.map(execute, calls))
            history += [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]
    return {"outcome": "max_iterations", "text": None, "messages": history,
            "api_calls": max_iterations}


def _content_problems(message: dict, i: int, role: str) -> list[str]:
    """Content is a string or a list of text parts; only an assistant that makes calls may
    leave it out (a text-only model, like the teaching model, reads no image or audio parts)."""
    content = message.get("content")
    if content is None:
        if role == "assistant" and message.get("tool_calls") is not None:
            return []
        return [f"messages[{i}] ({role}) has no content"]
    if isinstance(content, str):
        return []
    if not isinstance(content, list):
        return [f"messages[{i}].content is a {type(content).__name__}; content is a string or a "
                f"list of text parts"]
    return [f"messages[{i}].content[{j}] is not a text part {{'type': 'text', 'text': '...'}}; "
            f"a text-only model reads no other kind of part"
            for j, part in enumerate(content)
            if not (isinstance(part, dict) and part.get("type") == "text"
                    and isinstance(part.get("text"), str))]


def _call_problems(calls, i: int) -> tuple[list[str], list[str]]:
    """(problems, ids) of an assistant message's tool_calls: a non-empty list of calls, each
    {"id": str, "type": "function", "function": {"name": str, "arguments": str}}."""
    if not isinstance(calls, list) or not calls:
        return [f"messages[{i}].tool_calls must be a non-empty list of calls (leave the key out "
                f"when there are none)"], []
    problems, ids = [], []
    for j, call in enumerate(calls):
        where = f"messages[{i}].tool_calls[{j}]"
        if not isinstance(call, dict):
            problems.append(f"{where} is a {type(call).__name__}, not a call (a dict)")
            continue
        if not isinstance(call.get("id"), str):
            problems.append(f"{where} has no id (a string the result will name)")
        else:
            ids.append(call["id"])
        if call.get("type", "function") != "function":
            problems.append(f"{where} has type {call.get('type')!r}; a tool call's type is 'function'")
        fn = call.get("function")
        if not isinstance(fn, dict):
            problems.append(f"{where} has no function (a dict with name and arguments)")
            continue
        for key in ("name", "arguments"):
            if not isinstance(fn.get(key), str):
                problems.append(f"{where}.function.{key} is a {type(fn.get(key)).__name__}, not a "
                                f"string (arguments are JSON text, not a dict)")
    return problems, ids


def validate_messages(messages) -> list[str]:
    """Every problem a provider would reject the message list for, as readable sentences.

    Any value may be passed (a transcript read from JSON can hold anything): a problem is
    always a sentence in the returned list, never an exception. [] means the list is valid.
    """
    if not isinstance(messages, list):
        return [f"messages must be a list, not {type(messages).__name__}"]
    if not messages:
        return ["messages is empty: a request needs at least one message"]
    problems = []
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message that made it
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            problems.append(f"messages[{i}] is a {type(message).__name__}, not a dict")
            continue
        role = message.get("role")
        if not isinstance(role, str) or role not in ROLES:
            shown = repr(role) if isinstance(role, str) else f"of type {type(role).__name__}"
            problems.append(f"messages[{i}] has role {shown}; the roles are {', '.join(ROLES)}")
            continue
        if "name" in message and not isinstance(message["name"], str):
            problems.append(f"messages[{i}].name is a {type(message['name']).__name__}, not a string")
        problems += _content_problems(message, i, role)
        if role != "assistant" and message.get("tool_calls") is not None:
            problems.append(f"messages[{i}] is a {role} message with tool_calls; only assistant "
                            f"messages make tool calls")
        if role != "tool" and open_calls:
            for call_id, at in open_calls.items():
                problems.append(f"tool call {call_id!r} from messages[{at}] has no result before "
                                f"messages[{i}] (a {role} message)")
            open_calls.clear()
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                problems.append(f"messages[{i}] is a tool result without a tool_call_id (a string "
                                f"naming the call it answers)")
            elif call_id in open_calls:
                del open_calls[call_id]
            elif call_id in seen_ids:
                problems.append(f"messages[{i}] is a result for tool call {call_id!r} that is out "
                                f"of order: its call was already closed by a later message or answered")
            else:
                problems.append(f"messages[{i}] is a tool result for {call_id!r}, but no earlier "
                                f"assistant message made that call (an orphan result)")
        elif role == "assistant" and message.get("tool_calls") is not None:
            call_problems, ids = _call_problems(message["tool_calls"], i)
            problems += call_problems
            for call_id in ids:
                if call_id in seen_ids:
                    problems.append(f"messages[{i}] reuses the tool call id {call_id!r}")
                seen_ids.add(call_id)
                open_calls[call_id] = i
    for call_id, at in open_calls.items():
        problems.append(f"tool call {call_id!r} from messages[{at}] has no result (the list ends "
                        f"before it is answered)")
    return problems


# The self-test (the lab's last exercise): answers, not code.
def self_test() -> dict:
    """The answers to lab 01's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "d", "q2": 2, "q3": "d", "q4": "b"}
