"""Chapter 09 lesson support: the course's skills and tools, token accounting per layer, a
review of a skill's body, tool search over the catalogue, and the cache measurements.

The answers (parse_skill, build_catalog, load_skill, add_tools) are in `solutions.skills`;
what is here is what the lesson needs around them. Every measurement talks to a model through
an `openai` client the caller passes in, so the lesson can use a private teaching model with a
clean prompt cache, and send the same requests to a configured provider beside it. A provider's
model follows no documented rule: `try_session` runs its sessions without trusting its replies
(any tool, bad JSON, a refusal, an error status) and the formatters print what it did.
"""
from __future__ import annotations

import copy
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from course.paths import DATA_DIR
from course.usage import NOT_REPORTED, describe, read_usage
from lesson_support.cache_experiment import expected_cached_tokens
from solutions.costs import OPENAI_RULES
from solutions.skills import (Skill, SkillError, add_tools, build_catalog, catalog_line,
                              load_skill, read_skill_file)
from solutions.tokens import count_request_tokens, count_tokens

SKILLS_DIR = DATA_DIR / "skills"
HOSTILE_DIR = DATA_DIR / "skills_hostile"
TOOLS_FILE = DATA_DIR / "tools" / "catalogue.json"
CATALOG_BUDGET = 1_000


# ------------------------------------------------------------------ fixtures
def skill_names(folder: Path = SKILLS_DIR) -> list[str]:
    return sorted(p.name for p in Path(folder).iterdir() if (p / "SKILL.md").is_file())


def course_skills(folder: Path = SKILLS_DIR) -> list[Skill]:
    """Every skill in the folder, loaded through the answer's `load_skill`."""
    return [load_skill(folder, name) for name in skill_names(folder)]


def tool_catalogue() -> list[dict]:
    return json.loads(TOOLS_FILE.read_text(encoding="utf-8"))


def tools_by_name(names, catalogue: list[dict] | None = None) -> list[dict]:
    index = {t["function"]["name"]: t for t in (catalogue or tool_catalogue())}
    return [index[name] for name in names]


def hostile_names() -> list[str]:
    return json.loads((HOSTILE_DIR / "names.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the tools the harness runs
LOAD_SKILL_TOOL = {"type": "function", "function": {
    "name": "load_skill",
    "description": "Load the full instructions of one skill listed in <available_skills>, by its "
                   "name. Call it before starting a task that a skill's description matches.",
    "parameters": {"type": "object", "properties": {
        "name": {"type": "string", "description": "The skill's name, e.g. csv-report"}},
        "required": ["name"], "additionalProperties": False}}}

TOOL_SEARCH_TOOL = {"type": "function", "function": {
    "name": "tool_search",
    "description": "Search the catalogue of more tools by keywords when none of the offered tools "
                   "fits the task. The matching tools become callable from the next request on.",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "description": "Key terms of the task, e.g. csv chart"}},
        "required": ["query"], "additionalProperties": False}}}


def tools_tokens(tools: list[dict]) -> int:
    """What a `tools` list adds to every request (o200k_base, the teaching model's template)."""
    probe = [{"role": "user", "content": "x"}]
    return count_request_tokens(probe, tools) - count_request_tokens(probe) if tools else 0


def tool_stub(tool: dict) -> str:
    """A one-line stub: the name and the first sentence of the description."""
    fn = tool["function"]
    first = re.split(r"(?<=\.)\s", fn.get("description", ""), maxsplit=1)[0].rstrip(".")
    return f"- {fn['name']}: {first}"


# ------------------------------------------------------------------ layers
@dataclass(frozen=True)
class LayerRow:
    skill: str
    catalogue: int       # layer 1: the skill's line in <available_skills>
    body: int            # layer 2: the SKILL.md body, loaded on demand
    files: int           # layer 3: sub-documents and scripts, read when a step needs them
    file_names: tuple[str, ...]


def skill_files(name: str, folder: Path = SKILLS_DIR) -> list[str]:
    root = Path(folder) / name
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.name != "SKILL.md")


