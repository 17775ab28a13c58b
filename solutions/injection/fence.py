"""Source tagging: wrap untrusted text in an `<external_content source="...">` fence.

The textbook's first context-level defence (chapter 2, prompt injection): before external text
enters the context, wrap it in a clearly marked block that names where it came from, and say in
the system prompt that whatever is inside such a block is data, never instructions.

A fence is only as good as its closing tag. If the content itself contains
`</external_content>`, a naive wrapper lets it end the fence early, and whatever follows is read
as if the harness had written it. So `fence` neutralises every opening or closing fence tag
inside the content (any case, whitespace or `_`/`-` between the words, with or without the
final `>`) by turning its `<` into `&lt;`, and escapes the source so that it cannot break out of
its attribute either.
"""
from __future__ import annotations

import html
import re

TAG_NAME = "external_content"
CLOSE = f"</{TAG_NAME}>"
# Anything a reader (a model, or the course's regular expressions) could take for a fence tag:
# "<", optional "/", the two words with any whitespace, "_" or "-" between them, any case.
TAG_LIKE = re.compile(r"<(?=\s*/?\s*external[\s_-]*content)", re.I)
# Characters that would end a line or hide inside an attribute value.
CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
# A fence as fence() writes it: used to find fenced spans (separate_roles) and in tests.
FENCED = re.compile(r"<external_content\s+source=\"([^\"]*)\">\n(.*?)\n</external_content>", re.S)


def neutralise(content: str) -> str:
    """`content` with every fence-like tag made harmless (its `<` becomes `&lt;`)."""
    return TAG_LIKE.sub("&lt;", content)


def escape_source(source: str) -> str:
    """The source as a safe attribute value: one line, quotes and angle brackets escaped."""
    return html.escape(" ".join(CONTROL.sub(" ", source).split()), quote=True)


def fence(content: str, source: str) -> str:
    """Wrap `content` as `<external_content source="...">` ... `</external_content>`.

    The result starts with the opening tag and ends with the one closing tag: no text inside can
    close the fence early. Raises TypeError unless both arguments are strings.
    """
    if not isinstance(content, str):
        raise TypeError(f"content must be a str, not {type(content).__name__}")
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, not {type(source).__name__}")
    return f'<{TAG_NAME} source="{escape_source(source)}">\n{neutralise(content)}\n{CLOSE}'


def unfence(text: str) -> str:
    """The content of one fence written by `fence` (neutralised tags left as they are)."""
    match = FENCED.fullmatch(text)
    if not match:
        raise ValueError("not a fence written by fence()")
    return match.group(2)
