"""The one list of the course's chapters. Everything else follows from it.

The README's chapter table and notebook 00's chapter map are generated from `CHAPTERS`
(`python -m course.chapters --write-readme` rewrites the table; a test fails when the README
and this list disagree), and the structure tests check every chapter's files against it.
Adding a chapter: see AUTHORING.md.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass

from course.paths import LABS_DIR, LESSONS_DIR, REPO_ROOT


@dataclass(frozen=True)
class Chapter:
    number: str             # two digits, "01"
    slug: str               # file-name part, "agent_loop"
    title: str
    summary: str            # one line for notebook 00's map
    outcome: str            # what a student can do after it (the README's last column)
    solution_module: str | None = None   # the module the lab's exercises are checked against
    exercises: tuple[str, ...] = ()      # the lab's exercise functions, in the lab's order

    @property
    def lesson(self) -> str:
        return f"notebooks/{self.number}_{self.slug}.ipynb"

    @property
    def lab(self) -> str | None:
        return f"labs/{self.number}_{self.slug}_lab.ipynb" if self.exercises else None

    @property
    def lab_id(self) -> str | None:
        return f"{self.number}_{self.slug}_lab" if self.exercises else None


CHAPTERS: tuple[Chapter, ...] = (
    Chapter("00", "start_here", "Start here",
            "how lessons, labs and checks work, and whether your set-up is ready",
            "know how lessons, labs and checks work; check that your set-up is ready"),
    Chapter("01", "agent_loop", "Messages, roles and the agent loop",
            "what a request is, and the agent loop that sends it",
            "build a Chat Completions request by hand, run the tool-calling loop with the `openai` "
            "SDK and a step-through widget, explain why every call resends the history and why "
            "loops need a limit, catch a broken message list before the provider's 400",
            "solutions.agent_loop", ("validate_messages", "run_agent", "self_test")),
    Chapter("02", "counting_tokens", "Counting tokens",
            "what a request costs in tokens",
            "count text and whole requests with `tiktoken`, exactly against the API's "
            "`prompt_tokens` where the chat format is documented and as an estimate elsewhere; see "
            "why Chinese, paths and JSON cost more; budget a request and truncate to a token limit "
            "without breaking a character",
            "solutions.tokens", ("count_request_tokens", "truncate_to_tokens", "self_test")),
    Chapter("03", "gssc_pipeline", "The GSSC pipeline: Gather, Select, Structure, Compress",
            "a context built under a token budget (Gather → Select → Structure → Compress)",
            "build a context with Gather → Select → Structure → Compress under an exact token "
            "budget, with relevance that works for Chinese as well as English, the same bytes every "
            "time (cache-friendly), and never losing the task or the output instructions",
            "solutions.gssc", ("relevance", "select", "structure", "candidate_budget", "self_test")),
    Chapter("04", "compaction", "Compaction with pair-checking",
            "a long run kept inside its window without breaking tool-call pairs",
            "truncate tool output honestly and offload it where the agent can read it, compact a "
            "long run turn by turn without ever separating a tool call from its result, and prove "
            "it with a pairing checker and a real HTTP 400",
            "solutions.compaction", ("split_turns", "check_pairing", "compact", "self_test")),
    Chapter("05", "prompt_caching", "Prompt caching and the cost calculator",
            "the prompt cache measured, and whole runs priced",
            "see prefix caching in the API's own `cached_tokens`, find the habits that break it, "
            "and price full history, compaction and caching over a whole run with dated price "
            "tables and real usage records, including when compaction starts to pay",
            "solutions.costs", ("price_run", "compaction_schedule", "cache_friendly_request", "self_test")),
    Chapter("06", "notetool", "NoteTool: structured notes",
            "durable notes kept outside the window and fed back",
            "keep durable Markdown+YAML notes outside the window that survive hostile ids, odd "
            "content, crashes and concurrent writers, search them in Chinese and English, and feed "
            "them back through GSSC with blockers first",
            "solutions.notes", ("check_note_id", "render_note", "parse_note", "search_notes",
                                "write_atomic", "self_test")),
    Chapter("07", "terminal_sandbox", "The terminal sandbox and its bypasses",
            "a terminal for the agent: the naive sandbox broken, then hardened",
            "give an agent a terminal for just-in-time retrieval, break a first-word whitelist with "
            "an attack table judged by canaries, and harden it (no shell, argument rules with "
            "symlink-resolving path checks, process hygiene, bubblewrap) until every attack is "
            "blocked and real retrieval commands still work",
            "solutions.sandbox", ("parse_command", "resolve_inside", "check_arguments",
                                  "run_with_hygiene", "self_test")),
    Chapter("08", "status_bar", "The agent status bar",
            "the agent's own state kept by code and shown at the end of the context",
            "keep an agent's own state (call counters against limits, todo progress, time, budget, "
            "last error, working directory) in an `<agent_status>` block built by code from events, "
            "place it at the end of the context without breaking the cache or a tool-call pair, "
            "measure replace vs append with `cached_tokens`, and see a model trust it: misled by a "
            "wrong counter, a missing field or a poisoned source, and monitored for accuracy",
            "solutions.status_bar", ("update_status", "render_status", "place_status",
                                     "status_accuracy", "self_test")),
    Chapter("09", "skills_and_tool_search", "Skills and tool search",
            "expertise and tools loaded on demand, without breaking the cache",
            "write a SKILL.md and parse it safely, keep a catalogue of skills within a token "
            "budget and load bodies and sub-documents only when a task needs them, place them "
            "where the prompt cache survives, defer a hundred tool schemas behind tool search and "
            "grow the tool list append-only (mask, don't remove), and refuse hostile skills",
            "solutions.skills", ("parse_skill", "build_catalog", "load_skill", "add_tools", "self_test")),
    Chapter("10", "prompt_injection", "Prompt injection and context provenance",
            "an agent attacked through everything it reads, judged by canaries, defended in layers",
            "attack an agent through every entry point of its context (the user's message, pages, "
            "document metadata, search results, the inbox, notes and compaction summaries, file "
            "names, skills, the status bar), judge each attack by canaries rather than the agent's "
            "word, and defend in layers: a fence no content can close, roles kept apart, "
            "sanitising (and its bypass), least privilege, a confirmation gate, and provenance kept "
            "through notes, summaries and the bar",
            "solutions.injection", ("fence", "separate_roles", "guard_call", "run_attack_table", "self_test")),
    Chapter("11", "production_compaction", "Compaction in production, and sub-agents",
            "a long run kept alive by five compaction layers, cheapest first, and a sub-agent",
            "run a 200-step agent through five toggled compaction layers (a frozen tool-result "
            "budget, noise removal, micro-compaction, a per-turn archive, a model summary behind a "
            "circuit breaker with hysteresis) without breaking a pair, measure each one's tokens, "
            "cache hits, cost, probes kept and repeated calls, compare experiment 2-9's six "
            "strategies, delegate a search to a sub-agent, and read back what a summary dropped",
            "solutions.production_compaction", ("budget_tool_results", "drop_noise",
                                                "archive_turn", "compact_with_breaker", "self_test")),
    Chapter("12", "prompts_and_evaluation", "System prompts and tool definitions, and how to measure a change",
            "procedures, executable rules, cache-stable few-shot and tool definitions, measured by a seeded ablation",
            "write a system prompt as procedures with their stopping points, business rules precise enough "
            "to execute, few-shot examples fixed per task type (measured with `cached_tokens`) and tool "
            "definitions that work as a manual; judge an agent by the database's end state on an offline "
            "task world, run seeded trials at a temperature, put Wilson intervals and pass^k on success "
            "rates, ablate one factor at a time with paired comparisons, and gate prompt changes on a lint "
            "and a regression eval",
            "solutions.evaluation", ("judge_task", "run_trials", "success_interval", "ablate",
                                     "lint_prompt", "self_test")),
    Chapter("13", "reasoning_and_streaming", "Reasoning in the context, and the raw token stream",
            "a reasoning model's stream read raw, tools started early, earlier thinking sent back by each family's rule",
            "read a reasoning model's raw stream (`<think>`, text, calls) and assemble its deltas, start a "
            "complete, valid tool call while the reply still streams (simulated latency), send earlier "
            "reasoning back as each family requires (strip, pass back, keep since the last user turn, "
            "signed blocks) without a 400, measure prompt tokens, cache, probes and the reasoning share "
            "of the bill over a 200-call loop, and distil old thinking into decision records",
            "solutions.reasoning_stream", ("parse_stream", "first_ready_call", "history_for",
                                           "reasoning_budget", "self_test")),
    Chapter("14", "provider_side_context", "Context kept by the provider",
            "server state, server compaction and context editing, measured against your own",
            "chain a conversation on the Responses API (`previous_response_id`, `store=false`) and "
            "see that it is billed whole every turn, run chapter 11's run through the server's "
            "sealed compaction and through context editing (`clear_tool_uses`, done by the "
            "client too) against chapter 11's layers (tokens, cache, probes, cost, what the client "
            "can still check), price `clear_at_least` in lost cache, save to a client-executed "
            "memory before clearing, and choose a strategy by control, inspection, cache and "
            "portability",
            "solutions.provider_context", ("chain_turns", "clear_tool_uses", "cache_loss",
                                           "choose_strategy", "self_test")),
    Chapter("15", "agent_architecture", "An architecture for long runs: action spaces, sub-agents, cache keys",
            "the action space in layers, fresh and forked sub-agents, cache keys, and the whole context manager",
            "design a layered action space (about ten atomic tools, a sandboxed shell that filters large "
            "data where it lies) and measure its prefix tokens, tool-choice errors over seeded trials and "
            "data tokens; run sub-agents inline, fresh and forked with budgets and a bounded report "
            "contract, and compare parent and total tokens, cache hits and wall time; count the 2^N cache "
            "variants of a prompt's switches and move them after the boundary, keep one cache key per "
            "conversation and one model per session; assemble the course's parts into one context manager "
            "and measure it against each part and a sliding window",
            "solutions.architecture", ("digest", "run_children", "cache_variants",
                                       "move_after_boundary", "filter_in_sandbox", "self_test")),
)


# ------------------------------------------------------------------------ generated views
README_START = "<!-- chapters: generated by `python -m course.chapters --write-readme` -->"
README_END = "<!-- end of chapters -->"


def readme_table() -> str:
    rows = ["| # | lesson | lab | what you can do after it |", "|---|--------|-----|--------------------------|"]
    for c in CHAPTERS:
        lab = "—"
        if c.lab:
            functions = ", ".join(f"`{name}`" for name in c.exercises)
            lab = f"[lab]({c.lab}): {functions}"
        rows.append(f"| {c.number} | [{c.title}]({c.lesson}) | {lab} | {c.outcome} |")
    return "\n".join(rows)


def readme_with_table(readme: str) -> str:
    """The README text with the block between the two markers replaced by `readme_table()`."""
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.S)
    if not pattern.search(readme):
        raise ValueError(f"the README has no chapter block ({README_START} ... {README_END})")
    return pattern.sub(lambda _: f"{README_START}\n{readme_table()}\n{README_END}", readme)


class ChapterMap:
    """Notebook 00's map: plain text for nbval and terminals, Markdown in JupyterLab."""

    def _lines(self, markdown: bool):
        for c in CHAPTERS[1:]:
            lesson, lab = (f"[{c.lesson}](../{c.lesson})", f"[{c.lab}](../{c.lab})") if markdown \
                else (c.lesson, c.lab)
            yield (f"- **{c.number} {c.title}** — {c.summary}  \n  lesson {lesson}, lab {lab or '—'}"
                   if markdown else f"{c.number}  {c.title} — {c.summary}\n    lesson: {lesson}\n"
                   f"    lab:    {lab or '(none)'}")

    def __repr__(self) -> str:
        return "\n".join(self._lines(markdown=False))

    def _repr_markdown_(self) -> str:
        return "\n".join(self._lines(markdown=True))


