"""Three ways to give an agent the tools of four MCP servers, measured on the same tasks:

    all schemas      every tool's full definition in every request (how most clients connect)
    on demand        `tools/list` once, a one-line catalogue in the system prompt, and chapter
                     09's tool_search: a chosen tool's schema is appended when found
    code execution   the catalogue, and one tool, `run_program`: a short program calls the MCP
                     tools inside chapter 07's sandbox and prints only what it needs

Each run is chapter 09's session runner (`run_session`) on a private teaching model, so the
figures are its usage (prompt and cached tokens), its number of requests and its answer; a task
succeeds when the answer holds the fact the task asks for, computed from the servers' own
records. Seconds are wall-clock time on this machine (printed, never asserted).

The teaching model cannot write a program (it is rule-based, not an LLM). In code execution the
program is the task's own, written by the course as a capable model would write it, and sent as
the model's reply to the first request: the first request and the answer are the teaching
model's, the program is not, and each row says so (`program_by`).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from course.llm import MODEL_NAME, serve
from course.mcp import connect
from course.tokenizer import count_tokens
from lesson_support.mcp.code_execution import run_program
from lesson_support.mcp.generated import SHAPES, generated_server, record
from lesson_support.skills.harness import TOOL_SEARCH_TOOL
from lesson_support.skills.sessions import run_session
from lesson_support.skills.tool_search import search_tools
from solutions.mcp import McpToolbox, build_catalogue, load_on_demand

STRATEGIES = ("all schemas", "on demand", "code execution")
CHANGING = ("create_", "update_", "delete_", "post_")   # tools that change data
SYSTEM = ("You are an engineering assistant connected to MCP servers: a code host, an issue "
          "tracker, team chat and a browser. Answer briefly, from tool results only.")
CATALOGUE_NOTE = ("These tools exist on the connected servers. Their definitions are not loaded: "
                  "find one with tool_search, and it becomes callable from the next request on.")
CODE_NOTE = ("These tools exist on the connected servers. Call them from a Python program with "
             "run_program: `from lesson_support.mcp.code_api import call`, then "
             "`call(server, tool, **arguments)` returns the result; print only what the answer "
             "needs. The program runs in a sandbox without network.")
RUN_PROGRAM_TOOL = {"type": "function", "function": {
    "name": "run_program", "description": "Run a short Python program in the sandbox; returns "
                                          "what it printed.",
    "parameters": {"type": "object", "properties": {"code": {"type": "string",
                                                             "description": "Python source"}},
                   "required": ["code"]}}}


@dataclass(frozen=True)
class Task:
    request: str      # what the user asks
    server: str       # where the fact is
    kind: str         # the record's kind ("issue")
    container: str
    number: int
    field: str        # the fact asked for
    program: str      # what code execution runs (written by the course)

    def value(self, number: int) -> str:
        return str(record(self.server, self.kind, self.container, number)[self.field])

    def expected(self) -> str:
        return self.value(self.number)

    def judge(self, answer: str, called: list[str]) -> bool:
        """Success: the answer gives the asked record's value, no other record's value of that
        field (a page of 30 records pasted whole is not an answer), and no tool that changes
        data was called to get it."""
        others = {self.value(n) for n in range(1, 121)} - {self.expected()}
        return (self.expected() in answer and not any(v in answer for v in others)
                and not any(name.split("__")[-1].startswith(CHANGING) for name in called))


def _program(server, tool, key, container, number, field, listing=False) -> str:
    if listing:
        return (f"from lesson_support.mcp.code_api import call\n"
                f"page = call({server!r}, {tool!r}, {key}={container!r})\n"
                f"item = next(i for i in page['items'] if i['number'] == {number})\n"
                f"print({field!r} + ':', item[{field!r}])\n")
    return (f"from lesson_support.mcp.code_api import call\n"
            f"found = call({server!r}, {tool!r}, {key}={container!r}, number={number})\n"
            f"print({field!r} + ':', found[{field!r}])\n")


def _task(request, server, kind, container, number, field, listing=False) -> Task:
    key = SHAPES[server].key
    tool = f"{'list' if listing else 'get'}_{kind}"
    return Task(request, server, kind, container, number, field,
                _program(server, tool, key, container, number, field, listing))


TASKS = (
    _task('Get the details of issue 17 in repo "atlas": what is its title?',
          "code_host", "issue", "atlas", 17, "title"),
    _task('Get the details of pull request 8 in repo "beacon": what is its title?',
          "code_host", "pull_request", "beacon", 8, "title"),
    _task('Get the details of ticket 42 in project "OPS": what is its title?',
          "tracker", "ticket", "OPS", 42, "title"),
    _task('Get the details of sprint 3 in project "WEB": what is its title?',
          "tracker", "sprint", "WEB", 3, "title"),
    _task('Get the details of message 5 in channel "releases": what is its title?',
          "chat", "message", "releases", 5, "title"),
    _task('List the issues of repo "cobalt": what is the title of issue 29?',
          "code_host", "issue", "cobalt", 29, "title", listing=True),
)


@dataclass
class McpRun:
    """Runs a session's calls: tool_search over the servers' listings for real (appending what
    it finds, chapter 09's add_tools through load_on_demand), run_program in the sandbox, and
    every other tool on its MCP server."""
    toolbox: McpToolbox
    tools: list | None = None

    def __call__(self, name: str, args: dict) -> str:
        if name == "tool_search":
            everything = self.toolbox.tools()
            found = [tool["function"]["name"] for _, tool in
                     search_tools(str(args.get("query", "")), everything)]
            self.tools = load_on_demand(found, self.toolbox.listings, self.tools or [])
            return json.dumps({"tools": found, "note": "callable from the next request on"})
        if name == "run_program":
            return run_program(str(args.get("code", ""))).output
        return self.toolbox.execute(name, args)


def servers() -> dict:
    """The four generated servers, connected in-process: {shape: connection}."""
    return {shape: connect(generated_server(shape)) for shape in SHAPES}


def _row(strategy: str, task: Task, steps, seconds: float, extra_completion: int = 0,
         called: list[str] | None = None) -> dict:
    answer = steps[-1].answer or ""
    if called is None:
        called = [name for step in steps for name, _ in step.calls]
    return {"strategy": strategy, "task": task.request, "requests": len(steps), "called": called,
            "prompt_tokens": sum(s.prompt_tokens for s in steps),
            "cached_tokens": sum(s.cached_tokens or 0 for s in steps),
            "largest_prompt": max(s.prompt_tokens for s in steps),
            "program_tokens": extra_completion, "success": task.judge(answer, called),
            "answer": answer, "seconds": round(seconds, 2),
            "program_by": "the course (the teaching model cannot write code)"
            if strategy == "code execution" else None}


def run_strategy(strategy: str, task: Task, toolbox: McpToolbox, client, model: str = MODEL_NAME) -> dict:
    """One task under one strategy, in a fresh conversation; a row of figures."""
    catalogue = build_catalogue(toolbox.listings)
    start = time.perf_counter()
    if strategy == "all schemas":
        messages = [{"role": "system", "content": SYSTEM}]
        steps = run_session(client, model, [task.request], messages, toolbox.tools(),
                            McpRun(toolbox))
        return _row(strategy, task, steps, time.perf_counter() - start)
    if strategy == "on demand":
        messages = [{"role": "system", "content": f"{SYSTEM}\n\n{CATALOGUE_NOTE}\n{catalogue}"}]
        steps = run_session(client, model, [task.request], messages, [TOOL_SEARCH_TOOL],
                            McpRun(toolbox, [TOOL_SEARCH_TOOL]))
        return _row(strategy, task, steps, time.perf_counter() - start)
    if strategy != "code execution":
        raise ValueError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    messages = [{"role": "system", "content": f"{SYSTEM}\n\n{CODE_NOTE}\n{catalogue}"}]
    first = run_session(client, model, [task.request], list(messages), [RUN_PROGRAM_TOOL],
                        McpRun(toolbox), max_calls=1)
    # the model's reply to the first request is replaced by the task's program (see above)
    call = {"id": "call_program", "type": "function", "function": {
        "name": "run_program", "arguments": json.dumps({"code": task.program})}}
    printed = run_program(task.program).output
    messages += [{"role": "user", "content": task.request},
                 {"role": "assistant", "content": None, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": call["id"], "content": printed}]
    rest = run_session(client, model, [], messages, [RUN_PROGRAM_TOOL], McpRun(toolbox))
    if not rest:  # answer the printed result: the session runner needs a request to send
        from lesson_support.skills.model_calls import ask, usage_of
        from lesson_support.skills.sessions import Step

        completion = ask(client, model, messages, [RUN_PROGRAM_TOOL])
        prompt, cached = usage_of(completion)
        rest = [Step(1, 1, prompt, cached, [], completion.choices[0].message.content, completion)]
    inside = f"{task.server}__{'list' if 'page' in task.program else 'get'}_{task.kind}"
    return _row(strategy, task, first[:1] + rest, time.perf_counter() - start,
                count_tokens(call["function"]["arguments"]), ["run_program", f"({inside})"])


def compare(tasks=TASKS, strategies=STRATEGIES) -> list[dict]:
    """Every task under every strategy, each on a private teaching model (an empty cache)."""
    conns = servers()
    try:
        toolbox = McpToolbox(conns)
        rows = []
        for strategy in strategies:
            for task in tasks:
                with serve() as model:
                    rows.append(run_strategy(strategy, task, toolbox, model.client()))
        return rows
    finally:
        for conn in conns.values():
            conn.close()


def totals(rows: list[dict]) -> list[dict]:
    """Per strategy: tasks, successes, requests, prompt tokens, largest prompt, seconds."""
    out = []
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        mine = [r for r in rows if r["strategy"] == strategy]
        out.append({"strategy": strategy, "tasks": len(mine),
                    "succeeded": sum(r["success"] for r in mine),
                    "requests": sum(r["requests"] for r in mine),
                    "prompt_tokens": sum(r["prompt_tokens"] for r in mine),
                    "largest_prompt": max(r["largest_prompt"] for r in mine),
                    "seconds": round(sum(r["seconds"] for r in mine), 1)})
    return out
