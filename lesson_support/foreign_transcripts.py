"""Transcripts shaped like other agents' (generated here, seeded: no public transcript is copied).

The course's own runs are tidy. Transcripts recorded by other agents and providers are not, and
code that works on the tidy ones can lose the task, mistake one call for another or crash on
them. Each shape is a plain function `(seed, size) -> list[dict]` of Chat Completions messages,
the same list for the same arguments on every machine; `size` is the number of tool-calling
turns (at least 1; a shape that needs more makes more):

    assistant_first    the assistant speaks first ("Hi! How can I help?"), then the user's task
    reused_ids         each turn numbers its calls from call_0 again: ids reused across turns
                       (some OpenAI runs and vLLM-served models do this)
    parallel           up to 12 calls in one message (12 at least once), each group of results
                       answered out of order
    content_parts      every content a list of text parts, `null` on assistant messages with calls
    odd_names          tool names with dots and dashes (`fs.read_file`, `shell.run-command`)
    invalid_arguments  call arguments that are not valid JSON (cut off, single-quoted, empty...),
                       as models emit them; the result is the harness's JSON error
    huge_result        a tool result of 1 MiB (a build log with an error at its end)
    long_run           500+ messages and 1,000+ distinct identifiers (paths, hashes, UUIDs,
                       URLs with queries, host:port pairs, paths over 100 characters)
    combined           all of the above in one transcript

Every transcript opens with a system message; its first user message is the task; every call is
answered by exactly one result before the next non-tool message, and it ends with the
assistant's answer. Only `reused_ids` breaks a rule (ids must be unique in a transcript), the one
many real transcripts break. `foreign_transcript(seed, size, features)` mixes any features;
`transcripts()` is a hypothesis strategy over the mixtures for property tests.
"""
from __future__ import annotations

import json
import random
import string
import uuid

FEATURES = ("assistant_first", "reused_ids", "parallel", "content_parts", "odd_names",
            "invalid_arguments", "huge_result", "long_run")
MAX_PARALLEL = 12
HUGE_CHARS = 1 << 20          # 1 MiB, the size of the largest result
LONG_MESSAGES = 500
LONG_IDENTIFIERS = 1_000

# Tool names a tidy agent uses, and the same tools as other frameworks name them (MCP servers
# prefix a namespace with a dot; many use dashes).
NAMES = ("read_file", "run_command", "search_code", "write_file", "get_reservation")
ODD_NAMES = {"read_file": "fs.read_file", "run_command": "shell.run-command",
             "search_code": "repo-search.grep", "write_file": "fs.write-file",
             "get_reservation": "mcp.airline.get-reservation"}
GREETINGS = ("Hi! How can I help you today?",
             "Hello, I'm the repository assistant. What would you like me to do?",
             "Welcome back! What can I do for you?")
TASKS = ("Fix the failing test {test} in {repo}; do not change the public API of {module}.",
         "Build {module} for aarch64 from {repo} and report the checksum of the artefact.",
         "My reservation {reservation} needs to move to the next day; the user id is {user}.")
ERRORS = ("Could NOT find ZLIB (missing: ZLIB_LIBRARY ZLIB_INCLUDE_DIR)",
          "ModuleNotFoundError: No module named 'yaml'",
          "connection refused by {host}",
          "permission denied: {path}")


def _bad_arguments(rng: random.Random, arguments: dict) -> str:
    """Arguments as a model sometimes writes them: none of these is valid JSON."""
    text = json.dumps(arguments)
    return rng.choice([text[:-3],                                   # cut off mid-string
                       str(arguments),                              # Python's single quotes
                       "",                                          # nothing at all
                       text + text,                                 # two objects glued
                       text[:-1] + ",}",                            # trailing comma
                       f"```json\n{text}\n```"])                    # a Markdown fence


