"""Chapter 09 lesson support: the course's skills and tools, token accounting per layer, a
review of a skill's body, tool search over the catalogue, and the cache measurements.

The answers (parse_skill, build_catalog, load_skill, add_tools) are in `solutions.skills`;
what is here is what the lesson needs around them. Every measurement talks to a model through
an `openai` client the caller passes in, so the lesson can use a private teaching model with a
clean prompt cache, and send the same requests to a configured provider beside it. A provider's
model follows no documented rule: `try_session` runs its sessions without trusting its replies
(any tool, bad JSON, a refusal, an error status) and the formatters print what it did.

The package, one concern per module (this module re-exports what is used through it):

    catalogue           the skill folders, the tool catalogue, what a tool list costs in tokens
    layers              a skill's three layers in tokens (catalogue line, body, files)
    review              reviewing a skill like code, and vetting every skill folder
    tool_search         BM25 search over the tool catalogue
    harness             the agent's system prompt, its tools, ToolRun that runs their calls
    model_calls         ask (one request) and usage_of (its prompt and cached tokens)
    sessions            run_session, try_session: a conversation of requests and tool calls
    session_views       what a session did, printed; provider_demo
    scripted_work       earlier_work: the finished libpng build a measured session starts after
    cache_measurements  the three placements, tool-list changes, predicted_cached
    loading             preload or load on demand: tokens per request, skills and tools
    routing             the harness's own guess at the skill a request needs
"""
from __future__ import annotations

from lesson_support.skills.cache_measurements import (PLACEMENTS, REPLY_TOKENS, TOOL_CHANGES,
                                                      changed_tools, format_placements,
                                                      format_tool_changes, measure_placement,
                                                      measure_tool_change, placement_requests,
                                                      predicted_cached)
from lesson_support.skills.catalogue import (CATALOG_BUDGET, HOSTILE_DIR, SKILLS_DIR,
                                             course_skills, hostile_names, skill_files,
                                             skill_names, tool_catalogue, tool_stub, tools_by_name,
                                             tools_tokens)
from lesson_support.skills.harness import (CORE_TOOL_NAMES, LOAD_SKILL_TOOL, SYSTEM_PROMPT,
                                           TOOL_SEARCH_TOOL, ToolRun, core_tools, session_start,
                                           skill_result_text)
from lesson_support.skills.layers import format_layer_rows, layer_rows
from lesson_support.skills.loading import SESSION, preload_vs_progressive, tool_loading_rows
from lesson_support.skills.model_calls import usage_of
from lesson_support.skills.review import review_skill, vet_folder
from lesson_support.skills.routing import route_skills, routing_hint
from lesson_support.skills.scripted_work import earlier_work
from lesson_support.skills.session_views import (first_reply, format_session, hostile_view,
                                                 provider_demo, reply_lines)
from lesson_support.skills.sessions import run_session, try_session
from lesson_support.skills.tool_search import search_tools

__all__ = [
    "CATALOG_BUDGET", "CORE_TOOL_NAMES", "HOSTILE_DIR", "LOAD_SKILL_TOOL", "PLACEMENTS",
    "REPLY_TOKENS", "SESSION", "SKILLS_DIR", "SYSTEM_PROMPT", "TOOL_CHANGES", "TOOL_SEARCH_TOOL",
    "ToolRun", "changed_tools", "core_tools", "course_skills", "earlier_work", "first_reply",
    "format_layer_rows", "format_placements", "format_session", "format_tool_changes",
    "hostile_names", "hostile_view", "layer_rows", "measure_placement", "measure_tool_change",
    "placement_requests", "predicted_cached", "preload_vs_progressive", "provider_demo",
    "reply_lines", "review_skill", "route_skills", "routing_hint", "run_session", "search_tools",
    "session_start", "skill_files", "skill_names", "skill_result_text", "tool_catalogue",
    "tool_loading_rows", "tool_stub", "tools_by_name", "tools_tokens", "try_session", "usage_of",
    "vet_folder",
]
