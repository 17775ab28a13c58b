"""Chapter 15's givens: what lab 15 hands the student and the answers build on, no answer among
them (lab 15 asks for `digest`, `run_children`, `cache_variants`, `move_after_boundary` and
`filter_in_sandbox`).

    counting      count_tokens (exact o200k_base tokens of a text, the runtime's counter)
    sub-agents    CHILD_TASKS (three independent searches of chapter 11's repository),
                  search_world (their tools' deterministic results), STATUSES (what a child
                  reports), BUDGET_KEYS (what a child's budget may bound), TRANSCRIPTS_DIR
    cache keys    BOUNDARY (the cache-boundary marker), PROMPT_FRAGMENTS (chapter 11's
                  system prompt as fragments, with three switches among them), render_prompt
    the sandbox   big_log (writes the lesson's large log into a folder), LAB_LOGS (the lab's
                  small copy, a folder of the repository)

A fragment is a plain dict: {"name": str, "texts": [str, ...]}: one text for a static fragment,
two or more for a dynamic one (a switch, a date, a user's plan); the boundary is the fragment
{"name": "boundary", "texts": [BOUNDARY]}.

The answers (`solutions.architecture`) re-export them.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from course.givens.production_compaction import load_run
from course.paths import DATA_DIR
from course.tokenizer import count_tokens  # noqa: F401 (given to the lab)

TRANSCRIPTS_DIR = ".agent/subagents"   # where a child's full transcript is saved
STATUSES = ("done", "budget", "failed")
BUDGET_KEYS = ("requests", "prompt_tokens")

# Three independent searches in chapter 11's repository (ledgerline); each is one ask, so the
# teaching model calls one tool for it and answers from the result.
CHILD_TASKS: list[str] = [
    "Search the code for commit_offset and list its callers.",
    "Search the code for flush_batch and list its callers.",
    "Search the code for retry_limit: where is it set?",
]

_MODULES = ("ingest/reader.py", "ingest/batch.py", "ingest/offsets.py", "jobs/nightly.py",
            "jobs/backfill.py", "store/ledger.py", "store/pg.py", "config/loader.py",
            "metrics/exporter.py", "util/clock.py", "api/auth.py", "ingest/stream.py")
_WORDS = ("cursor", "batch", "ledger", "partition", "flush", "window", "checkpoint", "record",
          "writer", "reader", "topic", "drain")
IDENTIFIER = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")


def _rnd(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16)


def _matches(name: str) -> str:
    """search_code's result for an identifier: 40 matching lines, the same every run."""
    lines = []
    for k in range(40):
        h = _rnd(f"{name}:{k}")
        module = _MODULES[h % len(_MODULES)]
        line = 20 + (h >> 8) % 380
        a, b = _WORDS[(h >> 16) % len(_WORDS)], _WORDS[(h >> 20) % len(_WORDS)]
        lines.append(f"src/ledgerline/{module}:{line}:    {a} = {name}({b}, {a}_{b}_state)  "
                     f"# {b} handling for the {a} path")
    return f"found {len(lines)} matches for '{name}':\n" + "\n".join(lines)


def search_world(name: str, arguments: dict) -> str:
    """The result of a call in the children's repository (deterministic): `search_code` lists
    40 matches of the first identifier (a word_with_underscores) in its query; `read_file`
    returns 120 lines of the file; `run_command` reports a passing test run. Any other tool's
    call is an error result."""
    if name == "search_code":
        query = str(arguments.get("query", ""))
        found = IDENTIFIER.findall(query)
        return _matches(found[0]) if found else f"no matches for {query!r}"
    if name == "read_file":
        path = str(arguments.get("path", "")) or "README.md"
        return "\n".join(f"{path}:{n}: " + " ".join(_WORDS[(_rnd(f'{path}{n}{i}')) % 12]
                                                      for i in range(8)) for n in range(1, 121))
    if name == "run_command":
        return "....................................\n36 passed in 4.12s\n[exit code: 0]"
    return json.dumps({"error": f"unknown tool {name}"})


# ------------------------------------------------------------------ cache keys
BOUNDARY = "<!-- cache boundary: nothing above this line changes within a session -->"

_ROLE, _RULES = load_run().system.split("\n\n", 1)  # chapter 11's system prompt: role, then rules
PROMPT_FRAGMENTS: list[dict] = [
    {"name": "role", "texts": [_ROLE]},
    {"name": "date", "texts": ["Today is 2026-03-14.", "Today is 2026-03-15."]},
    {"name": "plan", "texts": ["The user is on the Team plan: up to 8 parallel jobs.",
                               "The user is on the Free plan: one job at a time."]},
    {"name": "rules", "texts": [_RULES]},
    {"name": "verbose", "texts": ["Explain each step in detail.", "Be brief."]},
    {"name": "tools guide", "texts": [
        "Tools: search_code finds a pattern; read_file reads a file; run_command runs a command "
        "line in the repository; write_file replaces a file. Batch independent calls in one "
        "reply. Use read_file at least once before write_file on the same path."]},
]


def render_prompt(fragments: list[dict], choice: dict | None = None) -> str:
    """The system prompt a scheme gives for one choice: each fragment's chosen text (`choice`
    maps a fragment's name to the index of its text; 0 when not named), joined by blank lines."""
    choice = choice or {}
    return "\n\n".join(f["texts"][choice.get(f["name"], 0)] for f in fragments)


# ------------------------------------------------------------------ the big log
LOG_NAME = "api-2026-03-14.log"


LAB_LOGS = DATA_DIR / "architecture"   # the lab's workspace: big_log(LAB_LOGS, 0.25, every=97)


def big_log(folder, megabytes: float = 50.0, every: int = 20_011) -> Path:
    """Write the lesson's API log into `folder`: about `megabytes` MB of request lines, of
    which one in `every` is an HTTP 500 on /v1/payouts; the same bytes every time. Returns the
    file's path. (The lab's small copy is committed under LAB_LOGS, which the confined worker
    of a graded lab can read; tests/solutions/test_architecture.py checks it is this output.)"""
    path = Path(folder) / LOG_NAME
    target = int(megabytes * 1_000_000)
    ok = ("2026-03-14T{h:02d}:{m:02d}:{s:02d}Z GET /v1/ledger/{n} status=200 ms={ms} "
          "client=web-{c}\n")
    with open(path, "w", encoding="utf-8") as out:
        n, written = 0, 0
        chunk = []
        while written < target:
            h, rest = divmod(n // 7, 3600)
            m, s = divmod(rest, 60)
            if n % every == 5_000 % every:
                line = (f"2026-03-14T{h % 24:02d}:{m:02d}:{s:02d}Z POST /v1/payouts/{n} status=500 "
                        f"ms={900 + n % 97} error=ledger_lock_timeout\n")
            else:
                line = ok.format(h=h % 24, m=m, s=s, n=n, ms=5 + n % 83, c=n % 9)
            chunk.append(line)
            written += len(line)
            n += 1
            if len(chunk) >= 10_000:
                out.write("".join(chunk))
                chunk = []
        out.write("".join(chunk))
    return path
