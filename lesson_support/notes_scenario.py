"""Chapter 06's fixtures: the three-day scenario, and synthetic folders to measure with.

- `replay_scenario` replays data/notes/*.json into a notes folder, driving `NoteTool` through
  the scenario's steps with a clock set to each step's time;
- `write_synthetic_notes` writes n notes of mixed Chinese and English straight to disk (for the
  lesson's measurement and benchmarks/bench_notes.py), and SYNTHETIC_QUERIES searches them.

Fixture loaders for the lesson, the tests and the benchmark, not answers.
"""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Union

from course.paths import DATA_DIR
from solutions.gssc import as_datetime
from solutions.notes import NOTE_TYPES, Note, NoteError, NoteTool, render_note, utc_now

SCENARIO = DATA_DIR / "notes" / "libpng_scenario.json"


def _time(value, what: str) -> datetime:
    try:
        return as_datetime(value)
    except (ValueError, TypeError) as exc:
        raise NoteError(f"{what}: {exc}") from None


def replay_scenario(path: Union[str, Path], folder: Union[str, Path],
                    until: Union[datetime, str, None] = None) -> NoteTool:
    """Replay a scenario file (data/notes/*.json) into `folder`: each step runs one action at
    the time given in its "at" field; with `until`, only the steps up to that time. Returns the
    tool, its clock left at the last step replayed."""
    scenario = json.loads(Path(path).read_text(encoding="utf-8"))
    limit = _time(until, "until") if until is not None else None
    moments: list[datetime] = []
    tool = NoteTool(folder, clock=lambda: moments[-1] if moments else limit or utc_now())
    for step in scenario["steps"]:
        step = dict(step)
        at = _time(step.pop("at"), "step time")
        if moments and at < moments[-1]:
            raise NoteError(f"scenario steps must be in time order: {at.isoformat()} comes after "
                            f"{moments[-1].isoformat()}")
        if limit is not None and at > limit:
            break
        moments.append(at)
        result = tool.run(step)
        if not result["ok"]:
            raise NoteError(f"scenario step {step} failed: {result['error']}")
    return tool


# --------------------------------------------------------------------------- synthetic folders

SYNTHETIC_QUERIES = ["为什么链接时找不到 zlib", "undefined reference to inflate",
                     "交叉编译 工具链 aarch64", "cmake toolchain sysroot", "主机的库 host library",
                     "下一步 测试", "qemu test suite", "静态库 libz.a 路径"]
_ENGLISH = ("the build links libpng against zlib and cmake finds the host library instead of "
            "the target sysroot so the linker reports undefined reference to inflate while the "
            "toolchain file sets aarch64 compiler flags and the test suite runs under qemu").split()
_CHINESE = ["交叉编译", "链接", "找不到", "目标平台", "主机", "库", "工具链", "头文件", "配置",
            "编译选项", "静态库", "动态库", "测试", "路径", "缓存", "依赖", "版本", "错误", "下一步"]
_T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone(timedelta(hours=8)))


def synthetic_note(rng: random.Random, number: int) -> Note:
    """One note of 20-150 words (60% English), a random type, two tags, a time in 60 days."""
    words = [rng.choice(_ENGLISH) if rng.random() < 0.6 else rng.choice(_CHINESE)
             for _ in range(rng.randint(20, 150))]
    when = _T0 + timedelta(minutes=rng.randint(0, 60 * 24 * 60))
    return Note(f"note-{number:04d}", " ".join(words[:6]), rng.choice(NOTE_TYPES),
                tuple(rng.sample(["zlib", "cmake", "link", "toolchain", "test"], 2)),
                when, when, " ".join(words))


def write_synthetic_notes(folder: Union[str, Path], n: int, seed: int = 11) -> None:
    """n synthetic notes written as note files (no tool, no index), the same for a seed."""
    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(1, n + 1):
        note = synthetic_note(rng, i)
        (folder / f"{note.id}.md").write_text(render_note(note), encoding="utf-8")