def layer_rows(folder: Path = SKILLS_DIR) -> list[LayerRow]:
    rows = []
    for skill in course_skills(folder):
        files = skill_files(skill.name, folder)
        rows.append(LayerRow(skill.name, count_tokens(catalog_line(skill)),
                             count_tokens(skill.body),
                             sum(count_tokens(read_skill_file(folder, skill.name, f)) for f in files),
                             tuple(files)))
    return rows


def format_layer_rows(rows: list[LayerRow]) -> str:
    lines = [f"{'skill':<18} {'layer 1':>8} {'layer 2':>8} {'layer 3':>8}  files",
             f"{'':<18} {'line':>8} {'body':>8} {'files':>8}"]
    for r in rows:
        lines.append(f"{r.skill:<18} {r.catalogue:>8} {r.body:>8} {r.files:>8}  "
                     f"{', '.join(r.file_names) or '-'}")
    lines.append(f"{'total':<18} {sum(r.catalogue for r in rows):>8} {sum(r.body for r in rows):>8} "
                 f"{sum(r.files for r in rows):>8}")
    return "\n".join(lines)


# ------------------------------------------------------------------ reviewing a skill like code
SECRET_PATHS = re.compile(r"(~/\.ssh|id_rsa|id_ed25519|\.aws/credentials|\.env\b|\.netrc|"
                          r"/etc/shadow|\.git-credentials|api[_-]?key)", re.I)
URL_RE = re.compile(r"https?://[^\s)`\"']+")
CONCEAL = re.compile(r"(do not (mention|tell|report)|don't (mention|tell)|silently|without "
                     r"telling|hide this)", re.I)
SENDING_TOOLS = frozenset({"http_post", "send_email", "send_chat_message", "fetch_url",
                           "run_command", "deploy_service"})
TOOL_IN_BODY = re.compile(r"`([a-z][a-z0-9_]*)`")


@dataclass(frozen=True)
class Finding:
    severity: str   # "block" or "warn"
    reason: str


def review_skill(skill: Skill, known_tools: set[str]) -> list[Finding]:
    """What a reviewer would flag in a skill before installing it (the textbook: review a
    third-party skill like code). A heuristic screen, not a proof: it reads the body for secret
    paths, outside URLs, concealment, tools that send data out, and tools nobody offers."""
    body = skill.body
    findings = []
    for match in sorted(set(SECRET_PATHS.findall(body)), key=str):
        findings.append(Finding("block", f"reads a secret: {match[0] if isinstance(match, tuple) else match}"))
    for url in sorted(set(URL_RE.findall(body))):
        findings.append(Finding("block", f"sends or fetches outside: {url}"))
    if CONCEAL.search(body):
        findings.append(Finding("block", f"asks to hide a step: \"{CONCEAL.search(body).group(0)}\""))
    named = sorted(set(TOOL_IN_BODY.findall(body)))
    for tool in named:
        if tool in SENDING_TOOLS:
            findings.append(Finding("warn", f"uses a tool that sends data out: {tool}"))
        elif known_tools and tool not in known_tools and "_" in tool:
            findings.append(Finding("warn", f"names a tool nobody offers: {tool}"))
    return findings


@dataclass(frozen=True)
class Vetting:
    name: str
    verdict: str        # "installed", "refused"
    reason: str


def vet_folder(folder: Path, known_tools: set[str]) -> list[Vetting]:
    """Every skill folder: refused by the loader, refused by review, or installed."""
    rows = []
    for name in sorted(p.name for p in Path(folder).iterdir() if p.is_dir()):
        try:
            skill = load_skill(folder, name)
        except SkillError as exc:
            rows.append(Vetting(name, "refused", str(exc).removeprefix(f"skill {name!r}: ")))
            continue
        blocking = [f.reason for f in review_skill(skill, known_tools) if f.severity == "block"]
        rows.append(Vetting(name, "refused" if blocking else "installed",
                            "; ".join(blocking) if blocking else "parsed and reviewed"))
    return rows


# ------------------------------------------------------------------ tool search (BM25)
WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an the of to and or for in on with by from is are be it as at this that "
                 "when use e g i me my please".split())


