"""The course's own tools, served over MCP by `python -m course.mcp`.

    task world   chapter 12's service desk (course/givens/task_world.py): its nine tools, each
                 a tool of the server, on one database per server process
    notes        chapter 06's NoteTool, one tool `notes` with its seven actions, on a folder
    terminal     chapter 07's hardened terminal, one tool `terminal`: a command, run in a
                 workspace with every layer of defence on (read-only retrieval)

The task world is a given of the runtime. NoteTool and the hardened terminal are chapter 06's
and 07's answers: the runtime does not import answers (the layers, AUTHORING.md), so they are
looked up by the registry's solution module when the server starts, the way the lab harness
injects a solution. Where they are absent (a confined grading worker holds no answers) the server
serves the task world alone, and `--help` says which tools are missing and why.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from course.givens import task_world
from course.mcp.server import PromptSpec, ResourceSpec, ToolFailure, ToolSpec, build_server
from course.paths import DATA_DIR

NAME = "course"
INSTRUCTIONS = ("The course's tools: chapter 12's Kestrel Air service desk, chapter 07's read-only "
                "terminal and chapter 06's notes.")
TERMINAL_WORKSPACE = DATA_DIR / "sandbox_workspace"
READ_ONLY = {"readOnlyHint": True}


def task_world_tools(db: dict | None = None) -> list[ToolSpec]:
    """Chapter 12's desk tools on `db` (default: a fresh database), changed in place."""
    db = task_world.fresh_db() if db is None else db

    def handler(name):
        def run(arguments: dict):
            text, error = task_world.execute(db, name, arguments)
            if error:
                raise ToolFailure(text)
            return text
        return run

    return [ToolSpec(t["function"]["name"], t["function"]["description"],
                     t["function"]["parameters"], handler(t["function"]["name"]),
                     annotations=None if t["function"]["name"] in task_world.MUTATING else READ_ONLY)
            for t in task_world.TOOLS]


def _answer(chapter: str):
    """An earlier chapter's solution module, by the registry's name; None when not installed."""
    from course.chapters import CHAPTERS

    name = next(c.solution_module for c in CHAPTERS if c.number == chapter)
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def notes_tool(folder) -> ToolSpec | None:
    """Chapter 06's NoteTool on `folder` as one MCP tool, or None without chapter 06's answer."""
    notes = _answer("06")
    if notes is None:
        return None
    tool = notes.NoteTool(Path(folder))

    def run(arguments: dict):
        reply = tool.run(arguments)
        if not reply.get("ok", True):
            raise ToolFailure(reply.get("error", "the notes action failed"))
        return reply

    fn = notes.TOOL_SPEC["function"]
    return ToolSpec(fn["name"], fn["description"], fn["parameters"], run)


TERMINAL_SCHEMA = {"type": "object", "properties": {"command": {
    "type": "string", "description": "One command line, e.g. grep -rn TODO src (no shell: no "
                                     "pipes, redirections or substitutions)"}},
                   "required": ["command"]}


def terminal_tool(workspace=TERMINAL_WORKSPACE) -> ToolSpec | None:
    """Chapter 07's hardened terminal in `workspace` as one MCP tool, or None without
    chapter 07's answer."""
    sandbox = _answer("07")
    if sandbox is None:
        return None
    terminal = sandbox.HardenedTerminalTool(Path(workspace))
    return ToolSpec("terminal", "Run one read-only retrieval command (ls, cat, grep, find, head, "
                                "tail, wc, sort, awk, sed) in the project's workspace and read its "
                                "output.", TERMINAL_SCHEMA,
                    lambda arguments: terminal.run(arguments.get("command", "")),
                    annotations=READ_ONLY)


def course_tools(notes_folder=None, workspace=TERMINAL_WORKSPACE) -> tuple[list[ToolSpec], list[str]]:
    """(the tools served, a sentence per tool left out). Notes are served only with a folder."""
    tools, missing = task_world_tools(), []
    note = notes_tool(notes_folder) if notes_folder is not None else None
    tools += [note] if note else []
    if note is None:
        missing.append("notes: no folder given" if notes_folder is None
                       else "notes: chapter 06's answer (solutions.notes) is not installed")
    terminal = terminal_tool(workspace)
    tools += [terminal] if terminal else []
    missing += [] if terminal else ["terminal: chapter 07's answer (solutions.sandbox) is not installed"]
    return tools, missing


# MCP's other primitives. A resource is read by the application, not chosen by the model: it
# costs no schema in any request and enters the context only when the client attaches it. A
# prompt is a template the user picks (a slash command), filled by the server.
RESOURCES = [
    ResourceSpec("course://desk/rules", "desk rules",
                 "The service desk's procedures and business rules (chapter 12's system prompt).",
                 lambda: task_world.system_prompt(task_world.BASELINE), "text/markdown"),
    ResourceSpec("course://desk/bookings", "bookings",
                 "Every booking reference with its holder and day, one per line.",
                 lambda: "\n".join(f"{ref} {b['holder']} {b['day']}"
                                   for ref, b in task_world.fresh_db()["bookings"].items())),
]
PROMPTS = [
    PromptSpec("move_trip", "Ask the desk to move a trip to another day.",
               ["booking_ref", "pin", "new_day"],
               lambda a: (f"Please move trip {a.get('booking_ref')} to {a.get('new_day')}. "
                          f"My PIN is {a.get('pin')}.")),
]


def course_server(notes_folder=None, workspace=TERMINAL_WORKSPACE):
    """The course's server object (served in-process), as `python -m course.mcp` serves it;
    without `notes_folder`, no notes tool (a folder outlives the object: the caller owns it)."""
    tools, _ = course_tools(notes_folder, workspace)
    return build_server(NAME, tools, resources=RESOURCES, prompts=PROMPTS, instructions=INSTRUCTIONS)