def chapter_map() -> ChapterMap:
    return ChapterMap()


def problems() -> list[str]:
    """What disagrees between the registry and the files on disk (empty when all is well)."""
    found = []
    numbers = [c.number for c in CHAPTERS]
    if numbers != sorted(set(numbers)):
        found.append(f"chapter numbers must be unique and in order: {numbers}")
    listed_lessons = {c.lesson for c in CHAPTERS}
    listed_labs = {c.lab for c in CHAPTERS if c.lab}
    for path in sorted(LESSONS_DIR.glob("*.ipynb")):
        if f"notebooks/{path.name}" not in listed_lessons:
            found.append(f"notebooks/{path.name} is not in course.chapters.CHAPTERS")
    for path in sorted(LABS_DIR.glob("*.ipynb")):
        if f"labs/{path.name}" not in listed_labs:
            found.append(f"labs/{path.name} is not in course.chapters.CHAPTERS (or lists no exercises)")
    for c in CHAPTERS:
        for relative in (c.lesson, c.lab):
            if relative and not (REPO_ROOT / relative).exists():
                found.append(f"chapter {c.number}: {relative} does not exist")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.chapters", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-readme", action="store_true", help="rewrite README.md's chapter table")
    args = parser.parse_args(argv)
    if args.write_readme:
        readme = REPO_ROOT / "README.md"
        readme.write_text(readme_with_table(readme.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"rewrote the chapter table in {readme.name}")
    else:
        print(readme_table())
    found = problems()
    for problem in found:
        print("PROBLEM:", problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
