"""Write run.json: the long replayed agent run of Chapter 11 (deterministic; run it again to
rebuild the file byte for byte).

    .venv/bin/python data/production_compaction/make_run.py

The run: an agent fixes a flaky ingestion job in a made-up Python service, `ledgerline`
(ticket LED-4127). It has 200+ steps; each step is one assistant message (a sentence, often a
decision, and one or two tool calls) followed by the tool results. Builds with long progress
output, code searches with many matches, file reads, failures, decisions with their reasons,
todos, file writes. Facts the probes ask about are planted at known steps; everything else is
filler that looks like work (that is what makes compaction hard: the filler is most of it).

Written for the course; no part of it comes from a real project.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = 212
SEED = 2026

MODULES = ["ingest/stream.py", "ingest/offsets.py", "ingest/reader.py", "ingest/batch.py",
           "ingest/schema.py", "ingest/retry.py", "store/ledger.py", "store/pg.py",
           "api/routes.py", "api/auth.py", "jobs/nightly.py", "jobs/backfill.py",
           "util/clock.py", "util/ids.py", "metrics/exporter.py", "config/loader.py"]
SYSTEM = (
    "You are a coding agent working in the repository ledgerline (a payments ingestion service). "
    "Constraints: never edit anything under vendor/; keep the public API of "
    "ledgerline.ingest unchanged; every change must pass `pytest -q` before you report done. "
    "Use the tools; read files again when you need their contents.\n\nWorking rules:\n" + "\n".join(
        f"{i}. {rule}" for i, rule in enumerate([
            "Read a file before you change it, and change only what the task needs.",
            "Run the narrowest test that shows the problem before the whole suite.",
            "When a command fails, read its error before trying anything else.",
            "Do not retry a failed command unchanged; change one thing and say what.",
            "Write down every decision with its reason in one sentence.",
            "Write down every todo you leave behind, with the ticket it belongs to.",
            "Keep a rollback note for every dependency change.",
            "Never push, tag or publish; the maintainers do that.",
            "Never print secrets, tokens or connection strings with passwords.",
            "Prefer the standard library; add a dependency only with a reason.",
            "Keep functions short; a new helper goes next to its only caller.",
            "Log with the module's logger, never print.",
            "Use the repository's formatter settings (ruff, line length 100).",
            "Type-annotate new functions; run mypy on the files you changed.",
            "Tests go under tests/ mirroring src/; fixtures under tests/fixtures/.",
            "A flaky test is a bug: find out why before you skip it, and file a ticket if you must.",
            "Database access goes through ledgerline.store; never open a connection elsewhere.",
            "Time comes from ledgerline.util.clock so tests can freeze it.",
            "Identifiers (record ids, offsets, partition numbers) are logged whole, never cut.",
            "Configuration is read once at start-up by ledgerline.config.loader.",
            "Large outputs: look at the end first (errors and summaries live there).",
            "Staging is shared: announce in #ingest-oncall before you run jobs against it.",
            "Summaries of your work name every file you changed and every test you ran.",
            "If you are unsure, stop and ask rather than guess.",
        ], 1)) + "\n\n" + "\n".join(
        f"Module map: src/ledgerline/{m} — owned by team {['ingest', 'storage', 'api', 'jobs'][i % 4]}, "
        f"reviewed by {['ana', 'bo', 'chen', 'dara'][i % 4]}; tests in tests/{m.replace('.py', '')}/."
        for i, m in enumerate(MODULES)))
TASK = ("Ticket LED-4127: the nightly ingest job drops or duplicates one record after a restart "
        "(CI run ci-run-88213 on commit 9c4e2b7d failed in tests/ingest/test_stream.py). Find the "
        "cause, fix it, and leave the tests green.")


def tool(name, description, params):
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {
            p: {"type": "string", "description": d} for p, d in params.items()},
            "required": list(params)}}}


TOOLS = [
    tool("read_file", "Read a text file of the repository and return its contents.",
         {"path": "Path of the file, relative to the repository root"}),
    tool("run_command", "Run a shell command in the repository and return its output and exit code.",
         {"command": "The command line to run"}),
    tool("search_code", "Search the code base for a pattern; returns matching lines.",
         {"query": "The pattern to look for"}),
    tool("write_file", "Write (create or replace) a file of the repository.",
         {"path": "Path of the file", "content": "The new contents"}),
]

WORDS = ["record", "batch", "offset", "cursor", "ledger", "flush", "drain", "commit", "retry",
         "schema", "partition", "checkpoint", "window", "reader", "writer", "topic", "key"]


class Writer:
    def __init__(self):
        self.rng = random.Random(SEED)
        self.steps: list[dict] = []
        self.calls = 0

    # ------------------------------------------------------------------ content makers
    def code(self, path: str, lines: int, first: list[str] = ()) -> str:
        rng = self.rng
        out = [f'"""{path}: part of ledgerline."""', *first]
        for i in range(lines):
            w1, w2 = rng.choice(WORDS), rng.choice(WORDS)
            kind = rng.random()
            if kind < 0.25:
                out.append(f"def {w1}_{w2}_{i}(self, {w2}):")
            elif kind < 0.5:
                out.append(f"    {w1} = self._{w2}.get({w1}_id)  # {w2} for this {w1}")
            elif kind < 0.75:
                out.append(f"    if {w1} is None:\n        return self._{w2}_{i}()")
            else:
                out.append(f"    log.debug('{w1} %s {w2} %s', {w1}, {w2})")
        return "\n".join(out)

    def build_log(self, ok: bool, tail: list[str], lines: int) -> str:
        rng = self.rng
        out = ["$ make -C build all", "-- Configuring ledgerline-native 0.9.3"]
        for i in range(lines):
            pct = int(100 * i / lines)
            if rng.random() < 0.6:
                out.append(f"[{pct:3d}%] Building C object native/CMakeFiles/lnative.dir/"
                           f"src/{rng.choice(WORDS)}_{i}.c.o")
            else:
                out.append(f"Downloading {rng.choice(WORDS)}-{rng.randint(1, 9)}.{rng.randint(0, 20)}"
                           f".{rng.randint(0, 9)}.tar.gz ━━━━━━━━━━━━━━━━ {rng.randint(1, 90)}.{rng.randint(0, 9)} MB/s")
        out.extend(tail)
        out.append("[exit code: 0]" if ok else "[exit code: 2]")
        return "\n".join(out)

    def pytest_log(self, passed: int, failing: list[str], lines: int) -> str:
        rng = self.rng
        out = ["$ pytest -q", "============================= test session starts =============================="]
        for i in range(lines):
            out.append(f"tests/{rng.choice(MODULES).replace('.py', '')}/test_{rng.choice(WORDS)}_{i}.py::"
                       f"test_{rng.choice(WORDS)}_{rng.choice(WORDS)} PASSED"
                       f"{' ' * rng.randint(1, 6)}[{min(99, int(100 * i / lines)):3d}%]")
        out.extend(failing)
        verdict = f"{len(failing)} failed, " if failing else ""
        out.append(f"========== {verdict}{passed} passed, 1 skipped in {rng.randint(20, 90)}.{rng.randint(10, 99)}s ==========")
        out.append(f"[exit code: {1 if failing else 0}]")
        return "\n".join(out)

    def search_out(self, query: str, hits: int) -> str:
        rng = self.rng
        out = [f"found {hits} matches for {query!r}:"]
        for _ in range(hits):
            mod = rng.choice(MODULES)
            out.append(f"src/ledgerline/{mod}:{rng.randint(10, 400)}:    {rng.choice(WORDS)} = "
                       f"{query}({rng.choice(WORDS)}, {rng.choice(WORDS)})")
        return "\n".join(out)

    # ------------------------------------------------------------------ steps
    def step(self, text: str, calls: list[tuple[str, dict, str]]) -> None:
        n = len(self.steps) + 1
        tool_calls, results = [], []
        for k, (name, args, output) in enumerate(calls):
            cid = f"call_{n:03d}_{k}"
            tool_calls.append({"id": cid, "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args)}})
            results.append({"role": "tool", "tool_call_id": cid, "content": output})
        assistant = {"role": "assistant", "content": text}
        if tool_calls:
            assistant["tool_calls"] = tool_calls
        self.steps.append({"step": n, "messages": [assistant, *results]})

    def filler(self) -> None:
        rng = self.rng
        kind = rng.random()
        mod = rng.choice(MODULES)
        if kind < 0.35:
            self.step(f"Reading src/ledgerline/{mod} for how it handles a {rng.choice(WORDS)}.",
                      [("read_file", {"path": f"src/ledgerline/{mod}"},
                        self.code(mod, rng.randint(20, 70)))])
        elif kind < 0.6:
            q = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
            self.step(f"Searching for {q} to see who calls it.",
                      [("search_code", {"query": q}, self.search_out(q, rng.randint(5, 60)))])
        elif kind < 0.75:
            self.step("Building the native extension again to be sure nothing else broke.",
                      [("run_command", {"command": "make -C build all"},
                        self.build_log(True, ["[100%] Built target lnative"], rng.randint(60, 260)))])
        elif kind < 0.9:
            test = f"tests/{mod.replace('.py', '')}"
            self.step(f"Running {test} on its own.",
                      [("run_command", {"command": f"pytest -q {test}"},
                        self.pytest_log(rng.randint(5, 40), [], rng.randint(5, 30)))])
        else:
            self.step(f"Checking git history of src/ledgerline/{mod}.",
                      [("run_command", {"command": f"git log --oneline -5 -- src/ledgerline/{mod}"},
                        "\n".join(f"{rng.getrandbits(28):07x} {rng.choice(WORDS)}: "
                                  f"tidy {rng.choice(WORDS)} handling" for _ in range(5))
                        + "\n[exit code: 0]")])


OFFSETS_V1 = ["OFFSET_COMMIT_MODE = 'eager'  # commit as soon as a record is read",
              "DRAIN_TIMEOUT_S = 30"]
RUNBOOK = ("# Ingest runbook\n\nRestart the nightly job with `ledgerline jobs nightly --resume`.\n"
           "The drain timeout is 45s since LED-4127; before that it was 30s.\n"
           "Page #ingest-oncall if two nights fail in a row.\n")
CONFIG = ("[ingest]\ntopic = \"payments.v3\"\npartition_count = 12\ncheckpoint_store = "
          "\"pg://ledger-checkpoints\"\nbatch_size = 500\n")


# The planted facts, by step: (kind, maker). Filler everywhere else.
def plan(w: Writer) -> dict[int, callable]:
    return {
        2: lambda: w.step("Reading the failing CI run first.", [("run_command", {
            "command": "ci logs ci-run-88213 --job ingest-tests"},
            w.pytest_log(211, ["FAILED tests/ingest/test_stream.py::test_stream_resume - "
                               "AssertionError: offset 4096 != 4097"], 120))]),
        5: lambda: w.step("Reading the offsets module.", [("read_file", {
            "path": "src/ledgerline/ingest/offsets.py"}, w.code("ingest/offsets.py", 40, OFFSETS_V1))]),
        9: lambda: w.step("Reading the ingest configuration.", [("read_file", {
            "path": "config/ingest.toml"}, CONFIG)]),
        14: lambda: w.step("Regenerating the gRPC stubs.", [("run_command", {
            "command": "python -m grpc_tools.protoc -I proto --python_out=src proto/ledger.proto"},
            "Traceback (most recent call last):\n  File \"src/ledgerline/proto/ledger_pb2.py\", line 5\n"
            "ImportError: cannot import name 'runtime_version' from 'google.protobuf'\n[exit code: 1]")]),
        18: lambda: w.step("Trying the newest protobuf.", [("run_command", {
            "command": "pip install --no-deps protobuf==5.26.1"},
            "ERROR: grpcio-tools 1.62.1 requires protobuf<5.0dev,>=4.21.6, but you have protobuf 5.26.1\n"
            "[exit code: 1]")]),
        21: lambda: w.step("Decision: pin protobuf to 4.25.3, because grpcio-tools 1.62.1 generates "
                           "stubs that import runtime_version (4.24 lacks it) and refuses protobuf 5.",
                           [("write_file", {"path": "requirements.lock", "content":
                                            "grpcio-tools==1.62.1\nprotobuf==4.25.3\n"}, "wrote requirements.lock (2 lines)")]),
        30: lambda: w.step("Running the failing test alone.", [("run_command", {
            "command": "pytest -q tests/ingest/test_stream.py -k resume"},
            w.pytest_log(0, ["FAILED tests/ingest/test_stream.py::test_stream_resume - "
                             "AssertionError: offset 4096 != 4097"], 3))]),
        38: lambda: w.step("Trying a longer drain timeout first (cheap to test).", [("run_command", {
            "command": "LEDGERLINE_DRAIN_TIMEOUT_S=60 pytest -q tests/ingest/test_stream.py -k resume"},
            w.pytest_log(0, ["FAILED tests/ingest/test_stream.py::test_stream_resume - "
                             "AssertionError: offset 4096 != 4097"], 3))]),
        39: lambda: w.step("The longer timeout did not help: the failure is not a timing problem. "
                           "Rollback note: if the fix misbehaves, revert 9c4e2b7d and restore "
                           "requirements.lock from the tag ledgerline-deps-2026.11.", []),
        55: lambda: w.step("Found it. Root cause: the reader commits the offset before the batch is "
                           "flushed (commit_offset is called in _drain before flush_batch), so a "
                           "restart between the two skips one record.",
                           [("search_code", {"query": "commit_offset"}, w.search_out("commit_offset", 24))]),
        60: lambda: w.step("Fixing the order: flush first, then commit.", [("write_file", {
            "path": "src/ledgerline/ingest/offsets.py", "content": "OFFSET_COMMIT_MODE = 'after_flush'\n"},
            "wrote src/ledgerline/ingest/offsets.py (1 line changed)")]),
        61: lambda: w.step("TODO: re-enable test_stream_resume in tests/ingest/test_stream.py once the "
                           "offset fix is reviewed (ticket LED-4131); it is marked skip for now.",
                           [("write_file", {"path": "tests/ingest/test_stream.py", "content": "# skip marker"},
                             "wrote tests/ingest/test_stream.py (1 line changed)")]),
        90: lambda: w.step("Moving the flush into the stream loop.", [("write_file", {
            "path": "src/ledgerline/ingest/stream.py", "content": "flush_batch(); commit_offset()\n"},
            "wrote src/ledgerline/ingest/stream.py (12 lines changed)")]),
        120: lambda: w.step("Trying to re-run the backfill job against staging.", [("run_command", {
            "command": "ledgerline jobs backfill --env staging --since 2026-11-01"},
            "error: connection refused: pg://ledger-checkpoints (staging is read-only on weekends)\n"
            "[exit code: 3]")]),
        121: lambda: w.step("Decision: skip the staging backfill and test with the local fixture "
                            "tests/fixtures/restart_mid_batch.jsonl instead, because staging is "
                            "read-only on weekends.", []),
        150: lambda: w.step("Reading the runbook to update it.", [("read_file", {
            "path": "docs/runbook/ingest.md"}, RUNBOOK)]),
        151: lambda: w.step("Updating the runbook for the new drain timeout.", [("write_file", {
            "path": "docs/runbook/ingest.md", "content": RUNBOOK},
            "wrote docs/runbook/ingest.md (1 line changed)")]),
        200: lambda: w.step("Full test run.", [("run_command", {"command": "pytest -q"},
                                                w.pytest_log(212, [], 200))]),
        201: lambda: w.step("Verified: 212 passed, 1 skipped (test_stream_resume, see LED-4131).", []),
    }


# The probes: what the agent must still know at the end. `ask` probes are put to the teaching
# model (it reads the file again if the result is not visible); `visible` probes are answered
# if every expected string is in the context the agent sends.
PROBES = [
    {"id": "ci_run", "kind": "identifier", "how": "visible",
     "question": "Which CI run and commit failed?", "expect": ["ci-run-88213", "9c4e2b7d"]},
    {"id": "failing_test", "kind": "identifier", "how": "visible",
     "question": "What exactly failed?", "expect": ["test_stream_resume", "offset 4096 != 4097"]},
    {"id": "pin_decision", "kind": "decision", "how": "visible",
     "question": "Which protobuf did we pin?", "expect": ["protobuf==4.25.3"]},
    {"id": "pin_reason", "kind": "reason", "how": "visible",
     "question": "Why that version?", "expect": ["runtime_version", "grpcio-tools 1.62.1"]},
    {"id": "failed_upgrade", "kind": "failed attempt", "how": "visible",
     "question": "What happened with protobuf 5?", "expect": ["protobuf<5.0dev"]},
    {"id": "failed_timeout", "kind": "failed attempt", "how": "visible",
     "question": "Did a longer drain timeout help?", "expect": ["LEDGERLINE_DRAIN_TIMEOUT_S=60"]},
    {"id": "root_cause", "kind": "decision", "how": "visible",
     "question": "What was the root cause?", "expect": ["commit_offset", "flush_batch"]},
    {"id": "open_todo", "kind": "open todo", "how": "visible",
     "question": "What is left to do?", "expect": ["LED-4131", "re-enable test_stream_resume"]},
    {"id": "rollback", "kind": "rollback note", "how": "visible",
     "question": "How do we roll back?", "expect": ["ledgerline-deps-2026.11"]},
    {"id": "staging_decision", "kind": "decision", "how": "visible",
     "question": "Why no staging backfill?", "expect": ["restart_mid_batch.jsonl", "read-only"]},
    {"id": "modified_files", "kind": "modified files", "how": "visible",
     "question": "Which files were changed?",
     "expect": ["requirements.lock", "src/ledgerline/ingest/offsets.py",
                "src/ledgerline/ingest/stream.py", "docs/runbook/ingest.md"]},
    {"id": "verified", "kind": "verification", "how": "visible",
     "question": "What is the test status?", "expect": ["212 passed"]},
    {"id": "constraint", "kind": "constraint", "how": "visible",
     "question": "What must we never touch?", "expect": ["vendor/"]},
    {"id": "read_offsets", "kind": "file contents", "how": "ask",
     "question": "Read the file src/ledgerline/ingest/offsets.py: what is OFFSET_COMMIT_MODE?",
     "expect": ["OFFSET_COMMIT_MODE"]},
    {"id": "read_config", "kind": "file contents", "how": "ask",
     "question": "Read the file config/ingest.toml: what is the partition_count?",
     "expect": ["partition_count = 12"]},
    {"id": "read_runbook", "kind": "file contents", "how": "ask",
     "question": "Read the file docs/runbook/ingest.md: what is the drain timeout?",
     "expect": ["45s"]},
]

# The search-heavy sub-task the lesson delegates (or runs inline): where is the offset committed?
SUBTASK = {
    "at": 40,  # steps 41..54 of the run are this search; the lesson compares the two ways
    "steps": 14,
    "task": "Find every place that commits an ingest offset, and say which one runs before the "
            "batch is flushed. Report paths with line numbers.",
    "answer": "commit_offset is called in src/ledgerline/ingest/reader.py:212 (_drain) before "
              "flush_batch at src/ledgerline/ingest/batch.py:88; the other two callers "
              "(src/ledgerline/jobs/backfill.py:61, src/ledgerline/store/ledger.py:140) commit "
              "after a flush.",
}


def build() -> dict:
    w = Writer()
    planted = plan(w)
    sub = range(SUBTASK["at"] + 1, SUBTASK["at"] + 1 + SUBTASK["steps"])
    while len(w.steps) < STEPS:
        n = len(w.steps) + 1
        if n in planted:
            planted[n]()
        elif n in sub:
            q = ["commit_offset", "flush_batch", "_drain", "offset_store", "checkpoint"][n % 5]
            mod = MODULES[n % len(MODULES)]
            if n % 2:
                w.step(f"Searching for {q} (sub-task: where is the offset committed?).",
                       [("search_code", {"query": f"{q} {n}"}, w.search_out(q, w.rng.randint(40, 90)))])
            else:
                w.step(f"Reading src/ledgerline/{mod} for {q} (sub-task).",
                       [("read_file", {"path": f"src/ledgerline/{mod}#{n}"}, w.code(mod, w.rng.randint(60, 120)))])
        else:
            w.filler()
    return {"name": "ledgerline_led4127", "system": SYSTEM, "task": TASK, "tools": TOOLS,
            "steps": w.steps, "probes": PROBES, "subtask": SUBTASK}


if __name__ == "__main__":
    data = build()
    (HERE / "run.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    n = sum(len(s["messages"]) for s in data["steps"])
    print(f"wrote run.json: {len(data['steps'])} steps, {n} messages, {len(PROBES)} probes")
