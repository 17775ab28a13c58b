"""What MCP tool schemas cost the context: counted, priced, and what a change does to the cache.

    listings(shapes)       tools/list of the generated servers, {shape: [MCP tools]}
    token_table(...)       servers x schema tokens x requests, billed uncached and cached
    measured_session(...)  the same tools sent to a private teaching model: its own usage
    mid_session(...)       a server adds or edits a tool mid-session: cached tokens before/after

The tools are the first block of every prompt (the teaching model's template, chapter 02), so
a session pays for them on every request: in full without a cache, at the cached price with
one, as long as they do not change. The table prices only what the tools add to each request
(chapter 05's calculator, solutions.costs), with OpenAI's reporting rule for the cached part
(1,024 tokens minimum, 128-token blocks: the teaching model's rule too, which
`measured_session` checks).
"""
from __future__ import annotations

import copy

from course.llm import MODEL_NAME, serve
from course.usage import read_usage
from lesson_support.mcp.generated import SHAPES, generate_tools
from solutions.costs import OPENAI_RULES, Request, price_requests, provider_presets
from solutions.mcp import as_openai_tool, schema_tokens

ORDER = tuple(SHAPES)                 # code_host, tracker, chat, browser
PRICES = ("OpenAI gpt-5.6-sol", "DeepSeek deepseek-flash (off-peak)")
REQUESTS = (1, 10, 100)
PROBE = [{"role": "user", "content": "Which of these tools can list open issues?"}]


def listings(shapes=ORDER) -> dict[str, list[dict]]:
    return {shape: generate_tools(shape) for shape in shapes}


def session_tools(listed: dict[str, list[dict]]) -> list[dict]:
    """Every listed tool as a Chat Completions tool, namespaced, server after server."""
    return [as_openai_tool(tool, server) for server, tools in listed.items() for tool in tools]


def _bill(tokens: int, requests: int, prices, cached: bool) -> float:
    """USD for the tools' share of `requests` requests: the first writes the cache, the rest
    read the cached part (whole 128-token blocks above 1,024) and write none."""
    hit = OPENAI_RULES.cached(tokens) if cached else 0
    billed = [Request(1, tokens, 0, 0, tokens if cached else 0)]
    billed += [Request(n, tokens, hit, 0, tokens - hit if cached else 0) for n in range(2, requests + 1)]
    return price_requests(billed, prices)


def token_table(requests=REQUESTS, prices=PRICES) -> list[dict]:
    """One row per (servers connected, requests): 1 to 4 servers in ORDER, each row with the
    tools, their tokens, and per price the USD uncached and cached."""
    presets = provider_presets()
    rows = []
    for k in range(1, len(ORDER) + 1):
        listed = listings(ORDER[:k])
        tools = session_tools(listed)
        tokens = schema_tokens(tools)["total"]
        for n in requests:
            row = {"servers": " + ".join(ORDER[:k]), "tools": len(tools), "schema_tokens": tokens,
                   "requests": n, "tokens_sent": tokens * n}
            for name in prices:
                row[f"{name}: uncached"] = _bill(tokens, n, presets[name], cached=False)
                row[f"{name}: cached"] = _bill(tokens, n, presets[name], cached=True)
            rows.append(row)
    return rows


def _send(server, tools, messages) -> dict:
    reply = server.client().chat.completions.create(model=MODEL_NAME, messages=messages, tools=tools)
    usage = read_usage(reply.usage)
    return {"prompt_tokens": usage.prompt, "cached_tokens": usage.cached}


def measured_session(requests: int = 3, shapes=ORDER) -> list[dict]:
    """The same request sent `requests` times with every tool of `shapes`, to a private
    teaching model: its reported prompt and cached tokens (the bill's inputs, measured)."""
    tools = session_tools(listings(shapes))
    with serve() as server:
        return [_send(server, tools, PROBE) for _ in range(requests)]


CHANGES = ("nothing", "a tool added at the end of the list", "a tool added to the first server",
           "a description edited in the first server", "servers connected in another order")


def _changed(listed: dict[str, list[dict]], change: str) -> dict[str, list[dict]]:
    listed = copy.deepcopy(listed)
    new = {"name": "archive_repository", "description": "Archive a repository: read-only from now on.",
           "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}},
                           "required": ["repo"]}}
    first, last = ORDER[0], ORDER[-1]
    if change == "a tool added at the end of the list":
        listed[last].append(dict(new, name="close_tab"))
    elif change == "a tool added to the first server":
        listed[first].append(new)
    elif change == "a description edited in the first server":
        listed[first][0]["description"] += " Now also returns archived repositories."
    elif change == "servers connected in another order":
        listed = dict(reversed(list(listed.items())))
    elif change != "nothing":
        raise ValueError(f"unknown change {change!r}: one of {', '.join(CHANGES)}")
    return listed


def mid_session(changes=CHANGES) -> list[dict]:
    """For each change: a private teaching model gets the session's tools once (cold), then
    the changed tools; the second request's cached tokens say how much of the prefix survived."""
    before = listings()
    rows = []
    for change in changes:
        with serve() as server:
            cold = _send(server, session_tools(before), PROBE)
            after = _send(server, session_tools(_changed(before, change)), PROBE)
        rows.append({"change": change, "prompt_tokens": after["prompt_tokens"],
                     "cached_tokens": after["cached_tokens"],
                     "cold_prompt_tokens": cold["prompt_tokens"],
                     "not_cached": after["prompt_tokens"] - after["cached_tokens"]})
    return rows
