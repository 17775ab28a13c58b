"""A check's verdict in the course's language (the catalogue, `course.i18n`).

A check cell's hint and its asserts' messages are English literals in the released lab (keys stay
English, and grading reads them in English). In Chinese, `localised(key, message)` shows the
catalogue's translation instead:

- the hint and every assert message (or `raise AssertionError(message)`) of the check cells with that key (in the released labs) are
  *templates*: an f-string's `{expression}`s are placeholders, named by their expression
  (`f"got {problems}"` is the template "got {problems}"). `pybabel extract` reads them with
  `extract_checks` (every `labs/*_lab.ipynb`, pyproject.toml's [tool.babel]);
- a message that fits a template is its Chinese template with the same values filled in (of two
  that fit, the one with more words of its own);
- a self-test's "qN is not right yet: re-read section 3, 'Title', then try again" names the
  section by number and by the title the Chinese lesson gives it.

Anything else (the student's own exception text, a message not in the catalogue) stays as it is.
"""
from __future__ import annotations

import ast
import json
import re
from functools import lru_cache

from course.i18n import _, language

PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
SELF_TEST = re.compile(r"(?P<key>q\d+) is not right yet: re-read (?P<where>.+), then try again", re.S)


# ------------------------------------------------------------------------ templates
def templates(source: str) -> list[str]:
    """The hint and the assert messages of a check cell's source, as templates (see above)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []      # (line, column, template): in the order of the source
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check":
            found += [(kw.value.lineno, kw.value.col_offset, _template(kw.value))
                      for kw in node.keywords if kw.arg == "hint"]
        elif isinstance(node, ast.Assert) and node.msg is not None:
            found.append((node.lineno, node.col_offset, _template(node.msg)))
        elif (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args
              and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "AssertionError"):
            found.append((node.lineno, node.col_offset, _template(node.exc.args[0])))
    return [template for *_, template in sorted(found) if template]


def _template(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None      # a message built some other way is not translated
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
        else:
            name = ast.unparse(value.value)
            if "{" in name or "}" in name:
                return None
            parts.append("{" + name + "}")
    return "".join(parts)


def _pattern(template: str) -> re.Pattern:
    """A regex matching what the template formats to, a group per placeholder."""
    pieces, last, names = [], 0, []
    for match in PLACEHOLDER.finditer(template):
        pieces.append(re.escape(template[last:match.start()]))
        pieces.append(f"(?P<p{len(names)}>.*?)")
        names.append(match.group(0))
        last = match.end()
    pieces.append(re.escape(template[last:]))
    return re.compile("".join(pieces), re.S)


def fill(message: str, template: str, translated: str) -> str | None:
    """`translated` with the values `message` has where `template` has placeholders; None if
    the message does not fit the template."""
    match = _pattern(template).fullmatch(message)
    if match is None:
        return None
    values = {}
    for index, placeholder in enumerate(PLACEHOLDER.findall(template)):
        values.setdefault(placeholder, match.group(f"p{index}"))
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), translated)


@lru_cache(maxsize=None)
def _released_templates(key: str) -> tuple[str, ...]:
    """The templates of every released lab's check cells with this key (self-test keys repeat)."""
    from course.paths import LABS_DIR

    found = []
    for path in sorted(LABS_DIR.glob("*_lab.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for cell in cells:
            if cell.get("metadata", {}).get("course", {}).get("key") == key:
                source = cell.get("source", "")
                found += templates("".join(source) if isinstance(source, list) else source)
    return tuple(dict.fromkeys(found))


# ------------------------------------------------------------------------ translating
def localised(key: str, message: str) -> str:
    """A check's message in the course's language, line by line (a hint is a line of its own)."""
    if language() == "en" or not message:
        return message
    whole = _line(key, message)
    if whole != message or "\n" not in message:
        return whole
    return "\n".join(_line(key, line) for line in message.split("\n"))


def _line(key: str, line: str) -> str:
    self_test = SELF_TEST.fullmatch(line)
    if self_test:
        return _("{key} is not right yet: re-read {where}, then try again").format(
            key=self_test["key"], where=chinese_sections(self_test["where"]))
    # the template with the most words of its own: "step {n}: over the window" before "step {n}: {why}"
    for template in sorted(_released_templates(key), key=lambda t: -len(PLACEHOLDER.sub("", t))):
        translated = _(template)
        if translated != template:
            filled = fill(line, template, translated)
            if filled is not None:
                return filled
    return line


# ------------------------------------------------------------------------ sections
# a title in '…': 'The study guide's lab' keeps its apostrophe, the lesson's is none
_TITLE = re.compile(r"(?<![A-Za-z])'((?:[^']|'(?=[a-z]))+?)'(?![A-Za-z])")
_SECTIONS = [
    (re.compile(r"^sections (\d+) to (\d+), from (「[^」]*」) to (「[^」]*」)"), r"第 \1 到 \2 节（从\3到\4）"),
    (re.compile(r"^sections (\d+) to (\d+),"), r"第 \1 到 \2 节，"),
    (re.compile(r"(「[^」]*」) in section (\d+)"), r"第 \2 节的\1"),
    (re.compile(r"section (\d+(?:\.\d+)?), (「[^」]*」)"), r"第 \1 节\2"),
    (re.compile(r"section (\d+(?:\.\d+)?)(?:'s)?"), r"第 \1 节"),
]


def chinese_sections(where: str) -> str:
    """"section 3, 'The second call'" as the Chinese lesson names it: 第 3 节「第二次调用」. A title
    the Chinese lessons do not have stays English in 「」."""
    titles = chinese_titles()
    text = _TITLE.sub(lambda m: "「" + _title(titles, m.group(1)) + "」", where)
    for pattern, replacement in _SECTIONS:
        text = pattern.sub(replacement, text)
    return text


def _title(titles: dict[str, str], english: str) -> str:
    """The Chinese of a title, or of the one heading it begins ('The first call' for 'The first
    call: one user message'); the English if there is none."""
    if english in titles:
        return titles[english]
    longer = [title for title in titles if title.startswith(english)]
    return titles[longer[0]] if len(longer) == 1 else english


_HEADING = re.compile(r"^#{1,6} (?:\d+(?:\.\d+)*\.? )?(.+?)\s*$", re.M)


@lru_cache(maxsize=1)
def chinese_titles() -> dict[str, str]:
    """Every heading of the English lessons, without its number, to the Chinese lesson's."""
    from course import editions

    titles = {}
    for notebook in editions.translated_notebooks():
        if notebook.parent.name != "notebooks":
            continue
        try:
            english = editions.read_english(notebook)
            entries = {e.source_hash: e.text for e in editions.read_entries(notebook)}
        except (OSError, ValueError):
            continue
        for cell in editions.markdown_cells(english):
            chinese = entries.get(editions.english_hash(cell.source))
            if chinese is None:
                continue
            pairs = zip(_HEADING.findall(cell.source), _HEADING.findall(chinese))
            if len(_HEADING.findall(cell.source)) == len(_HEADING.findall(chinese)):
                titles.update(pairs)
    return titles
