"""Offline tokenizers: `python -m course.tokenizer` prepares tiktoken's vocabularies.

After `import course`, plain `tiktoken.get_encoding("o200k_base")` and `("cl100k_base")` work
with no network; see `course.vocabularies` for how (and why nothing is patched).
"""
from __future__ import annotations

import sys
from functools import lru_cache

from course.vocabularies import (  # noqa: F401  (the public names of this module)
    VOCABULARIES,
    VocabularyError,
    ensure_vocabularies,
    ensure_vocabulary,
    tiktoken_cache_dir,
)


def encoding(name: str = "o200k_base"):
    """`tiktoken.get_encoding(name)`, with the offline vocabulary made ready first."""
    ensure_vocabulary(name)
    import tiktoken

    return tiktoken.get_encoding(name)


@lru_cache(maxsize=None)
def _cached(name: str):
    return encoding(name)


def count_tokens(text: str) -> int:
    """Exact o200k_base tokens of `text`, special-token look-alikes counted as plain text: what
    the runtime's givens count with (a packet's size in lab 03). Lab 02 has students write their
    own `count_tokens`; this one is the runtime's, so the givens need no answer."""
    return len(_cached("o200k_base").encode_ordinary(text))


def main() -> int:
    try:
        paths = ensure_vocabularies()
    except VocabularyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    import tiktoken

    for name, path in paths.items():
        enc = tiktoken.get_encoding(name)
        where = path if path else "tiktoken's own download (cache disabled)"
        print(f"{name}: ready ({enc.n_vocab} tokens) at {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
