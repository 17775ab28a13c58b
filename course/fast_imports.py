"""Import nbformat without paying a second for a parser it almost never uses (issue 35 item 3).

nbformat imports jsonschema, whose format checkers import `rfc3987_syntax` when it is installed
(jupyter's `jsonschema[format-nongpl]` extra installs it). That package builds its lark parsers
at import time: about 1.2 s, paid by every grader, every `course.notebooks` run and every pytest
process (nbval imports nbformat when pytest loads its plugins), only to check the "iri" string
format, which no notebook schema uses.

`defer_iri_parser()` puts a stand-in module under that name before jsonschema is imported. The
stand-in loads the real package the first time anything is looked up on it, so validation is
unchanged: an "iri" check still runs the real parser, it just builds it when first needed.

    from course.fast_imports import defer_iri_parser
    defer_iri_parser()
    import nbformat

As a pytest plugin (`-p course.fast_imports` in addopts) it runs before nbval is loaded.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types

DEFERRED = "rfc3987_syntax"


class _Deferred(types.ModuleType):
    """Stands in for rfc3987_syntax until it is used, then hands over to the real module.

    jsonschema runs `from rfc3987_syntax import is_valid_syntax` at import, which reads the
    attribute at once: so that one is a function that loads the real module when called.
    Reading any other attribute loads the real module there and then.
    """

    def _real(self) -> types.ModuleType:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return importlib.import_module(self.__name__)

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):  # import machinery probing (__path__, __spec__, ...)
            raise AttributeError(attribute)
        return getattr(self._real(), attribute)

    def is_valid_syntax(self, *args, **kwargs):
        return self._real().is_valid_syntax(*args, **kwargs)


def defer_iri_parser() -> bool:
    """Defer importing `rfc3987_syntax` until it is used. True if the stand-in is in place.

    Does nothing once jsonschema has been imported (its checkers already hold the real
    functions) or when the package is missing or already imported.
    """
    if "jsonschema" in sys.modules:
        return isinstance(sys.modules.get(DEFERRED), _Deferred)
    if DEFERRED in sys.modules or importlib.util.find_spec(DEFERRED) is None:
        return False
    sys.modules[DEFERRED] = _Deferred(DEFERRED)
    return True


def import_nbformat():
    """nbformat, imported with the IRI parser deferred."""
    defer_iri_parser()
    import nbformat

    return nbformat


# Loaded as a pytest plugin (-p course.fast_imports), the deferral happens before nbval's import.
defer_iri_parser()
