"""Course runtime: the local teaching model, offline tokenizers, widgets and grading.

`course` is infrastructure and holds no answers (those live in `solutions`). Importing it
prepares the offline tiktoken vocabularies, so `tiktoken.get_encoding(...)` works without a
network in the same process.
"""
import warnings as _warnings

from course import vocabularies as _vocabularies

try:
    _vocabularies.ensure_vocabularies()
except Exception as _exc:  # never break an import; say clearly what is wrong instead
    _warnings.warn(f"offline tiktoken vocabularies are not ready: {_exc}", stacklevel=2)