def _words(text: str) -> list[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower()
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in WORD.findall(text)
            if w not in STOP]


def _document(tool: dict) -> list[str]:
    fn = tool["function"]
    params = " ".join(f"{k} {v.get('description', '')}" for k, v in
                      (fn.get("parameters") or {}).get("properties", {}).items())
    return _words(fn["name"]) * 2 + _words(fn.get("description", "")) + _words(params)


def search_tools(query: str, catalogue: list[dict], limit: int = 3,
                 k1: float = 1.2, b: float = 0.75) -> list[tuple[float, dict]]:
    """BM25 over each tool's name (counted twice), description and parameters: the best
    `limit` tools for `query`, best first, ties broken by name. Codex CLI's tool search is BM25
    too (the textbook, part 9)."""
    docs = [_document(t) for t in catalogue]
    n = len(docs)
    average = sum(map(len, docs)) / max(n, 1)
    frequency = Counter(w for d in docs for w in set(d))
    terms = set(_words(query))
    scored = []
    for tool, doc in zip(catalogue, docs):
        counts = Counter(doc)
        score = 0.0
        for term in terms:
            if counts[term]:
                idf = math.log(1 + (n - frequency[term] + 0.5) / (frequency[term] + 0.5))
                tf = counts[term]
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / average))
        if score > 0:
            scored.append((round(score, 3), tool))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["function"]["name"]))
    return scored[:limit]


# ------------------------------------------------------------------ cache measurements
def usage_of(completion) -> tuple[int | None, int | None]:
    """(prompt_tokens, cached_tokens) of a completion, read by course.usage.read_usage: None
    where the provider does not report the figure (cached tokens on Ollama), never 0."""
    usage = read_usage(completion.usage)
    return usage.prompt, usage.cached


def ask(client, model: str, messages: list[dict], tools: list[dict] | None = None, **extra):
    kwargs = {"model": model, "messages": messages}
    if tools:
        kwargs["tools"] = tools
    kwargs.update(extra)
    return client.chat.completions.create(**kwargs)


# ------------------------------------------------------------------ the session the lesson runs
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


@dataclass
class Step:
    request: int          # which request of the session (1-based)
    tools: int            # how many tools the call offered (the list only grows: run.tools[:tools])
    prompt_tokens: int | None
    cached_tokens: int | None  # None: not reported by the provider
    calls: list           # [(name, args)]
    answer: str | None
    completion: object    # the raw completion, for course.llm.explain


PROVIDER_MAX_CALLS = 8  # replies per request on a provider: a bounded, cheap demonstration


def _arguments(raw: str | None) -> dict:
    """A tool call's arguments as a dict; a model's malformed JSON is kept, not raised."""
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"unparsed arguments": raw}
    return args if isinstance(args, dict) else {"arguments": args}


def session_steps(client, model: str, requests: list[str], messages: list[dict],
                  tools: list[dict], run: ToolRun | None = None, max_calls: int = 12, **extra):
    """The steps of `run_session`, one at a time, as each completion arrives."""
    run = run or ToolRun()
    if run.tools is None:
        run.tools = list(tools)
    for number, request in enumerate(requests, 1):
        messages.append({"role": "user", "content": request})
        for _ in range(max_calls):
            completion = ask(client, model, messages, run.tools, **extra)
            message = completion.choices[0].message
            prompt, cached = usage_of(completion)
            calls = [(c.function.name, _arguments(c.function.arguments))
                     for c in message.tool_calls or ()]
            yield Step(number, len(run.tools), prompt, cached, calls, message.content, completion)
            if not message.tool_calls:
                messages.append({"role": "assistant", "content": message.content})
                break
            messages.append({"role": "assistant", "content": message.content, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in message.tool_calls]})
            for c, (name, args) in zip(message.tool_calls, calls):
                messages.append({"role": "tool", "tool_call_id": c.id, "content": run(name, args)})


