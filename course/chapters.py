"""The one list of the course's chapters, and everything a chapter owns. The rest follows from it.

A chapter owns its lesson and lab (and their Chinese editions and translations), its answers (the
solution module), its `parts` (lesson support, data, the lab's givens, tests) and its self-test
questions; the answer key has one section per chapter. Generated from this list:
the README's chapter table (`python -m course.chapters --write-readme`), notebook 00's chapter
map, and every lab's self-test check cells (`python -m course.chapters --write-labs`). The
structure tests check the files on disk against it: every file in a chapter folder belongs to one
chapter or to `SHARED_PARTS`, and what adding a chapter touches is measured there (AUTHORING.md).
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from dataclasses import dataclass

from course.paths import CHINESE_EDITION, LABS_DIR, LESSONS_DIR, REPO_ROOT


@dataclass(frozen=True)
class Question:
    """One self-test question of a lab: its key ("q1"), the digest of the right answer
    (`course.checks.answer_digest`: the released lab does not show it in clear) and the part of
    the lesson a wrong answer is sent back to."""
    key: str
    digest: str
    reread: str


@dataclass(frozen=True)
class Chapter:
    number: str             # two digits, "01"
    slug: str               # file-name part, "agent_loop"
    title: str
    summary: str            # one line for notebook 00's map
    outcome: str            # what a student can do after it (the README's last column)
    solution_module: str | None = None   # the module the lab's exercises are checked against
    exercises: tuple[str, ...] = ()      # the lab's exercise functions, in the lab's order
    parts: tuple[str, ...] = ()          # its other files: "dir/" a folder, else a glob pattern
    self_test: tuple[Question, ...] = ()  # the lab's self-test questions, in order

    @property
    def lesson(self) -> str:
        return f"notebooks/{self.number}_{self.slug}.ipynb"

    @property
    def lab(self) -> str | None:
        return f"labs/{self.number}_{self.slug}_lab.ipynb" if self.exercises else None

    @property
    def lab_id(self) -> str | None:
        return f"{self.number}_{self.slug}_lab" if self.exercises else None

    @property
    def answers(self) -> str | None:
        """The solution module's file or package folder ("solutions/costs/")."""
        if not self.solution_module:
            return None
        path = self.solution_module.replace(".", "/")
        return f"{path}/" if (REPO_ROOT / path).is_dir() else f"{path}.py"

    def patterns(self) -> tuple[str, ...]:
        """Everything the chapter owns, as `parts` patterns."""
        stems = [f"notebooks/{self.number}_{self.slug}"] + ([f"labs/{self.lab_id}"] if self.lab else [])
        editions = [f"{CHINESE_EDITION}/{stem}.ipynb" for stem in stems]
        translations = [f"translations/{CHINESE_EDITION}/{stem}.md" for stem in stems]
        return (*(f"{stem}.ipynb" for stem in stems), *editions, *translations,
                *([self.answers] if self.answers else []), *self.parts)

    def owns(self, path: str) -> bool:
        return matches(path, self.patterns())


def matches(path: str, patterns) -> bool:
    """Does a repository path (posix, relative) fall under one of the patterns?"""
    return any(path.startswith(p) if p.endswith("/") else fnmatch.fnmatchcase(path, p) for p in patterns)


