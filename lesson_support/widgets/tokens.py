"""Token explorer (Chapter 02): type or paste text and see how each encoding splits it.

Every token is a coloured span; a character spread over several tokens (Chinese, emoji) is
shown once, underlined, with its token count on hover. Counts are shown for o200k_base and
cl100k_base side by side. The logic is in plain functions (tested in tests/solutions/test_tokens.py);
`token_explorer()` only wires a text box to them.

Staying responsive: each render builds one HTML string (short class names, one shared style
block) and sets it once; colouring stops after `MAX_SHOWN_TOKENS` tokens per encoding while
the counts stay exact; and typing is debounced so a burst of keystrokes renders once.
"""
from __future__ import annotations

import asyncio
import html

from course.i18n import _, ngettext

from solutions.tokens import ENCODING_NAMES, count_tokens, token_pieces

MAX_SHOWN_TOKENS = 4000
DEBOUNCE_SECONDS = 0.15
PALETTE = ("#fde2a7", "#c8e6c9", "#bbdefb", "#f8bbd0", "#d1c4e9", "#ffccbc")
DEFAULT_TEXT = ("Could NOT find ZLIB (missing: ZLIB_LIBRARY ZLIB_INCLUDE_DIR)\n"
                "交叉编译时找不到目标平台的 zlib 库\n"
                "/opt/homebrew/Cellar/abseil/20240722.0/include/absl/base/config.h\n"
                '{"path": "CMakeLists.txt", "offset": 101}')

STYLE = ("<style>.cetok{font-family:monospace;white-space:pre-wrap;line-height:1.7;"
         "word-break:break-all}.cetok span{border-radius:3px;padding:1px 0}"
         + "".join(f".cetok .c{i}{{background:{c}}}" for i, c in enumerate(PALETTE))
         + ".cetok .m{text-decoration:underline dotted}.cetok .nl{color:#999}</style>")




def _piece_html(piece: str, tokens: int, colour: int) -> str:
    text = html.escape(piece).replace("\n", '<span class="nl">↵</span>\n')
    if tokens > 1:
        title = ngettext("{count} token", "{count} tokens", tokens).format(count=tokens)
        return f'<span class="c{colour} m" title="{title}">{text}</span>'
    return f'<span class="c{colour}">{text}</span>'


def tokens_html(text: str, encoding: str = "o200k_base", max_shown: int = MAX_SHOWN_TOKENS) -> str:
    """One encoding's view: a header with the counts, then the text as coloured tokens."""
    pieces = token_pieces(text, encoding)
    total = sum(n for _, n in pieces)
    ratio = (_("{ratio} tokens per character").format(ratio=f"{total / len(text):.2f}") if text
             else _("empty text"))
    tokens = ngettext("{count} token", "{count} tokens", total).format(count=f"{total:,}")
    characters = ngettext("{count} character", "{count} characters", len(text)).format(
        count=f"{len(text):,}")
    counts = _("{tokens}, {characters} ({ratio})").format(tokens=tokens, characters=characters,
                                                          ratio=ratio)
    parts = [f"<div><b>{html.escape(encoding)}</b>: {counts}</div><div class='cetok'>"]
    shown = 0
    for i, (piece, n) in enumerate(pieces):
        if shown + n > max_shown:
            rest = total - shown
            more = _("… {rest} more tokens not coloured (showing the first {shown})").format(
                rest=f"{rest:,}", shown=f"{shown:,}")
            parts.append(f"</div><div><i>{more}</i></div>")
            break
        parts.append(_piece_html(piece, n, i % len(PALETTE)))
        shown += n
    else:
        parts.append("</div>")
    return "".join(parts)


def token_counts(text: str, encodings=ENCODING_NAMES) -> dict[str, int]:
    return {name: count_tokens(text, name) for name in encodings}


def comparison_html(text: str, encodings=ENCODING_NAMES, max_shown: int = MAX_SHOWN_TOKENS) -> str:
    """Every encoding's view, one under the other, sharing one style block."""
    return STYLE + "<hr>".join(tokens_html(text, name, max_shown) for name in encodings)


class Debouncer:
    """Call `fn` once input has been quiet for `delay` seconds.

    Inside a running asyncio loop (a Jupyter kernel) calls are postponed and collapsed; with
    no running loop (plain Python, tests) `fn` runs at once.
    """

    def __init__(self, fn, delay: float = DEBOUNCE_SECONDS):
        self.fn, self.delay, self._pending = fn, delay, None

    def __call__(self, *args) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.fn(*args)
            return
        if self._pending is not None:
            self._pending.cancel()
        self._pending = loop.call_later(self.delay, self.fn, *args)


def token_explorer(text: str = DEFAULT_TEXT, encodings=ENCODING_NAMES,
                   max_shown: int = MAX_SHOWN_TOKENS):
    """A text box and the coloured tokens of its content, updated as you type."""
    import ipywidgets as widgets

    box = widgets.Textarea(value=text, continuous_update=True, placeholder=_("Type or paste text"),
                           layout=widgets.Layout(width="100%", height="8em"))
    view = widgets.HTML(comparison_html(text, encodings, max_shown))

    def render(value: str) -> None:
        view.value = comparison_html(value, encodings, max_shown)

    debounced = Debouncer(render)
    box.observe(lambda change: debounced(change["new"]), names="value")
    return widgets.VBox([box, view])