def run_session(client, model: str, requests: list[str], messages: list[dict],
                tools: list[dict], run: ToolRun | None = None, max_calls: int = 12,
                **extra) -> list[Step]:
    """Send each request in turn as a user message of one conversation (`messages` grows in
    place), run the tool calls with `run`, and record every completion's usage. When `run`
    holds a tool list (tool search), the next request uses it. At most `max_calls` replies per
    request; `extra` goes into every request."""
    return list(session_steps(client, model, requests, messages, tools, run, max_calls, **extra))


def try_session(client, model: str, requests: list[str], messages: list[dict],
                tools: list[dict], run: ToolRun | None = None,
                max_calls: int = PROVIDER_MAX_CALLS) -> tuple[list[Step], str | None]:
    """`run_session` for a model whose choices are not known in advance (your provider): the
    steps it got through, and the error that stopped it (a refusal with an error status, a
    request the server does not accept), or None. A copy of `messages` is used."""
    import openai

    steps = []
    try:
        for step in session_steps(client, model, requests, copy.deepcopy(messages), tools, run,
                                  max_calls):
            steps.append(step)
    except openai.APIError as exc:
        return steps, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return steps, None


def session_start(catalog_text: str) -> list[dict]:
    """The two messages a session starts from: the system prompt, then the catalogue."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": catalog_text}]


# ------------------------------------------------------------------ what a session did, printed
def step_text(step: Step, width: int = 100) -> str:
    """One reply: its calls with their arguments, or the start of its answer."""
    if step.calls:
        return ", ".join(f"{name}({json.dumps(args)})" for name, args in step.calls)
    answer = " ".join((step.answer or "").split())
    return "answer: " + (answer[:width] + ("..." if len(answer) > width else "") if answer
                         else "(empty)")


def reply_lines(steps: list[Step]) -> str:
    """Every reply of a session, numbered."""
    return "\n".join(f"reply {n}: {step_text(step)}" for n, step in enumerate(steps, 1))


def first_reply(steps: list[Step]) -> str:
    """What a model did first: the calls, or that it answered without calling a tool."""
    if not steps:
        return "first reply: none"
    if steps[0].calls:
        return f"first reply: {steps[0].calls}"
    return f"first reply: no tool call, it answered: {step_text(steps[0], 80)[len('answer: '):]}"


def format_session(requests: list[str], steps: list[Step]) -> str:
    """A session as a table: per request, how many replies and which tools they called."""
    lines = [f"{'#':>2} {'request':<44} {'replies':>7}  calls"]
    for n, request in enumerate(requests, 1):
        mine = [s for s in steps if s.request == n]
        calls = [name for s in mine for name, _ in s.calls]
        lines.append(f"{n:>2} {request[:44]:<44} {len(mine):>7}  {' '.join(calls)}")
    return "\n".join(lines)


def hostile_view(steps: list[Step]) -> str:
    """The calls of the unreviewed-skill session, and whether any of them sent data out."""
    sent = [name for step in steps for name, _ in step.calls if name in SENDING_TOOLS]
    calls = [f"{name}({json.dumps(args)})" for step in steps for name, args in step.calls]
    verdict = (f"it called {', '.join(sent)}: it sent data out as the skill said" if sent else
               "it sent nothing out (no http_post call)")
    return "\n".join(calls + [verdict] if calls else ["it called no tool", verdict])


def provider_demo(chosen, requests: list[str], context: list[dict], tools: list[dict], view,
                  max_calls: int = PROVIDER_MAX_CALLS, **run_args) -> None:
    """Run the same session on the provider among `chosen` (course.llm targets), if there is
    one, and print `view(steps)` under its label: what it did, never checked against the
    teaching model's rules. Without a provider it does nothing."""
    for target in chosen:
        if target.simulated:
            continue
        steps, error = try_session(target.client, target.model, requests, context, tools,
                                   ToolRun(**run_args), max_calls)
        print(f"\n[{target.label}]")
        if steps:
            print(view(steps))
        replies, last = Counter(s.request for s in steps), {s.request: s for s in steps}
        capped = [n for n, step in last.items()
                  if max_calls > 1 and replies[n] == max_calls and step.calls]
        if capped:
            print(f"request(s) {capped} stopped at the cap of {max_calls} replies, still calling tools")
        if error:
            print(f"the provider stopped the session with an error: {error}")


