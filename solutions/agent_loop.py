"""Chapter 01 — messages, roles and the agent loop (reference solution).

    run_agent(client, messages, tools, execute_tool, max_iterations)  the tool-calling loop
    validate_messages(messages)                                       problems, in plain words
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

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
    for call_number in range(1, max_iterations + 1):
        kwargs = {"tools": tools} if tools else {}
        reply = client.chat.completions.create(model=model, messages=history, **kwargs)
        message = reply.choices[0].message
        history.append(as_dict(message))
        if not message.tool_calls:
            return {"outcome": "answered", "text": message.content, "messages": history,
                    "api_calls": call_number}
        calls = message.tool_calls
        with ThreadPoolExecutor(max_workers=min(8, len(calls))) as pool:
            results = list(pool.map(lambda c: _tool_result(execute_tool, c.function.name,
                                                           c.function.arguments), calls))
        history += [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]
    return {"outcome": "max_iterations", "text": None, "messages": history,
            "api_calls": max_iterations}


def validate_messages(messages) -> list[str]:
    """Every problem a provider would reject the message list for, as readable sentences."""
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
        if role not in ROLES:
            problems.append(f"messages[{i}] has role {role!r}; the roles are {', '.join(ROLES)}")
            continue
        if role != "tool" and open_calls:
            for call_id, at in open_calls.items():
                problems.append(f"tool call {call_id!r} from messages[{at}] has no result before "
                                f"messages[{i}] (a {role} message)")
            open_calls.clear()
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in open_calls:
                del open_calls[call_id]
            elif call_id in seen_ids:
                problems.append(f"messages[{i}] is a result for tool call {call_id!r} that is out "
                                f"of order: its call was already closed by a later message or answered")
            else:
                problems.append(f"messages[{i}] is a tool result for {call_id!r}, but no earlier "
                                f"assistant message made that call (an orphan result)")
        elif role == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                call_id = call.get("id") if isinstance(call, dict) else None
                if not call_id:
                    problems.append(f"messages[{i}] has a tool call without an id")
                    continue
                if call_id in seen_ids:
                    problems.append(f"messages[{i}] reuses the tool call id {call_id!r}")
                seen_ids.add(call_id)
                open_calls[call_id] = i
        elif message.get("content") is None:
            problems.append(f"messages[{i}] ({role}) has no content")
    for call_id, at in open_calls.items():
        problems.append(f"tool call {call_id!r} from messages[{at}] has no result (the list ends "
                        f"before it is answered)")
    return problems


# The self-test (the lab's last exercise): answers, not code.
def self_test() -> dict:
    """The answers to lab 01's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "d", "q2": 2, "q3": "d", "q4": "b"}
