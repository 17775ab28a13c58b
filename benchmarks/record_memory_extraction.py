"""Chapter 17's extraction on the local real model, set against the teaching model's rule; writes
data/memory/real_extraction.json (issue 50).

    python benchmarks/record_memory_extraction.py              # 2 users' sessions (17)
    python benchmarks/record_memory_extraction.py --users 24   # every session (hours on one core)

The request is the library's (`lesson_support.memory.extraction.request`: the system prompt, the
transcript, response_format the JSON schema memory_records), sent through the openai SDK to the
course's local server (SmolLM2-135M-Instruct by default, or what COURSE_MODEL names), which
decodes under a grammar made from the schema, on one thread, temperature 0. For every session of
the benchmark's first `--users` users (seed 17), against what the rule extracts from it:

- found: the rule's records that the model also returned, from the same message with a value
  holding the rule's value (case aside) or held in it; "same key" also asks for the rule's key;
- invented: the model's records whose value no user message of the session holds;
- rejected: records the library rejects (citing a message the user did not write, a wrong kind);
- refused kinds: the model's records that the refusal filter refuses (a password, a colleague's
  health), and those that got past it although they carry a refused record's value: leaked;
- replies that are not the schema's JSON (cut by max_tokens).

A measurement of this machine and this model, never asserted by a test: the file carries its
provenance (date, model file and its sha256, machine and load, libraries, the command).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from course.paths import DATA_DIR
from lesson_support.memory import generate
from lesson_support.memory.extraction import ask_for_memories, extract, records_of
from lesson_support.real_model.weights import provenance
from solutions.memory import filter_records

OUT = DATA_DIR / "memory" / "real_extraction.json"


def holds(a: str, b: str) -> bool:
    a, b = a.casefold().strip(), b.casefold().strip()
    return bool(a and b) and (a in b or b in a)


def compare(session, reply) -> dict:
    """One session's counts: the model's reply set against the rule's records."""
    said = [m["content"] for m in session.messages if m.get("role") == "user"]
    rule = extract(session)
    refused_values = [r.value for r, _ in filter_records(rule, session.user)[1]]
    model = reply.candidates if reply else []
    kept, refused = filter_records(records_of(session, model), session.user)
    found = [r for r in rule if any(c["message"] == r.message and holds(c["value"], r.value) for c in model)]
    return {
        "session": session.id, "rule": len(rule), "model": len(model),
        "found": len(found), "found_same_key": sum(
            any(c["message"] == r.message and holds(c["value"], r.value) and c["key"] == r.key for c in model)
            for r in rule),
        "invented": sum(not any(c["value"].casefold() in s.casefold() for s in said) for c in model),
        "rejected": len(reply.rejected) if reply else 0,
        "rule_refused": len(refused_values),
        "model_refused": len(refused),
        "leaked": sum(any(v.casefold() in (r.value + " " + r.text).casefold() for v in refused_values) for r in kept),
        "not_json": reply is None,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=2, help="the benchmark's first N users (seed 17)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    import course.local_model

    histories = generate(17, 24)[:args.users]
    rows, examples = [], []
    start = time.perf_counter()
    with course.local_model.serve(threads=1) as server:
        client, model = server.client(), server.model_name
        for history in histories:
            for session in history.sessions:
                began = time.perf_counter()
                try:
                    reply = ask_for_memories(session.messages, client, model)
                except ValueError:
                    reply = None
                row = {**compare(session, reply), "seconds": round(time.perf_counter() - began, 1)}
                rows.append(row)
                if len(examples) < 3 and reply is not None:
                    examples.append({"session": session.id, "rule": [[r.key, r.value, r.message] for r in extract(session)],
                                     "model": [[c["key"], c["value"], c["message"]] for c in reply.candidates],
                                     "rejected": [why for _, why in reply.rejected]})
                print(json.dumps(row), flush=True)
        path = server.engine.path
    totals = {key: sum(r[key] for r in rows) for key in rows[0] if key not in ("session", "seconds")}
    result = {
        "provenance": {**provenance(path, threads=1, temperature=0, users=args.users, seed=17),
                       "command": "python benchmarks/" + Path(__file__).name + " " + " ".join(argv or sys.argv[1:]),
                       "seconds": round(time.perf_counter() - start, 1)},
        "sessions": len(rows), "totals": totals, "examples": examples, "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(totals), f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
