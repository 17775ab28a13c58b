"""Course runtime: the local teaching model, offline tokenizers, widgets and grading.

`course` is infrastructure and holds no answers (those live in `solutions`). Importing it
prepares the offline tiktoken vocabularies, so `tiktoken.get_encoding(...)` works without a
network in the same process, and lets matplotlib draw Chinese text where a CJK font is installed
(`course.plotting`; applied when matplotlib loads its fonts, so importing `course` stays fast).
"""
import warnings as _warnings

from course import fast_imports as _fast_imports  # noqa: F401  (nbformat without its 1 s parser)

from course import vocabularies as _vocabularies

try:
    _vocabularies.ensure_vocabularies()
except Exception as _exc:  # never break an import; say clearly what is wrong instead
    _warnings.warn(f"offline tiktoken vocabularies are not ready: {_exc}", stacklevel=2)

from course import plotting as _plotting

_plotting.install()


def inspect():
    """The context inspector over this session's trace (course/tracing): `course.inspect()` in
    any lesson shows what every request's context was made of and why its cache stopped."""
    from course.tracing import inspect as inspector

    return inspector()
