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
from functools import lru_cache
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


# ---------------------------------------------------------------- refusing them when grading
# Compiled is hidden, not secret: `dis` reads a .pyc, and `marshal.loads` turns the release's
# files into code a notebook can run without any import of `solutions` for screening to see.
# So a graded worker refuses the reference answers' compiled code where compiled code becomes
# code: `marshal.loads` (what every .pyc goes through), `marshal.load`, and building a code
# object (`types.CodeType`, `code.replace`). What it loads is compared, by its bytecode and the
# names it uses (globals, attributes; not its local variables, whose names change nothing), with
# the answers' (`fingerprints`). Source in an exercise cell, in plain sight, is not refused:
# copying the answers' source is plagiarism to read, as copying a classmate's notebook is.
# Only telling code is compared: 128 bytes of bytecode or more (shorter, such as a one-line
# `"\n".join(...)`, recurs across libraries), and not comprehensions or lambdas. Measured on
# Python 3.11: of the answers' 354 such code objects, none recurs in the standard library or
# the installed packages, and one in the course's runtime, which `refused_fingerprints` leaves out.
MIN_BYTECODE = 128
NAMELESS = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>", "<lambda>")
REFUSED = ("this is the reference answers' compiled code (the release ships them compiled: hidden, "
           "not secret); a graded notebook cannot run it: write your own code")


def _telling(code) -> bool:
    return len(code.co_code) >= MIN_BYTECODE and code.co_name not in NAMELESS


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, type(code)):
            yield from _code_objects(const)


def fingerprint(code) -> str:
    """What identifies a code object: its bytecode and the names it reads (its `co_names`)."""
    import hashlib

    digest = hashlib.sha256(code.co_code)
    digest.update(b"\0" + "\0".join(code.co_names).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:20]


def bytecode_fingerprint(bytecode: bytes) -> str:
    """What identifies bytecode alone (a code object being built is known by its bytes only)."""
    import hashlib

    return "b" + hashlib.sha256(bytecode).hexdigest()[:20]


def fingerprints(paths) -> set[str]:
    """The fingerprints of the code in these source files, as this Python compiles them (as
    `py_compile` and the release do): of every telling code object, its `fingerprint` and its
    `bytecode_fingerprint`."""
    found = set()
    for path in paths:
        path = Path(path)
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        for c in _code_objects(code):
            if _telling(c):
                found |= {fingerprint(c), bytecode_fingerprint(c.co_code)}
    return found


@lru_cache(maxsize=None)
def refused_fingerprints(allowed: tuple[str, ...] = ()) -> frozenset[str]:
    """What a graded worker refuses: the fingerprints of every reference answer but the
    `allowed` answer modules (a lab's `earlier_answers`, and what they import), less any
    that the course's own runtime also has (the same small helper written twice)."""
    from course.labs.confinement import answer_modules
    from course.paths import REPO_ROOT

    def sources(paths):
        return [f for p in paths for f in (sorted(p.rglob("*.py")) if p.is_dir() else [p])]

    given = {f.resolve() for f in sources(answer_modules(allowed).values())} if allowed else set()
    answers = [f for f in sources([REPO_ROOT / "solutions"]) if f.resolve() not in given]
    runtime = sources([REPO_ROOT / "course", REPO_ROOT / "lesson_support"]) + sorted(given)
    return frozenset(fingerprints(answers) - fingerprints(runtime))


def refuse(refused) -> None:
    """From now on, in this process, refuse the reference answers' compiled code (`refused`,
    their `fingerprints`): `marshal.loads` of bytes holding it, and building a code object with
    its bytecode, raise ImportError, however the bytes came; `marshal.load` (whose bytes an
    audit hook cannot see) is refused outright. Called first in a graded worker
    (course.labs.answer_keys), before any student code runs. An audit hook cannot be removed,
    and this one depends on nothing the student's code could rebind afterwards (module
    globals, builtins, hashlib, marshal): what it uses is bound when it is made. It also refuses
    the garbage collector's object listings, through which it could be found and edited."""
    import hashlib
    import marshal
    import threading

    busy: set[int] = set()  # threads inside the hook's own marshal.loads

    def hook(event, args, refused=frozenset(refused), sha=hashlib.sha256, loads=marshal.loads,
             thread=threading.get_ident, smallest=MIN_BYTECODE, nameless=NAMELESS,
             message=REFUSED, error=ImportError, join="\0".join, is_a=isinstance, length=len,
             code_type=type(refuse.__code__), busy=busy, dict_=dict,
             containers=(tuple, list, set, frozenset, dict)):
        if event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents", "marshal.load"):
            raise error(f"{event} is not available while grading")
        if event == "code.__new__":
            bytecode = args[0]
            if length(bytecode) >= smallest and "b" + sha(bytecode).hexdigest()[:20] in refused:
                raise error(message)
            return
        if event != "marshal.loads" or thread() in busy:
            return
        busy.add(thread())
        try:
            todo = [loads(args[0])]
        except Exception:  # noqa: BLE001 - not valid marshal data: marshal.loads says so itself
            return
        finally:
            busy.discard(thread())
        while todo:
            value = todo.pop()
            if is_a(value, containers):  # code inside a tuple, a list, a dict...
                todo.extend(value.items() if is_a(value, dict_) else value)
                continue
            if not is_a(value, code_type):
                continue
            if length(value.co_code) >= smallest and value.co_name not in nameless:  # _telling
                digest = sha(value.co_code)  # fingerprint(), with nothing rebindable
                digest.update(b"\0" + join(value.co_names).encode("utf-8", "surrogatepass"))
                if digest.hexdigest()[:20] in refused:
                    raise error(message)
            todo.extend(c for c in value.co_consts if is_a(c, code_type))

    sys.addaudithook(hook)


def guard_cell(allowed: tuple[str, ...] = ()) -> dict:
    """The worker program's first cell when grading: `refuse` the reference answers but the
    lab's `allowed` earlier ones, before the lab's set-up and the student's cells run."""
    refused = sorted(refused_fingerprints(tuple(allowed)))
    return {"kind": "guard", "key": None,
            "source": f"__import__('course.compiled_answers', fromlist=['refuse']).refuse({refused!r})"}
