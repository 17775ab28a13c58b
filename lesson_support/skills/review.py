"""Reviewing a skill like code before installing it: what its body reads, sends and hides,
and the verdict on every skill folder."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from solutions.skills import Skill, SkillError, load_skill


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
