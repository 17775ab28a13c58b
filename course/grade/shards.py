"""Grading a large class in parts: which shard a student belongs to (`shard_of`), the
`--shard K/N` option, and merging the shards' gradebooks into one (`merge`), identical to a
single run."""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from course.grade.gradebook import FORMAT, write_gradebook
from course.grade.roster import from_records
from course.grade.submissions import Submission

def shard_of(student: str, shards: int) -> int:
    """The shard (1..shards) a student belongs to: stable across runs, machines and classes."""
    return int(hashlib.sha256(student.encode("utf-8")).hexdigest(), 16) % shards + 1


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard takes K/N, e.g. 1/4; got {text!r}") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"--shard K/N needs 1 <= K <= N; got {text!r}")
    return k, n


def merge(folders: list[Path], out: Path) -> list[Path]:
    """Combine shard gradebooks (their gradebook.json) into one gradebook in `out`."""
    subs, labs, shards, owner, skipped, roster, rubric = [], {}, {}, {}, set(), [], {}
    capstone = None  # the capstone's baselines: the same in every shard that graded it
    for folder in folders:
        path = folder / "gradebook.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"merge: cannot read {path}: {exc}") from None
        if data.get("format") != FORMAT:
            raise SystemExit(f"merge: {path} is not a gradebook written by this version of course.grade")
        shard = data.get("shard") or "1/1"
        if shard in shards:
            raise SystemExit(f"merge: shard {shard} appears twice: {shards[shard]} and {folder}")
        shards[shard] = folder
        skipped.update(data.get("skipped", []))
        if data.get("capstone"):
            if capstone is not None and capstone.get("digest") != data["capstone"].get("digest"):
                raise SystemExit("merge: the shards ran the capstone on different hidden sets")
            capstone = data["capstone"]
        roster += from_records(data.get("roster") or [])
        rubric.update({(q["lesson"], q["question"]): q for q in data.get("rubric") or []})
        for lab_id, info in data["labs"].items():
            if labs.setdefault(lab_id, info)["sha256"] != info["sha256"]:
                raise SystemExit(f"merge: the shards graded different releases of {lab_id}")
        for item in data["submissions"]:
            sub = Submission(**item)
            if owner.setdefault(sub.student, shard) != shard:
                raise SystemExit(f"merge: student {sub.student!r} is in shard {owner[sub.student]} "
                                 f"and in shard {shard}")
            subs.append(sub)
    totals = {s.split("/")[1] for s in shards}
    if len(totals) != 1:
        raise SystemExit(f"merge: the shards were cut differently: {', '.join(sorted(shards))}")
    n = int(totals.pop())
    missing = [f"{k}/{n}" for k in range(1, n + 1) if f"{k}/{n}" not in shards]
    if missing:
        raise SystemExit(f"merge: shard(s) {', '.join(missing)} missing")
    return write_gradebook(subs, dict(sorted(labs.items())), out, skipped=sorted(skipped),
                           roster=sorted(roster, key=lambda p: p.folder), rubric=[rubric[k] for k in sorted(rubric)],
                           capstone=capstone)
