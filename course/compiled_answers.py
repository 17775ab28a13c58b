"""Importing answers a student release ships compiled (`course.release`): `solutions/x.py` is
there as `solutions/x.<cache tag>.pyc`, one per Python the release was built for
(`x.cpython-312.pyc`), and a package's `__init__.py` as `__init__.<cache tag>.pyc`.

`install(root)`, called by the release's `solutions/__init__.py`, puts a finder on
`sys.meta_path` that loads those files. On a Python the release was not built for, importing
such a module fails with a sentence naming the versions it was built for. Not used in the
repository itself, where every answer is source.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path


class CompiledAnswers:
    """A meta path finder for `solutions.*` modules present only as compiled files."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def find_spec(self, name, path=None, target=None):
        parts = name.split(".")
        if parts[0] != "solutions" or len(parts) < 2:
            return None
        base = self.root.joinpath(*parts[1:])
        if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
            return None  # source: the usual finders load it
        tag = sys.implementation.cache_tag
        package, module = base / f"__init__.{tag}.pyc", base.parent / f"{base.name}.{tag}.pyc"
        if package.exists():
            return importlib.util.spec_from_file_location(
                name, package, loader=importlib.machinery.SourcelessFileLoader(name, str(package)),
                submodule_search_locations=[str(base)])
        if module.exists():
            return importlib.util.spec_from_file_location(
                name, module, loader=importlib.machinery.SourcelessFileLoader(name, str(module)))
        built = sorted({p.name.split(".")[-2] for p in
                        [*base.glob("__init__.*.pyc"), *base.parent.glob(f"{base.name}.*.pyc")]})
        if built:
            raise ImportError(f"{name} is compiled in this release for {', '.join(built)} only, "
                              f"not for {tag}: run the course with that Python", name=name)
        return None


def install(root: str | Path) -> None:
    """Put the finder for compiled answers under `root` (the release's solutions/) in place."""
    if not any(isinstance(f, CompiledAnswers) for f in sys.meta_path):
        sys.meta_path.insert(0, CompiledAnswers(root))
