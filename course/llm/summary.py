"""The teaching model's summaries: structured, and faithful to identifiers.

Asked to summarise or compact a conversation (the last message says so), the teaching model
answers with the sections a good compaction prompt asks for — goal, constraints, confirmed
facts, changes made, failed attempts and why, open items — and copies every identifier it
finds (ids, hashes, paths, URLs, versions, error lines) verbatim. It is rule-based, so it
cannot *reason* about what the facts mean; Chapter 04 shows what that costs.
"""
from __future__ import annotations

import json
import re

from course.llm.template import content_text

SUMMARY_REQUEST = re.compile(r"\b(summari[sz]e|summary|compact(ion)?|condense)\b|总结|摘要|压缩", re.I)
CONSTRAINT = re.compile(r"\b(must|never|do not|don't|only|should|always|without|avoid|required?)\b"
                        r"|必须|不要|不能|禁止|只能|务必", re.I)
FACT = re.compile(r"\b(confirmed|found|root cause|because|turns out|is caused|verified)\b"
                  r"|确认|原因|发现", re.I)
OPEN = re.compile(r"\b(next|todo|remaining|still|need to|will|pending|open)\b|下一步|待办|还需", re.I)
CHANGE_TOOL = re.compile(r"write|edit|patch|create|update|delete|remove|apply|set|move|rename|"
                         r"install|commit|save|append|replace|mkdir", re.I)
# A sentence ends at . ! ? followed by a space or the end (so "build/libpng16.so" stays whole).
SENTENCE = re.compile(r".+?(?:[.!?](?=\s|$)|[。！？]|$)", re.M)
IDENTIFIER = re.compile(
    r"https?://[^\s\"'<>)\]]+"                                  # URLs
    r"|(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]+"                # paths with a slash
    r"|\b[\w-]+\.(?:py|js|ts|c|h|cc|cpp|hpp|txt|md|json|ya?ml|toml|cfg|ini|log|csv|sh|cmake|"
    r"html|css|rs|go|java|lock|xml|sql)\b"                     # file names
    r"|\b[0-9a-f]{7,64}\b"                                      # hashes
    r"|\b[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*[-_]\d[\w-]*\b"  # ids like call_12, PROJ-42
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"                            # CONSTANT_NAMES
    r"|\bv?\d+(?:\.\d+){1,3}\b|\b\d{4,}\b"                      # versions, long numbers
)
ERROR_LINE = re.compile(r"error|fail|not found|exception|denied|missing|refused|traceback", re.I)
MAX_IDENTIFIERS = 400


def asks_for_summary(text: str) -> bool:
    return bool(SUMMARY_REQUEST.search(text or ""))


def _sentences(text: str, pattern: re.Pattern) -> list[str]:
    return [" ".join(s.split()) for s in SENTENCE.findall(text) if pattern.search(s)]


def _first_line(text: str, pattern: re.Pattern | None = None) -> str:
    for line in text.splitlines():
        if line.strip() and (pattern is None or pattern.search(line)):
            return line.strip()
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


ERROR_TEXT = re.compile(r"^\s*(error|traceback|failed|exception)\b", re.I)
EXIT_CODE = re.compile(r"exit code:? [1-9]|exit_code\W+[1-9]", re.I)


def is_error_result(content: str) -> bool:
    """A tool result that reports a failure: JSON with an "error" key, or text starting so."""
    try:
        data = json.loads(content)
    except (ValueError, TypeError):
        return bool(ERROR_TEXT.match(content or ""))
    return isinstance(data, dict) and "error" in data


def _failed(content: str) -> bool:
    # For the summary a non-zero exit code also counts as a failed attempt.
    return is_error_result(content) or bool(EXIT_CODE.search(content or ""))


def _unique(items: list[str]) -> list[str]:
    seen, out = set(), []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def identifiers(text: str) -> list[str]:
    """Identifiers worth keeping verbatim, in order of first appearance."""
    return _unique(m.group(0).rstrip(".,:;") for m in IDENTIFIER.finditer(text))


def summarise(messages: list[dict]) -> str:
    """Summarise every message before the last one (the last one is the request to summarise)."""
    transcript = messages[:-1]
    if not any(m["role"] in ("assistant", "tool") for m in transcript):
        # Nothing happened yet: summarise the text the user handed over instead.
        text = content_text(messages[-1].get("content"))
        transcript = [{"role": "user", "content": text.split("\n", 1)[-1] if "\n" in text else text}]

    goal = ""
    constraints, facts, changes, failures, open_items, all_text = [], [], [], [], [], []
    calls: dict[str, tuple[str, str]] = {}
    failed_names, fixed_names = [], set()
    for message in transcript:
        role = message["role"]
        text = content_text(message.get("content"))
        all_text.append(text)
        if role in ("system", "developer", "user"):
            if role == "user" and not goal:
                goal = _short(text, 400)
            constraints += _sentences(text, CONSTRAINT)
            if role == "user":
                open_items = [_short(text)]  # the latest user ask is open until answered
        elif role == "assistant":
            facts += _sentences(text, FACT)
            for call in message.get("tool_calls") or ():
                fn = call.get("function") or {}
                calls[call.get("id")] = (fn.get("name", "?"), fn.get("arguments", ""))
                all_text.append(fn.get("arguments", ""))
            if text and not message.get("tool_calls"):
                open_items = _sentences(text, OPEN)
        elif role == "tool":
            name, args = calls.get(message.get("tool_call_id"), ("?", ""))
            what = f"{name}({_short(args, 160)})"
            if _failed(text):
                failures.append(f"{what} -> {_first_line(text, ERROR_LINE)}")
                failed_names.append(name)
            elif CHANGE_TOOL.search(name):
                changes.append(f"{what} -> {_short(_first_line(text), 160)}")
                fixed_names.add(name)
            else:
                facts.append(f"{what} -> {_short(_first_line(text), 200)}")
                fixed_names.add(name)
    open_items += [f"unresolved failure of {name}" for name in _unique(failed_names)
                   if name not in fixed_names]

    sections = [
        ("Goal", [goal or "(no user task found)"]),
        ("Constraints", _unique(constraints)),
        ("Confirmed facts", _unique(facts)),
        ("Changes made", _unique(changes)),
        ("Failed attempts (and why)", _unique(failures)),
        ("Open items", _unique(open_items)),
    ]
    lines = ["Summary of the conversation so far (teaching model, rule-based):"]
    for title, items in sections:
        lines.append(f"\n## {title}")
        lines += [f"- {item}" for item in items] or ["- (none)"]
    body = "\n".join(lines)
    missing = [i for i in identifiers("\n".join(all_text)) if i not in body]
    lines.append("\n## Identifiers (verbatim)")
    lines += [f"- {i}" for i in missing[:MAX_IDENTIFIERS]] or ["- (none beyond those above)"]
    if len(missing) > MAX_IDENTIFIERS:
        lines.append(f"- ... and {len(missing) - MAX_IDENTIFIERS} more: see the full transcript")
    return "\n".join(lines)