def _build_log(target: str, files: list[str]) -> str:
    lines = [f"-- Configuring {target}", "-- The C compiler identification is GNU 13.2.0",
             "-- Check for working C compiler: /usr/bin/cc - skipped"]
    for i, name in enumerate(files, 1):
        lines.append(f"[{100 * i // len(files):3d}%] Building C object CMakeFiles/{target}.dir/{name}.o")
    lines.append(f"[100%] Linking C static library lib{target}.a")
    lines.append(f"[100%] Built target {target}")
    return "\n".join(lines)


PNG_SOURCES = ["png.c", "pngerror.c", "pngget.c", "pngmem.c", "pngpread.c", "pngread.c",
               "pngrio.c", "pngrtran.c", "pngrutil.c", "pngset.c", "pngtrans.c", "pngwio.c",
               "pngwrite.c", "pngwtran.c", "pngwutil.c", "arm/arm_init.c", "arm/filter_neon_intrinsics.c",
               "arm/palette_neon_intrinsics.c"]


def earlier_work() -> list[dict]:
    """A finished task before the ones the lesson measures: a native libpng build, five tool
    calls with their results (about 2,500 tokens), so that losing the conversation's cache costs
    what it costs in a real session."""
    listing = "\n".join(f"{n:<40} {1000 + 37 * i:>7} bytes" for i, n in enumerate(
        PNG_SOURCES + ["CMakeLists.txt", "README", "LICENSE", "pngtest.c", "pngtest.png",
                       "scripts/pnglibconf.dfa", "tests/pngtest-all", "contrib/tools/pngfix.c"]))
    cmake = "\n".join(f"option(PNG_{flag} \"{text}\" {value})" for flag, text, value in [
        ("SHARED", "Build libpng as a shared library", "ON"),
        ("STATIC", "Build libpng as a static library", "ON"),
        ("TESTS", "Build the libpng tests", "ON"),
        ("TOOLS", "Build the libpng tools", "ON"),
        ("HARDWARE_OPTIMIZATIONS", "Enable hardware optimizations", "ON"),
        ("DEBUG", "Enable debug output", "OFF"),
        ("FRAMEWORK", "Build a macOS framework", "OFF")]) + (
        "\nfind_package(ZLIB REQUIRED)\ninclude_directories(${ZLIB_INCLUDE_DIRS})\n"
        "add_library(png_static STATIC ${libpng_sources})\n"
        "target_link_libraries(png_static PUBLIC ZLIB::ZLIB m)\n") * 3
    tests = "\n".join(f"{i:2d}/{len(PNG_SOURCES)} Test #{i}: pngtest-{n.split('/')[-1][:-2]:<28} Passed "
                      f"{0.01 * (i % 7 + 1):.2f} sec" for i, n in enumerate(PNG_SOURCES, 1))
    steps = [("list_directory", {"path": "."}, listing),
             ("read_file", {"path": "CMakeLists.txt"}, cmake),
             ("run_cmake", {"source_dir": ".", "build_dir": "build"}, _build_log("png_static", PNG_SOURCES[:6])),
             ("run_make", {"build_dir": "build"}, _build_log("png_static", PNG_SOURCES)),
             ("run_tests", {"path": "build"}, tests + "\n100% tests passed, 0 tests failed")]
    messages = [{"role": "user", "content": "Build libpng natively in /workspace/build and run its tests."}]
    for i, (name, args, result) in enumerate(steps):
        messages.append(_call(f"call_w{i}", name, args))
        messages.append({"role": "tool", "tool_call_id": f"call_w{i}", "content": result})
    messages.append({"role": "assistant", "content": "libpng builds natively and all 18 tests pass "
                                                     "(build/libpng_static.a)."})
    return messages


# ------------------------------------------------------------------ where skills go: three placements
PLACEMENTS = {
    "system prompt": "catalogue and loaded bodies in the system prompt (method 1)",
    "file in the middle": "catalogue in the system prompt, body read with read_file (method 2)",
    "catalogue at the end": "catalogue appended as a message, body as a load_skill result (method 3)",
}


