"""Offline tokenizers: `python -m course.tokenizer` prepares tiktoken's vocabularies.

After `import course`, plain `tiktoken.get_encoding("o200k_base")` and `("cl100k_base")` work
with no network; see `course.vocabularies` for how (and why nothing is patched).
"""
from __future__ import annotations

import sys

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
