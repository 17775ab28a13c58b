"""Transcripts as JSONL, one message per line: saved atomically, loaded with a clear error
per bad line, and backed up into the agent's workspace before a compaction."""
from __future__ import annotations

import json
import os
from pathlib import Path

from solutions.truncation import Workspace, offload

TRANSCRIPTS_DIR = ".agent/transcripts"


def transcript_jsonl(messages: list[dict]) -> str:
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)


def save_transcript(messages: list[dict], path: str | os.PathLike) -> None:
    """Write JSONL atomically: the file is complete or absent, never half-written."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(transcript_jsonl(messages), encoding="utf-8")
    partial.replace(path)


def load_transcript(path: str | os.PathLike) -> list[dict]:
    messages = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}, line {n}: not valid JSON ({exc})") from None
            if not isinstance(message, dict):
                raise ValueError(f"{path}, line {n}: expected a JSON object (one message), "
                                 f"got {type(message).__name__}")
            messages.append(message)
    return messages


def backup_transcript(messages: list[dict], workspace: Workspace,
                      directory: str = TRANSCRIPTS_DIR) -> str:
    """Save the whole transcript inside the workspace; return the path read_file can open."""
    return offload(transcript_jsonl(messages), workspace, directory, prefix="transcript",
                   suffix=".jsonl")