def _call(call_id: str, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}]}


def placement_requests(placement: str, skills: list[Skill], loaded: Skill, installed: Skill,
                       requests: tuple[str, str]) -> list[tuple[str, list[dict]]]:
    """The scripted session for one placement: (label, messages) of the requests to send.

    Request 1 starts a task without a skill (the conversation then holds its five tool calls,
    `earlier_work`); request 2 asks for work `loaded` fits; request 3 is sent after its body
    arrived; then `installed` is added to the catalogue mid-session and
    request 4 asks for something else. The assistant's turns are scripted, so the three
    placements send the same conversation and differ only in where the skill text sits.
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}: one of {list(PLACEMENTS)}")
    before = [s for s in skills if s.name != installed.name]
    catalog_before = build_catalog(before, CATALOG_BUDGET).text
    catalog_after = build_catalog(before + [installed], CATALOG_BUDGET).text
    second, third = requests
    work = earlier_work()
    system = SYSTEM_PROMPT
    head = []
    if placement == "catalogue at the end":
        head = [{"role": "user", "content": catalog_before}]
    else:
        system = SYSTEM_PROMPT + "\n" + catalog_before
    out = [("1 a task without a skill", [{"role": "system", "content": system}] + head + work[:1])]
    convo = head + work + [{"role": "user", "content": second}]
    out.append(("2 a task a skill fits", [{"role": "system", "content": system}] + convo))
    if placement == "system prompt":
        system = system + "\n\n" + skill_result_text(loaded)
        convo += [_call("call_load", "load_skill", {"name": loaded.name}),
                  {"role": "tool", "tool_call_id": "call_load",
                   "content": f"skill {loaded.name} is now in the system prompt"}]
    elif placement == "file in the middle":
        convo += [_call("call_load", "read_file", {"path": f"skills/{loaded.name}/SKILL.md"}),
                  {"role": "tool", "tool_call_id": "call_load", "content": skill_result_text(loaded)}]
    else:
        convo += [_call("call_load", "load_skill", {"name": loaded.name}),
                  {"role": "tool", "tool_call_id": "call_load", "content": skill_result_text(loaded)}]
    out.append(("3 after the skill loaded", [{"role": "system", "content": system}] + convo))
    convo = convo + [{"role": "assistant", "content": f"Done, following {loaded.name}."}]
    if placement == "catalogue at the end":
        convo += [{"role": "user", "content": catalog_after}]
    else:
        system = system.replace(catalog_before, catalog_after)
    convo += [{"role": "user", "content": third}]
    out.append(("4 after a skill was installed", [{"role": "system", "content": system}] + convo))
    return out


REPLY_TOKENS = 64  # a measurement reads the prompt's usage: the reply itself is not needed


def measure_placement(client, model: str, placement: str, skills: list[Skill], loaded: Skill,
                      installed: Skill, requests: tuple[str, str],
                      tools: list[dict]) -> list[dict]:
    """Send the placement's scripted requests; one row per request with its usage (a cached
    figure the provider does not report is None)."""
    rows = []
    for label, messages in placement_requests(placement, skills, loaded, installed, requests):
        prompt, cached = usage_of(ask(client, model, messages, tools, tool_choice="none",
                                      max_completion_tokens=REPLY_TOKENS))
        rows.append({"placement": placement, "request": label, "prompt_tokens": prompt,
                     "cached_tokens": cached})
    return rows


def _figure(value: int | None, width: int) -> str:
    return f"{value:>{width},}" if value is not None else f"{'n/r':>{width}}"


def _of(cached: int | None, prompt: int | None, cached_width: int = 8) -> str:
    """"cached of prompt" for a table; n/r where the provider did not report a figure."""
    return f"{_figure(cached, cached_width)} of {_figure(prompt, 6)}"


def _uncached(rows: list[dict]) -> int | None:
    if any(r["cached_tokens"] is None or r["prompt_tokens"] is None for r in rows):
        return None
    return sum(r["prompt_tokens"] - r["cached_tokens"] for r in rows)


def _not_reported_note(rows) -> list[str]:
    return ([f"n/r: {NOT_REPORTED}"] if any(r["cached_tokens"] is None or r["prompt_tokens"] is None
                                            for r in rows) else [])


def format_placements(rows_by_placement: dict[str, list[dict]]) -> str:
    """The placements side by side (cached of prompt tokens per request), then what each
    placement computed afresh over its requests."""
    placements = list(rows_by_placement)
    labels = [r["request"] for r in rows_by_placement[placements[0]]]
    lines = [f"{'request':<32}" + "".join(f"{p:>24}" for p in placements)]
    for i, label in enumerate(labels):
        lines.append(f"{label:<32}" + "".join(
            f"{_of(rows[i]['cached_tokens'], rows[i]['prompt_tokens'], 11)}    "
            for rows in rows_by_placement.values()))
    for placement, rows in rows_by_placement.items():
        lines.append(f"{placement:<22} tokens computed afresh over the {len(rows)} requests: "
                     f"{describe(_uncached(rows))}")
    return "\n".join(lines + _not_reported_note(
        [r for rows in rows_by_placement.values() for r in rows]))


# ------------------------------------------------------------------ what a tool-list change does
TOOL_CHANGES = {
    "unchanged": "the same tools in the same order",
    "appended": "one tool added at the end (add_tools)",
    "reordered": "the same tools, sorted by name (a registry rebuilt from a set)",
    "removed": "one unused tool taken out of the middle",
    "masked": "the same tools; tool_choice limits the call to one of them",
}


def changed_tools(change: str, tools: list[dict], extra: dict, request: str):
    """(tools, extra request arguments) of the second request under `change`."""
    if change == "unchanged":
        return tools, {}
    if change == "appended":
        return add_tools(tools, [extra]), {}
    if change == "reordered":
        return sorted(tools, key=lambda t: t["function"]["name"]), {}
    if change == "removed":
        middle = len(tools) // 2
        return tools[:middle] + tools[middle + 1:], {}
    if change == "masked":
        name = tools[0]["function"]["name"]
        return tools, {"tool_choice": {"type": "function", "function": {"name": name}}}
    raise ValueError(f"unknown change {change!r}: one of {list(TOOL_CHANGES)}")


def measure_tool_change(client, model: str, change: str, tools: list[dict], extra: dict,
                        messages: list[dict], request: str) -> dict:
    """Warm the cache with `messages` and `tools`, then send one more turn with the tool list
    changed; the second request's usage, and the third's with the same (changed) list (a
    cached figure the provider does not report is None)."""
    short = {"tool_choice": "none", "max_completion_tokens": REPLY_TOKENS}
    ask(client, model, messages, tools, **short)
    after = messages + [{"role": "assistant", "content": "Noted."},
                        {"role": "user", "content": request}]
    new_tools, extra_args = changed_tools(change, tools, extra, request)
    prompt, cached = usage_of(ask(client, model, after, new_tools, **(short | extra_args)))
    again = after + [{"role": "assistant", "content": "Working on it."},
                     {"role": "user", "content": "Go on."}]
    prompt3, cached3 = usage_of(ask(client, model, again, new_tools, **(short | extra_args)))
    return {"change": change, "tools": len(new_tools), "prompt_tokens": prompt,
            "cached_tokens": cached, "next_prompt_tokens": prompt3, "next_cached_tokens": cached3}


def format_tool_changes(rows: list[dict]) -> str:
    """One line per change: the next request's cached tokens, and the one after's."""
    lines = [f"{'change':<10} {'the next request':>22} {'and the one after':>22}   what changed"]
    for r in rows:
        lines.append(f"{r['change']:<10} {_of(r['cached_tokens'], r['prompt_tokens'])} cached "
                     f"{_of(r['next_cached_tokens'], r['next_prompt_tokens'])} cached   "
                     f"{TOOL_CHANGES[r['change']]}")
    return "\n".join(lines + _not_reported_note(rows))


# ------------------------------------------------------------------ preload or load on demand
SESSION = (
    # (request, the skill it needs, the sub-documents its steps read)
    ("Why did the CI build fail on main? The failed job is job-4711.", "ci-triage", ()),
    ("What is the weather in Vancouver?", None, ()),
    ("Make a slide deck from the paper inbox/paper.pdf.", "slides-from-paper", ("html-to-slides.md",)),
    ("Write a short report of the sales export with totals per region and a chart.", "csv-report", ()),
    ("What time is it in Tokyo?", None, ()),
    ("Prepare the release notes for the next version from the commits since the last tag.",
     "release-notes", ()),
)


def preload_text(folder: Path = SKILLS_DIR) -> str:
    """Everything every skill holds, as one block: what preloading puts in each request."""
    parts = []
    for skill in course_skills(folder):
        parts.append(skill_result_text(skill))
        parts += [f"## {skill.name}/{f}\n{read_skill_file(folder, skill.name, f)}"
                  for f in skill_files(skill.name, folder)]
    return "\n".join(parts)


def preload_vs_progressive(uses, folder: Path = SKILLS_DIR) -> list[dict]:
    """Skill tokens each request carries, request by request, under both designs.

    `uses` is one (skill or None, sub-documents read) per request. Preloading carries every
    body and sub-document in every request. Progressive loading carries the catalogue, plus
    each body and sub-document from the request that loaded it on (a tool result stays in the
    history)."""
    skills = {s.name: s for s in course_skills(folder)}
    preload = count_tokens(preload_text(folder))
    carried = build_catalog(skills.values(), CATALOG_BUDGET).tokens
    seen, rows = set(), []
    for number, (name, files) in enumerate(uses, 1):
        if name and name not in seen:
            seen.add(name)
            carried += count_tokens(skill_result_text(skills[name]))
        for f in files:
            if (name, f) not in seen:
                seen.add((name, f))
                carried += count_tokens(read_skill_file(folder, name, f))
        rows.append({"request": number, "skill": name or "-", "preload": preload,
                     "progressive": carried})
    return rows


def tool_loading_rows(catalogue: list[dict], found_per_request, base: list[dict]) -> list[dict]:
    """Tool tokens each request carries: every schema preloaded, or `base` + tool_search and
    the tools found so far (appended once, kept)."""
    preload = tools_tokens(base + [t for t in catalogue if t not in base])
    tools, rows = base + [TOOL_SEARCH_TOOL], []
    for number, found in enumerate(found_per_request, 1):
        tools = add_tools(tools, found)
        rows.append({"request": number, "preload": preload, "deferred": tools_tokens(tools),
                     "tools": len(tools)})
    return rows


# ------------------------------------------------------------------ the cache, predicted offline
def predicted_cached(earlier: list[list[int]], ids: list[int]) -> int:
    """Cached tokens a prefix cache reports for `ids` after the requests `earlier`: the longest
    shared prefix, rounded down to 128-token blocks, 0 below 1,024 tokens (OpenAI's rules, also
    the teaching model's) — chapter 05's prediction, applied here."""
    return expected_cached_tokens(earlier, ids, OPENAI_RULES)


# ------------------------------------------------------------------ routing in the harness
def route_skills(request: str, skills: list[Skill], limit: int = 1) -> list[tuple[float, str]]:
    """The harness's own guess at the skills a request needs: BM25 over names and descriptions
    (the worked answers' remedy 2 for thinking question 7, with keywords instead of
    embeddings). Best first; empty when no word matches."""
    as_tools = [{"function": {"name": s.name, "description": s.description}} for s in skills]
    return [(score, tool["function"]["name"]) for score, tool in search_tools(request, as_tools, limit)]


def routing_hint(request: str, skills: list[Skill], limit: int = 1) -> str | None:
    """A note the harness appends to the user's message, naming the skills it routed to."""
    routed = route_skills(request, skills, limit)
    if not routed:
        return None
    by_name = {s.name: s for s in skills}
    lines = [f"- {name}: {by_name[name].description}" for _, name in routed]
    return "(The harness suggests a skill that may fit this request:\n" + "\n".join(lines) + ")"