class _Writer:
    """Builds one transcript; `fresh` counts the distinct identifiers it wrote."""

    def __init__(self, rng: random.Random, features: frozenset[str]):
        self.rng, self.features = rng, features
        self.messages: list[dict] = []
        self.n = 0            # a counter that makes every identifier distinct
        self.fresh = 0
        self.ids: set[str] = set()
        self.id_style = rng.choice(("call_", "toolu_", "chatcmpl-tool-"))
        self.huge_written = False

    # ------------------------------------------------------------------ pieces of text
    def _number(self) -> int:
        self.n += 1
        return self.n

    def path(self) -> str:
        n = self._number()
        self.fresh += 1
        if n % 7 == 0:  # a path over 100 characters
            return (f"services/payments-gateway/internal/adapters/outbound/settlement/"
                    f"reconciliation/batch_{n}/ledger_entry_serializer_{n}.py")
        return f"src/{self.rng.choice(('core', 'net', 'cli', 'io'))}/module_{n}.py"

    def hexhash(self) -> str:
        self.fresh += 1
        # The counter's digits keep it distinct (and a hash in the identifiers' sense).
        return f"{self._number()}" + "".join(self.rng.choice("0123456789abcdef")
                                             for _ in range(11))

    def uuid(self) -> str:
        self.fresh += 1
        return str(uuid.UUID(int=self.rng.getrandbits(128) | self._number(), version=4))

    def url(self) -> str:
        self.fresh += 1
        n = self._number()
        return f"https://ci.example.com/builds/{n}/log?job=linux-{n}&attempt=2"

    def host(self) -> str:
        self.fresh += 1
        return f"db-{self._number()}.internal.example:5432"

    def call_id(self, position: int) -> str:
        if "reused_ids" in self.features:
            return f"call_{position}"
        while True:
            tail = (f"{self.rng.getrandbits(128):032x}" if self.id_style == "chatcmpl-tool-"
                    else "".join(self.rng.choice(string.ascii_letters + string.digits)
                                 for _ in range(24)))
            if self.id_style + tail not in self.ids:
                self.ids.add(self.id_style + tail)
                return self.id_style + tail

    def content(self, text: str):
        if "content_parts" not in self.features:
            return text
        cut = text.find(" ", len(text) // 2) + 1  # two parts, split between words
        if cut == 0:
            return [{"type": "text", "text": text}]
        return [{"type": "text", "text": text[:cut]}, {"type": "text", "text": text[cut:]}]

    # ------------------------------------------------------------------ messages
    def say(self, role: str, text: str) -> None:
        self.messages.append({"role": role, "content": self.content(text)})

    def opening(self) -> None:
        repo = f"https://git.example.com/acme/project-{self._number()}.git"
        self.say("system", f"You are an agent working in the repository {repo}. Use the tools; "
                           f"answer in plain text when the work is done.")
        if "assistant_first" in self.features:
            self.say("assistant", self.rng.choice(GREETINGS))
        task = self.rng.choice(TASKS).format(
            test=f"tests/test_parser.py::test_roundtrip_{self._number()}", repo=repo,
            module=self.path(), reservation=f"RES-{self._number()}",
            user=f"user_{self._number()}")
        self.say("user", task)

    def result(self, name: str, arguments: dict, valid: bool) -> str:
        if not valid:
            return json.dumps({"error": f"arguments are not valid JSON for {name}; send one "
                                        f"JSON object"})
        if (name == "run_command" and "huge_result" in self.features and not self.huge_written):
            self.huge_written = True
            return self.build_log()
        if self.rng.random() < 0.25:
            error = self.rng.choice(ERRORS).format(host=self.host(), path=self.path())
            return json.dumps({"ok": False, "error": f"E{self._number()}: {error}"})
        lines = ["[exit code: 0]" if name == "run_command" else f"{arguments.get('path', '')}:",
                 f"wrote {self.path()} (sha {self.hexhash()})",
                 f"request {self.uuid()} served by {self.host()}",
                 f"details: {self.url()}"]
        if self.rng.random() < 0.3:  # the noise layer 2 of Chapter 11 deletes
            lines += [f"[ {p:>2}%] Building C object {self.path()}.o" for p in (25, 50, 75)]
            lines += [f"tests/test_{self._number()}.py::test_case PASSED" for _ in range(3)]
        return "\n".join(lines)

    def build_log(self) -> str:
        lines, size, i = [], 0, 0
        while size < HUGE_CHARS:
            i += 1
            line = f"[{i * 100 // 20_000 % 100:>3}%] Building C object src/lib/unit_{i}.c.o"
            lines.append(line)
            size += len(line) + 1
        lines += ["CMake Error at CMakeLists.txt:230 (message):",
                  "  Could NOT find ZLIB (missing: ZLIB_LIBRARY)", "[exit code: 2]"]
        return "\n".join(lines)

    def turn(self, number: int, forced_width: int | None) -> None:
        parallel = "parallel" in self.features
        width = forced_width or (self.rng.randint(1, MAX_PARALLEL) if parallel
                                 else self.rng.choice((1, 1, 2)))
        calls, answers = [], []
        for position in range(width):
            invalid = ("invalid_arguments" in self.features
                       and (number == 0 and position == 0 or self.rng.random() < 0.3))
            name = self.rng.choice(NAMES)
            if "huge_result" in self.features and not self.huge_written and not invalid:
                name = "run_command"  # its result is the 1 MiB log
            arguments = ({"command": f"make -C {self.path()} -j8"} if name == "run_command"
                         else {"path": self.path()})
            text = _bad_arguments(self.rng, arguments) if invalid else json.dumps(arguments)
            shown = ODD_NAMES[name] if "odd_names" in self.features else name
            call_id = self.call_id(position)
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": shown, "arguments": text}})
            answers.append((call_id, self.result(name, arguments, not invalid)))
        said = None if ("content_parts" in self.features or self.rng.random() < 0.5) \
            else self.content(f"Step {number + 1}: checking {width} thing(s).")
        self.messages.append({"role": "assistant", "content": said, "tool_calls": calls})
        order = list(range(width))
        if parallel and width > 1:
            while order == sorted(order):  # out of order, always
                self.rng.shuffle(order)
        for j in order:
            self.messages.append({"role": "tool", "tool_call_id": answers[j][0],
                                  "content": self.content(answers[j][1])})
        if self.rng.random() < 0.15:  # a customer-service exchange between tool turns
            self.say("assistant", "Could you confirm that I should go on with the change?")
            self.say("user", "Yes, go ahead.")


def foreign_transcript(seed: int, size: int, features=()) -> list[dict]:
    """A transcript with the given features (names from FEATURES; none is a tidy transcript)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size is the number of tool-calling turns, a whole number of at "
                         f"least 1, got {size!r}")
    features = frozenset([features] if isinstance(features, str) else features)
    unknown = sorted(features - set(FEATURES))
    if unknown:
        raise ValueError(f"unknown features {unknown}; choose from {', '.join(FEATURES)}")
    # A string seed is hashed the same way on every machine and Python version.
    writer = _Writer(random.Random(f"{seed}/{size}/{','.join(sorted(features))}"), features)
    writer.opening()
    turns = max(size, 2) if "reused_ids" in features else size  # a reuse needs two turns
    wide = writer.rng.randrange(turns) if "parallel" in features else None
    number = 0
    while (number < turns or "huge_result" in features and not writer.huge_written
           or "long_run" in features and (len(writer.messages) < LONG_MESSAGES
                                          or writer.fresh < LONG_IDENTIFIERS)):
        writer.turn(number, MAX_PARALLEL if number == wide else None)
        number += 1
    writer.say("assistant", f"Done: the work is finished after {number} steps.")
    return writer.messages


def _shape(*features):
    def make(seed: int, size: int) -> list[dict]:
        return foreign_transcript(seed, size, features)
    make.__name__ = "_".join(features) if len(features) == 1 else "combined"
    make.__doc__ = f"A transcript with {' and '.join(features)} (see the module docstring)."
    return make


SHAPES = {feature: _shape(feature) for feature in FEATURES}
SHAPES["combined"] = _shape(*FEATURES)


def transcripts(features=FEATURES, max_size: int = 6):
    """A hypothesis strategy: transcripts with any mixture of `features` (possibly none), any
    seed, 1 to `max_size` tool-calling turns."""
    from hypothesis import strategies as st  # only tests need hypothesis

    return st.builds(foreign_transcript, st.integers(0, 2**32 - 1), st.integers(1, max_size),
                     st.sets(st.sampled_from(tuple(features))))
