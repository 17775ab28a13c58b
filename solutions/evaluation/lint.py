"""lint_prompt: the defects a system prompt maintained by many people collects (thinking
question 5): duplicated or contradicting rules, steps as an unordered list or out of order,
rules the model has no trigger for, and dynamic content in the cached prefix."""
from __future__ import annotations

import re

NUMBERED = re.compile(r"^\s*(?:step\s+)?(\d+)\s*[.):]\s+\S", re.I)
BULLET = re.compile(r"^\s*[-*•]\s+(\S.*)$")
TOOL = re.compile(r"`([A-Za-z0-9_.-]+)`")
NEVER = re.compile(r"\b(?:never|do\s+not|don't)\s+(?:use|call)\s+`([\w.-]+)`\s+(?:for|to|when)\s+([^;.\n]+)", re.I)
ALWAYS = re.compile(r"\b(?:always\s+)?(?:use|call)\s+`([\w.-]+)`\s+(?:for|to|when)\s+([^;.\n]+)", re.I)
DYNAMIC = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b|\b(?:today|tonight|yesterday|tomorrow|"
                     r"current time|now is)\b|\{[a-z_]+\}", re.I)
RULE_HEADING = re.compile(r"\brules?\b", re.I)
WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    return {w[:5] for w in WORD.findall(text.lower()) if len(w) > 3}


def _norm(line: str) -> str:
    return " ".join(re.sub(r"^\s*(?:[-*•]|\d+[.):])\s*", "", line).lower().split()).rstrip(".")


def lint_prompt(sections: dict) -> list[dict]:
    """Problems of a prompt built from `sections` ({name: text}, in assembly order), each
    {"kind", "section", "line"}; kinds: "duplicate", "contradiction", "unordered",
    "no_trigger", "dynamic". [] for a clean prompt."""
    problems, seen, nevers, uses = [], set(), [], []
    for name, text in sections.items():
        lines = str(text).splitlines()
        tool_bullets, numbers = [], []
        in_rules = False
        for line in lines:
            stripped = line.strip()
            if not stripped:
                numbers = []
                continue
            numbered, bullet = NUMBERED.match(stripped), BULLET.match(stripped)
            if stripped.endswith(":") and not numbered and not bullet:  # a heading
                in_rules = bool(RULE_HEADING.search(stripped))
                numbers = []
                continue
            if DYNAMIC.search(stripped):
                problems.append({"kind": "dynamic", "section": name, "line": stripped})
            if numbered:
                value = int(numbered.group(1))
                if numbers and value != numbers[-1] + 1:
                    problems.append({"kind": "unordered", "section": name, "line": stripped})
                numbers.append(value)
            if not numbered:  # steps repeat across procedures; a rule said twice is a duplicate
                key = _norm(stripped)
                if key in seen:
                    problems.append({"kind": "duplicate", "section": name, "line": stripped})
                seen.add(key)
            if bullet and TOOL.search(stripped) and not NEVER.search(stripped):
                tool_bullets.append(stripped)
            for tool, topic in NEVER.findall(stripped):
                nevers.append((tool, _words(topic), name, stripped))
            if not NEVER.search(stripped):
                for tool, topic in ALWAYS.findall(stripped):
                    uses.append((tool, _words(topic), name, stripped))
            if (bullet or in_rules) and not numbered and not TOOL.search(stripped):
                problems.append({"kind": "no_trigger", "section": name, "line": stripped})
        if len(tool_bullets) >= 2:
            problems.append({"kind": "unordered", "section": name, "line": tool_bullets[0]})
    for tool, topic, name, line in nevers:
        for other_tool, other_topic, _, _ in uses:
            if other_tool == tool and topic & other_topic:
                problems.append({"kind": "contradiction", "section": name, "line": line})
                break
    return problems