CHAPTERS: tuple[Chapter, ...] = (
    Chapter("00", "start_here", "Start here",
            "how lessons, labs and checks work, and whether your set-up is ready",
            "know how lessons, labs and checks work; check that your set-up is ready"),
    Chapter("01", "agent_loop", "Messages, roles and the agent loop",
            "what a request is, and the agent loop that sends it",
            "build a Chat Completions request by hand, run the tool-calling loop with the `openai` "
            "SDK and a step-through widget, explain why every call resends the history and why "
            "loops need a limit, catch a broken message list before the provider's 400",
            "solutions.agent_loop", ("validate_messages", "run_agent", "self_test"),
            parts=("lesson_support/widgets/agent_loop.py", "data/tools/",
                   "tests/solutions/test_agent_loop.py",
                   "tests/solutions/test_validation_differential.py",
                   "tests/lesson_support/test_agent_loop_widget.py"),
            self_test=(
                Question("q1", "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4",
                         "section 3, 'The second call: the whole history goes again'"),
                Question("q2", "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35",
                         "sections 2 to 4, from 'The first call' to 'The loop'"),
                Question("q3", "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4",
                         "section 7, 'How the teaching model decides'"),
                Question("q4", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 6, 'Broken message lists'"))),
    Chapter("02", "counting_tokens", "Counting tokens",
            "what a request costs in tokens",
            "count text and whole requests with `tiktoken`, exactly against the API's "
            "`prompt_tokens` where the chat format is documented and as an estimate elsewhere; see "
            "why Chinese, paths and JSON cost more; budget a request and truncate to a token limit "
            "without breaking a character",
            "solutions.tokens", ("count_request_tokens", "truncate_to_tokens", "self_test"),
            parts=("lesson_support/widgets/tokens.py", "data/corpus/",
                   "tests/solutions/test_tokens*.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 4, 'Counting a whole request'"),
                Question("q2", "8527a891e224136950ff32ca212b45bc93f69fbb801c3b1ebedac52775f99e61",
                         "section 2, 'The study guide's four samples'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 3, 'Tokens per character, by content type'"),
                Question("q4", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "sections 2 to 5, from 'The study guide's four samples' to 'Budgeting a request'"))),
    Chapter("03", "gssc_pipeline", "The GSSC pipeline: Gather, Select, Structure, Compress",
            "a context built under a token budget (Gather → Select → Structure → Compress)",
            "build a context with Gather → Select → Structure → Compress under an exact token "
            "budget, with relevance that works for Chinese as well as English, the same bytes every "
            "time (cache-friendly), and never losing the task or the output instructions",
            "solutions.gssc", ("relevance", "select", "structure", "candidate_budget", "self_test"),
            parts=("course/givens/gssc/", "data/gssc/", "lesson_support/long_context.py",
                   "lesson_support/specimens/gssc_peer.py", "lesson_support/widgets/gssc.py",
                   "tests/solutions/test_gssc*.py", "tests/lesson_support/test_gssc_widget.py",
                   "tests/lesson_support/test_long_context.py"),
            self_test=(
                Question("q1", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 7, 'Structure: fixed sections, fixed order, the same bytes'"),
                Question("q2", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 6, 'The fill: stop at the first misfit vs keep trying'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 9, 'Compress: never lose the task or the output instructions'"),
                Question("q4", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 4, 'Relevance: whitespace words vs the course's terms'"),
                Question("q5", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 8, 'Why long contexts fail, and what the order does about it'"))),
    Chapter("04", "compaction", "Compaction with pair-checking",
            "a long run kept inside its window without breaking tool-call pairs",
            "truncate tool output honestly and offload it where the agent can read it, compact a "
            "long run turn by turn without ever separating a tool call from its result, and prove "
            "it with a pairing checker and a real HTTP 400",
            "solutions.compaction", ("split_turns", "check_pairing", "compact", "self_test"),
            parts=("solutions/truncation.py", "course/givens/compaction.py", "data/compaction/",
                   "lesson_support/foreign_transcripts.py",
                   "lesson_support/widgets/compaction.py",
                   "tests/solutions/test_compaction*.py", "tests/solutions/test_truncation.py",
                   "tests/lesson_support/test_compaction_widget.py",
                   "tests/lesson_support/test_foreign_transcripts.py"),
            self_test=(
                Question("q1", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 1, 'Truncating tool output'"),
                Question("q2", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 2, 'Turns, not messages'"),
                Question("q3", "79057dc88750468f07747614c13d6e2f00a5e5696e57195a5f622b267fe7ad68",
                         "section 3, 'Who writes the summary'"),
                Question("q4", "7902699be42c8a8e46fbbb4501726517e86b22c56a189f7625a6da49081b2451",
                         "section 2, 'Compacting history without splitting a call from its result'"))),
    Chapter("05", "prompt_caching", "Prompt caching and the cost calculator",
            "the prompt cache measured, and whole runs priced",
            "see prefix caching in the API's own `cached_tokens`, find the habits that break it, "
            "and price full history, compaction and caching over a whole run with dated price "
            "tables and real usage records, including when compaction starts to pay",
            "solutions.costs", ("price_run", "compaction_schedule", "cache_friendly_request", "self_test"),
            parts=("data/prices/", "lesson_support/cache_experiment/",
                   "lesson_support/kv_cache.py", "lesson_support/widgets/costs.py",
                   "lesson_support/widgets/kv_cache.py", "tests/solutions/test_costs*.py",
                   "tests/solutions/test_cache_friendly.py",
                   "tests/lesson_support/test_cache_experiment.py",
                   "tests/lesson_support/test_costs_widget.py",
                   "tests/lesson_support/test_kv_cache*.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 1, 'What gets cached, and why only a prefix'"),
                Question("q2", "b647eb1fbb0e2e29c14dbe1d3ed6d706eb5ae292e01eab9f1c52e003a9e08a02",
                         "section 4, 'What breaks the cache: one run, built eight ways'"),
                Question("q3", "a7f18f8ce4e37340b44c0ada5c6ed1932e8aa0652c5821c98cd6d27f98497478",
                         "'The study guide's lab, reproduced' in section 5"),
                Question("q4", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "'4: when does compaction pay?' in section 5"))),
    Chapter("06", "notetool", "NoteTool: structured notes",
            "durable notes kept outside the window and fed back",
            "keep durable Markdown+YAML notes outside the window that survive hostile ids, odd "
            "content, crashes and concurrent writers, search them in Chinese and English, and feed "
            "them back through GSSC with blockers first",
            "solutions.notes", ("check_note_id", "render_note", "parse_note", "search_notes",
                                "write_atomic", "self_test"),
            parts=("course/givens/notes/", "data/notes/", "lesson_support/notes_scenario.py",
                   "lesson_support/specimens/json_index_notes.py",
                   "lesson_support/widgets/notes.py", "tests/solutions/test_notes*.py",
                   "tests/lesson_support/test_notes_widget.py"),
            self_test=(
                Question("q1", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "'Which kind of memory is a note?' in section 2"),
                Question("q2", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "'Things to think about'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 3.4, 'A crash in the middle of a write'"),
                Question("q4", "9f29a130438b81170b92a42650f9a94291ecad60bd47af2a3886e75f7f728725",
                         "'Why blockers weigh more' in section 6"))),
    Chapter("07", "terminal_sandbox", "The terminal sandbox and its bypasses",
            "a terminal for the agent: the naive sandbox broken, then hardened",
            "give an agent a terminal for just-in-time retrieval, break a first-word whitelist with "
            "an attack table judged by canaries, and harden it (no shell, argument rules with "
            "symlink-resolving path checks, process hygiene, bubblewrap) until every attack is "
            "blocked and real retrieval commands still work",
            "solutions.sandbox", ("parse_command", "resolve_inside", "check_arguments",
                                  "run_with_hygiene", "self_test"),
            parts=("course/givens/sandbox/", "data/sandbox/", "data/sandbox_workspace/",
                   "lesson_support/sandbox_attacks/",
                   "lesson_support/specimens/naive_terminal.py",
                   "lesson_support/widgets/sandbox.py", "tests/solutions/test_sandbox_*.py",
                   "tests/lesson_support/test_sandbox_*.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "'Layer 1: no shell' in section 3"),
                Question("q2", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 2, 'The red-team harness: judged by canaries'"),
                Question("q3", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "'Layer 2: rules for arguments, and every path kept inside' in section 3"),
                Question("q4", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 4, 'Real work still runs'"))),
    Chapter("08", "status_bar", "The agent status bar",
            "the agent's own state kept by code and shown at the end of the context",
            "keep an agent's own state (call counters against limits, todo progress, time, budget, "
            "last error, working directory) in an `<agent_status>` block built by code from events, "
            "place it at the end of the context without breaking the cache or a tool-call pair, "
            "measure replace vs append with `cached_tokens`, and see a model trust it: misled by a "
            "wrong counter, a missing field or a poisoned source, and monitored for accuracy",
            "solutions.status_bar", ("update_status", "render_status", "place_status",
                                     "status_accuracy", "self_test"),
            parts=("course/givens/status_bar.py", "data/status_bar/",
                   "lesson_support/status_bar.py", "lesson_support/widgets/status_bar.py",
                   "tests/solutions/test_status_bar*.py",
                   "tests/lesson_support/test_status_bar_*.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 2, 'The bar, built by code from events'"),
                Question("q2", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 4, 'Where the bar goes, and what it costs'"),
                Question("q3", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 4, 'Where the bar goes, and what it costs'"),
                Question("q4", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 5, 'False authority: a counter off by a few'"))),
    Chapter("09", "skills_and_tool_search", "Skills and tool search",
            "expertise and tools loaded on demand, without breaking the cache",
            "write a SKILL.md and parse it safely, keep a catalogue of skills within a token "
            "budget and load bodies and sub-documents only when a task needs them, place them "
            "where the prompt cache survives, defer a hundred tool schemas behind tool search and "
            "grow the tool list append-only (mask, don't remove), and refuse hostile skills",
            "solutions.skills", ("parse_skill", "build_catalog", "load_skill", "add_tools", "self_test"),
            parts=("course/givens/skills.py", "data/skills/", "data/skills_hostile/",
                   "lesson_support/skills/", "lesson_support/widgets/skills.py",
                   "tests/solutions/test_skills.py", "tests/lesson_support/test_skills_*.py"),
            self_test=(
                Question("q1", "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4",
                         "section 2, 'Three layers, counted'"),
                Question("q2", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 1, 'A skill is a folder with a SKILL.md'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "'What a change to the tool list does to the cache' in section 5"),
                Question("q4", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 7, 'When the model does not know it needs a skill'"))),
    Chapter("10", "prompt_injection", "Prompt injection and context provenance",
            "an agent attacked through everything it reads, judged by canaries, defended in layers",
            "attack an agent through every entry point of its context (the user's message, pages, "
            "document metadata, search results, the inbox, notes and compaction summaries, file "
            "names, skills, the status bar), judge each attack by canaries rather than the agent's "
            "word, and defend in layers: a fence no content can close, roles kept apart, "
            "sanitising (and its bypass), least privilege, a confirmation gate, and provenance kept "
            "through notes, summaries and the bar",
            "solutions.injection", ("fence", "separate_roles", "guard_call", "run_attack_table", "self_test"),
            parts=("course/givens/injection.py", "data/injection/", "lesson_support/injection/",
                   "lesson_support/widgets/injection.py", "tests/solutions/test_injection.py",
                   "tests/lesson_support/test_injection_*.py"),
            self_test=(
                Question("q1", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 12, 'What real agents do'"),
                Question("q2", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 5, 'A fence that closes early'"),
                Question("q3", "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9",
                         "section 11, 'The whole table'"),
                Question("q4", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 2, 'The attack table'"))),
    Chapter("11", "production_compaction", "Compaction in production, and sub-agents",
            "a long run kept alive by five compaction layers, cheapest first, and a sub-agent",
            "run a 200-step agent through five toggled compaction layers (a frozen tool-result "
            "budget, noise removal, micro-compaction, a per-turn archive, a model summary behind a "
            "circuit breaker with hysteresis) without breaking a pair, measure each one's tokens, "
            "cache hits, cost, probes kept and repeated calls, compare experiment 2-9's six "
            "strategies, delegate a search to a sub-agent, and read back what a summary dropped",
            "solutions.production_compaction", ("budget_tool_results", "drop_noise",
                                                "archive_turn", "compact_with_breaker", "self_test"),
            parts=("course/givens/production_compaction.py", "data/production_compaction/",
                   "lesson_support/production_compaction*.py",
                   "lesson_support/widgets/production_compaction.py",
                   "tests/solutions/test_production_compaction*.py",
                   "tests/solutions/test_identifiers_whole.py",
                   "tests/lesson_support/test_lesson11_experiment.py",
                   "tests/lesson_support/test_production_compaction_widget.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "sections 2 to 4, from 'Layer 1: the tool-result budget, frozen' to 'Layers 3–5, and every configuration measured'"),
                Question("q2", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 5, 'The circuit breaker'"),
                Question("q3", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 8, 'The loss a summary cannot undo'"),
                Question("q4", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 7, 'Sub-agents'"))),
    Chapter("12", "prompts_and_evaluation", "System prompts and tool definitions, and how to measure a change",
            "procedures, executable rules, cache-stable few-shot and tool definitions, measured by a seeded ablation",
            "write a system prompt as procedures with their stopping points, business rules precise enough "
            "to execute, few-shot examples fixed per task type (measured with `cached_tokens`) and tool "
            "definitions that work as a manual; judge an agent by the database's end state on an offline "
            "task world, run seeded trials at a temperature, put Wilson intervals and pass^k on success "
            "rates, ablate one factor at a time with paired comparisons, and gate prompt changes on a lint "
            "and a regression eval",
            "solutions.evaluation", ("judge_task", "run_trials", "success_interval", "ablate",
                                     "lint_prompt", "self_test"),
            parts=("course/givens/task_world.py", "data/task_world/",
                   "lesson_support/evaluation.py", "lesson_support/widgets/evaluation.py",
                   "tests/solutions/test_evaluation.py",
                   "tests/lesson_support/test_evaluation_widget.py"),
            self_test=(
                Question("q1", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 2, 'The static context, piece by piece'"),
                Question("q2", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 5, 'Statistics a practitioner needs'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 5, 'Statistics a practitioner needs'"),
                Question("q4", "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4",
                         "section 7, 'Prompts as code'"))),
    Chapter("13", "reasoning_and_streaming", "Reasoning in the context, and the raw token stream",
            "a reasoning model's stream read raw, tools started early, earlier thinking sent back by each family's rule",
            "read a reasoning model's raw stream (`<think>`, text, calls) and assemble its deltas, start a "
            "complete, valid tool call while the reply still streams (simulated latency), send earlier "
            "reasoning back as each family requires (strip, pass back, keep since the last user turn, "
            "signed blocks) without a 400, measure prompt tokens, cache, probes and the reasoning share "
            "of the bill over a 200-call loop, and distil old thinking into decision records",
            "solutions.reasoning_stream", ("parse_stream", "first_ready_call", "history_for",
                                           "reasoning_budget", "self_test"),
            parts=("course/givens/reasoning_stream.py", "lesson_support/reasoning_stream.py",
                   "lesson_support/widgets/reasoning_stream.py",
                   "tests/solutions/test_reasoning_stream.py",
                   "tests/lesson_support/test_reasoning_stream_widget.py"),
            self_test=(
                Question("q1", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 1, 'The raw stream'"),
                Question("q2", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 2, 'Start tools early'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 3, 'History policies, measured'"),
                Question("q4", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 4, 'Thinking question 2 worked through'"))),
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
                                           "choose_strategy", "self_test"),
            parts=("course/givens/provider_context.py", "lesson_support/provider_context.py",
                   "lesson_support/provider_memory.py",
                   "lesson_support/widgets/provider_context.py",
                   "tests/solutions/test_provider_context.py",
                   "tests/lesson_support/test_provider_context_widget.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 1, 'Server state is not free context'"),
                Question("q2", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 2, 'Server compaction'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 3, 'Context editing'"),
                Question("q4", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 3, 'Context editing'"))),
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
                                       "move_after_boundary", "filter_in_sandbox", "self_test"),
            parts=("course/givens/architecture.py", "data/architecture/",
                   "lesson_support/architecture*.py", "lesson_support/widgets/architecture.py",
                   "tests/solutions/test_architecture.py",
                   "tests/lesson_support/test_architecture_widget.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 2, 'Sub-agents: inline, fresh, forked'"),
                Question("q2", "2c624232cdd221771294dfbb310aca000a0df6ac8b66b696d90ef06fdefb64a3",
                         "section 3, 'Cache keys are architecture'"),
                Question("q3", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 3, 'One conversation, one cache; one model, one cache'"),
                Question("q4", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 1, 'The action space, in layers'"))),
    Chapter("16", "real_model", "A real model on your machine",
            "a small real model served here: its template, its stream, its cache and what length does to recall, measured",
            "serve SmolLM2 (or any GGUF) locally through the course's client, render its chat template and "
            "count the envelope in its own tokens, read the raw stream for time to first token and decode "
            "speed, measure the prefix cache cold, again and after a change at the top or the end against "
            "the teaching model's simulated timing, score a needle grid of independent trials with Wilson "
            "intervals, see where attention goes, and say which of the teaching model's rules a real "
            "model agrees with, disagrees with or cannot follow at its size",
            "solutions.real_model", ("ttft_and_decode", "needle_cells", "template_overhead", "self_test"),
            parts=("course/givens/real_model.py", "lesson_support/real_model/",
                   "lesson_support/widgets/real_model.py", "data/real_model/",
                   "tests/solutions/test_real_model_answers.py", "tests/lesson_support/test_real_model*.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 1, 'The template and the tokens'"),
                Question("q2", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 2, 'The raw stream, and two speeds'"),
                Question("q3", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 3, 'The KV cache, for real'"),
                Question("q4", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 4, 'Context rot, measured'"),
                Question("q5", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 6, 'Simulation against a real model'"))),
    Chapter("17", "memory", "Memory across sessions",
            "what an agent keeps after a conversation ends, how it keeps it right, and how to find and measure it",
            "extract memories from a finished session with their source, time and kind, refuse secrets, "
            "credentials and other people's private data by code, consolidate new memories against old "
            "ones (update with a validity period, merge, mark contradictions, forget by policy) in a gated, "
            "locked pass over chapter 06's notes, retrieve them offline by BM25, a multilingual embedding "
            "and rank fusion, place them in the context by chapter 05's prefix rules, defend against "
            "poisoning, and measure recall per question kind with seeded trials and Wilson intervals",
            "solutions.memory", ("filter_records", "consolidate", "fuse_rankings", "score_answer", "self_test"),
            parts=("course/givens/memory.py", "lesson_support/memory/", "lesson_support/memory_lesson.py",
                   "lesson_support/widgets/memory.py", "data/memory/", "benchmarks/bench_memory.py",
                   "tests/solutions/test_memory*.py", "tests/lesson_support/test_memory*.py"),
            self_test=(
                Question("q1", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 3, 'Consolidation: update, merge, contradict, forget'"),
                Question("q2", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 4, 'Retrieval, hybrid and offline'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 7, 'Measuring recall'"),
                Question("q4", "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4",
                         "section 4, 'Retrieval, hybrid and offline'"))),
    Chapter("18", "mcp", "Tools from MCP servers, and what they cost the context",
            "tools from MCP servers: what their schemas cost every request, less of it, and a server as an attacker",
            "serve the course's tools as an MCP server with the official SDK (stdio and Streamable HTTP on "
            "127.0.0.1) and run chapter 01's loop as its client; count what tool schemas add to every "
            "request and price it cached and uncached, see what a tool added mid-session does to the cache; "
            "cut it with on-demand definitions (a catalogue and tool search) or code execution in chapter "
            "07's sandbox, measured on the same tasks; use resources and prompts; pin definitions by hash "
            "against a rug pull, namespace tools per server, and stop an injected result with provenance "
            "tags and least privilege",
            "solutions.mcp", ("schema_tokens", "build_catalogue", "load_on_demand", "check_pins",
                              "map_result", "self_test"),
            parts=("course/givens/mcp.py", "lesson_support/mcp/",
                   "lesson_support/widgets/mcp.py", "tests/solutions/test_mcp*.py",
                   "tests/lesson_support/test_mcp*.py"),
            self_test=(
                Question("q1", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 2, 'What MCP costs the context'"),
                Question("q2", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 2, 'Where they sit in the prefix'"),
                Question("q3", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 4, 'The risks'"),
                Question("q4", "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4",
                         "section 3, 'Less of it'"))),
    Chapter("19", "capstone", "The capstone: a context manager for a long-running agent",
            "the capstone: assemble a context manager for long-running agents, graded on hidden tasks",
            "assemble a context manager for long cases of three kinds (an airline desk, a repository's "
            "maintainers, a research report) from the course's techniques behind one interface, "
            "`next_request(history, task)`: results capped, tool output fenced as data, facts the user "
            "gave written back into a call-back, a window whose cut keeps the prompt cache; measure it "
            "on the development set by end state, tokens, cost, cache hit rate, canary leaks and pass^k "
            "against the naive manager and each chapter's technique alone; and know why the grade comes "
            "from hidden tasks run in a confined worker",
            "solutions.capstone", ("cap_results", "fence", "remember", "slide_stably", "next_request",
                                   "self_test"),
            parts=("course/givens/capstone*.py", "lesson_support/capstone/",
                   "lesson_support/capstone_lesson*.py", "lesson_support/widgets/capstone.py",
                   "data/capstone/", "tests/solutions/test_capstone*.py",
                   "tests/lesson_support/test_capstone*.py",
                   # its hidden-set grading and what tests and measures it
                   "course/grade/capstone.py", "tests/labs/test_grade_capstone*.py",
                   "tests/labs/test_hostile_capstone.py", "benchmarks/*capstone*.py"),
            self_test=(
                Question("q1", "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6",
                         "section 3, 'How a run is scored'"),
                Question("q2", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 3, 'How a run is scored'"),
                Question("q3", "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                         "section 4, 'The baselines, one by one and assembled'"),
                Question("q4", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
                         "section 5, 'Why grading happens on hidden tasks'"))),
)


# Files in the chapter folders that no one chapter owns, and why.
SHARED_PARTS: tuple[str, ...] = (
    "solutions/__init__.py", "course/givens/__init__.py", "lesson_support/__init__.py",
    "lesson_support/widgets/__init__.py",
    "lesson_support/widgets/progress.py",         # the bar long lesson cells show (lessons 11, 12, 15)
    "tests/lesson_support/test_progress_widget.py",
    "tests/solutions/message_shapes.py",          # message-list strategies for every transcript test
    "tests/solutions/test_real_world_shapes.py",  # every chapter's transcript functions, one corpus
    "tests/lesson_support/test_widgets_i18n.py",  # every widget's Chinese strings
    f"translations/{CHINESE_EDITION}/memory.txt",  # the Chinese edition's one rendering of every recurring sentence
)
# Parts of a chapter being written that the registry does not list yet (its lesson and lab are
# still to come): kept out of the ownership check until the chapter's entry takes them as `parts`.
IN_PROGRESS: dict[str, tuple[str, ...]] = {}
# The folders whose every file belongs to a chapter (or to SHARED_PARTS).
CHAPTER_FOLDERS: tuple[str, ...] = (
    "notebooks/", "labs/", f"{CHINESE_EDITION}/", "translations/", "solutions/", "lesson_support/",
    "data/", "course/givens/", "tests/solutions/", "tests/lesson_support/")
# What adding a chapter touches outside its own files (AUTHORING.md says so; a structure test
# measures it on the latest chapter): the shared files edited by hand, and those regenerated.
HAND_EDITED: tuple[str, ...] = ("course/chapters.py", "docs/instructors/answer_key.md", "README.zh-CN.md",
                                "course/locale/zh_CN/LC_MESSAGES/course.po")  # its lab's check messages
REGENERATED: tuple[str, ...] = ("README.md", "notebooks/00_start_here.ipynb",
                                f"{CHINESE_EDITION}/notebooks/00_start_here.ipynb",
                                "course/provider_load.json", "course/locale/course.pot")


def owner(path: str) -> list[Chapter]:
    """The chapters that own a repository path (one, for a file in CHAPTER_FOLDERS)."""
    return [c for c in CHAPTERS if c.owns(path)]


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


SELF_TEST_CHECK = """\
with check("check-self-test-{key}",
           hint="self_test() must return a dict of your answers, such as {{\\"q1\\": \\"a\\"}}"):
    answers = self_test()
    assert isinstance(answers, dict), \\
        f"self_test() must return a dict of answers, such as {{{{'q1': 'a'}}}}; got {{type(answers).__name__}}"
    assert "{key}" in answers, "no answer to {key} yet: add \\"{key}\\" to the dict self_test() returns"
    assert answer_digest(answers["{key}"]) == "{digest}", \\
        "{key} is not right yet: re-read {reread}, then try again\""""


def self_test_check(question: Question) -> str:
    """The source of a lab's check cell for one self-test question."""
    return SELF_TEST_CHECK.format(key=question.key, digest=question.digest, reread=question.reread)


def self_test_cells(nb: dict) -> list[dict]:
    """A lab notebook's (JSON) self-test check cells, in order."""
    return [c for c in nb["cells"] if c.get("metadata", {}).get("course", {}).get("key", "")
            .startswith("check-self-test-")]


def with_self_test_checks(chapter: Chapter, nb: dict) -> dict:
    """The lab notebook (JSON) with its self-test check cells written from the registry."""
    cells = self_test_cells(nb)
    keys = [c["metadata"]["course"]["key"] for c in cells]
    wanted = [f"check-self-test-{q.key}" for q in chapter.self_test]
    if keys != wanted:
        raise ValueError(f"{chapter.lab} has self-test checks {keys}, the registry lists {wanted}: "
                         "add or remove the cells in the lab first")
    for cell, question in zip(cells, chapter.self_test):
        text = self_test_check(question)
        cell["source"] = text if isinstance(cell["source"], str) else text.splitlines(keepends=True)
    return nb


def write_labs() -> list[str]:
    """Rewrite every lab's self-test check cells from the registry; the labs that changed."""
    changed = []
    for chapter in CHAPTERS:
        if not chapter.lab:
            continue
        path = REPO_ROOT / chapter.lab
        text = path.read_text(encoding="utf-8")
        new = json.dumps(with_self_test_checks(chapter, json.loads(text)), indent=1,
                         ensure_ascii=False) + "\n"
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(chapter.lab)
    return changed


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
        for pattern in c.parts:
            if not any(REPO_ROOT.glob(pattern.rstrip("/"))):
                found.append(f"chapter {c.number}: its part {pattern!r} matches no file")
        for question in c.self_test:
            if '"' in question.reread or "\\" in question.reread:
                found.append(f"chapter {c.number}: self-test {question.key}'s reread text holds a quote "
                             "or a backslash (it goes into a string in the check cell)")
        if c.lab and "self_test" in c.exercises and not c.self_test:
            found.append(f"chapter {c.number}: the lab has a self_test exercise and the registry no questions")
        if c.lab and (REPO_ROOT / c.lab).exists():
            lab = json.loads((REPO_ROOT / c.lab).read_text(encoding="utf-8"))
            cells = self_test_cells(lab)
            wanted = [self_test_check(q) for q in c.self_test]
            if ["".join(cell["source"]) for cell in cells] != wanted:
                found.append(f"chapter {c.number}: {c.lab}'s self-test check cells are not the registry's "
                             "questions: run `python -m course.chapters --write-labs`")
    return found


def unowned_files(paths) -> list[str]:
    """Paths in CHAPTER_FOLDERS that belong to no chapter and are not SHARED_PARTS, or to more
    than one chapter (each with the chapters that claim it)."""
    found = []
    for path in paths:
        if not matches(path, CHAPTER_FOLDERS) or matches(path, SHARED_PARTS) \
                or any(matches(path, parts) for parts in IN_PROGRESS.values()):
            continue
        owners = [c.number for c in owner(path)]
        if len(owners) != 1:
            found.append(f"{path}: {'no chapter' if not owners else 'chapters ' + ', '.join(owners)}")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.chapters", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-readme", action="store_true", help="rewrite README.md's chapter table")
    parser.add_argument("--write-labs", action="store_true",
                        help="rewrite every lab's self-test check cells from the registry's questions")
    args = parser.parse_args(argv)
    if args.write_labs:
        changed = write_labs()
        print(f"rewrote the self-test checks of {len(changed)} lab(s)" + "".join(f"\n  {p}" for p in changed)
              + ("\nnow rebuild their Chinese editions: python -m course.editions build <lab>" if changed else ""))
    if args.write_readme:
        readme = REPO_ROOT / "README.md"
        readme.write_text(readme_with_table(readme.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"rewrote the chapter table in {readme.name}")
    elif not args.write_labs:
        print(readme_table())
    found = problems()
    for problem in found:
        print("PROBLEM:", problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
