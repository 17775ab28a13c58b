"""The agent the lesson runs: its system prompt, its tools (the core tools, load_skill and
tool_search), and `ToolRun`, which runs their calls (the meta-tools for real, the others as
stand-ins with fixed results)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from course import tracing
from lesson_support.skills.catalogue import SKILLS_DIR, tool_catalogue, tools_by_name
from lesson_support.skills.tool_search import search_tools
from solutions.skills import Skill, SkillError, add_tools, load_skill, read_skill_file


def _string_argument_tool(name: str, description: str, argument: str, example: str) -> dict:
    """A tool schema with one required string argument (both meta-tools are of this form)."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {
            argument: {"type": "string", "description": example}},
            "required": [argument], "additionalProperties": False}}}


LOAD_SKILL_TOOL = _string_argument_tool(
    "load_skill",
    "Load the full instructions of one skill listed in <available_skills>, by its name. Call it "
    "before starting a task that a skill's description matches.",
    "name", "The skill's name, e.g. csv-report")

TOOL_SEARCH_TOOL = _string_argument_tool(
    "tool_search",
    "Search the catalogue of more tools by keywords when none of the offered tools fits the task. "
    "The matching tools become callable from the next request on.",
    "query", "Key terms of the task, e.g. csv chart")


SYSTEM_PROMPT = """You are a software agent working in a sandboxed workspace for one user.

How you work:
- Read before you write: open a file with read_file before you edit it, and never guess at the
  contents of a file you have not read in this session.
- Prefer the dedicated tool for a job over run_command; use run_command only when no other tool
  fits, and never for anything that sends data off the machine.
- Call independent tools in parallel; call dependent tools one after another.
- When a tool fails, read its error, fix the cause, and retry once; if it fails again, stop and
  report what you tried.
- Keep answers short: the result first, then the evidence (paths, commands, figures), then any
  open question. Quote error messages verbatim.
- Never print secrets (keys, tokens, passwords) even when a file you read contains them.
- Ask before any action that deletes data, spends money, or contacts a person.

Skills:
- Installed skills are listed in an <available_skills> block, one line each: its name and a
  description that says when to use it. When a request matches a description, call load_skill
  with the skill's name before you start, then follow the skill's numbered steps in order.
- A skill's sub-documents and scripts are read with read_skill_file and run with
  run_skill_script only when a step asks for them.

Workspace facts:
- The workspace root is /workspace; builds go in /workspace/build; the user's papers and data
  files are in /workspace/inbox.
- The project uses git; the default branch is main and releases are tagged vMAJOR.MINOR.PATCH.
- CI runs on every push; a failed job's identifier looks like job-4711.
"""

CORE_TOOL_NAMES = ("read_file", "write_file", "list_directory", "search_files", "run_command",
                   "read_skill_file", "run_skill_script")


def core_tools(catalogue: list[dict] | None = None) -> list[dict]:
    return tools_by_name(CORE_TOOL_NAMES, catalogue) + [LOAD_SKILL_TOOL]


def skill_result_text(skill: Skill) -> str:
    """What load_skill returns: the SKILL.md, front matter and body (a tool result)."""
    return f"---\nname: {skill.name}\ndescription: {skill.description}\n---\n{skill.body}"


# The tools whose results are a skill (its body, one of its files): the trace counts them as skills.
SKILL_TOOLS = ("load_skill", "read_skill_file")
STAND_IN_RESULTS = {
    "fetch_ci_log": {"log_id": "log-4711", "lines": 1832, "job": "job-4711", "status": "failed"},
    "search_log": {"first_error": "test_png_read.c:88: error: implicit declaration of function 'png_get_io_ptr'", "line": 1204},
    "git_log": {"commits": 3, "newest": "9f3c2ab switch to libpng 1.6.44 headers"},
    "git_tags": {"latest": "v1.6.0", "date": "2026-10-01"},
    "list_pull_requests": {"merged": 14},
    "read_pdf": {"pages": 14, "figures": 6, "title": "Attention on a budget"},
    "render_slides": {"path": "/workspace/out/deck.pptx", "slides": 12},
    "run_skill_script": {"output": "12 slides, all titled, longest 61 words"},
    "describe_csv": {"rows": 1200, "columns": "date, region, amount"},
    "query_csv": {"total": 48210.5, "regions": 4},
    "plot_chart": {"path": "/workspace/inbox/export.png"},
    "get_weather": {"location": "Vancouver", "temperature": 9, "conditions": "light rain", "humidity": 81},
    "get_current_time": {"timezone": "Asia/Tokyo", "datetime": "2026-11-20T18:05:00+09:00", "day_of_week": "Friday"},
    "write_file": {"written": True},
    "list_directory": {"entries": ["CMakeLists.txt", "src", "tests", "inbox"]},
}


@dataclass
class ToolRun:
    """Runs the calls of a session: the meta-tools for real, every other tool as a stand-in."""
    folder: Path = SKILLS_DIR
    catalogue: list[dict] | None = None
    tools: list[dict] | None = None   # tool_search appends what it finds here (add_tools)

    def __call__(self, name: str, args: dict) -> str:
        try:
            if name == "load_skill":
                return skill_result_text(load_skill(self.folder, args.get("name")))
            if name == "read_skill_file":
                return read_skill_file(self.folder, args.get("skill"), args.get("file"))
            if name == "tool_search":
                found = [tool for _, tool in search_tools(str(args.get("query", "")),
                                                          self.catalogue or tool_catalogue())]
                self.tools = add_tools(self.tools or [], found)
                return json.dumps({"tools": [{"name": t["function"]["name"],
                                              "description": t["function"]["description"]}
                                             for t in found],
                                   "note": "these tools are callable from the next request on"})
        except SkillError as exc:
            return json.dumps({"error": str(exc)})
        return json.dumps(STAND_IN_RESULTS.get(name, {"ok": True}))


def session_start(catalog_text: str) -> list[dict]:
    """The two messages a session starts from: the system prompt, then the catalogue."""
    return [{"role": "system", "content": SYSTEM_PROMPT},
            tracing.tag("skills", {"role": "user", "content": catalog_text})]
