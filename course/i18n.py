"""The course's language and its translation functions (gettext, domain "course").

    from course.i18n import _, ngettext
    print(_("{passed} of {total} checks pass").format(passed=2, total=3))

`language()` is "en" or "zh-CN": the variable `COURSE_LANGUAGE` when it is set; otherwise
"zh-CN" when the kernel runs a notebook of the Chinese edition (jupyter_server gives every
kernel `JPY_SESSION_NAME`, the notebook's path: a `zh-CN` folder in it); otherwise "en". The
machine's locale (LANG, LC_ALL, LANGUAGE) is never read: stored outputs must not depend on it.
The language is resolved at every call (cached per value of the two variables), so a test can
switch it with `monkeypatch.setenv`.

English is the source text: `_` returns it unchanged. The Chinese text is the catalogue
`course/locale/zh_CN/LC_MESSAGES/course.po`, compiled to `course.mo` beside it (CONTRIBUTING.md,
"Messages in code", says how to mark, extract, update and compile).
"""
from __future__ import annotations

import gettext
import os
import re
from functools import lru_cache
from pathlib import Path, PurePath

from course.paths import CHINESE_EDITION

DOMAIN = "course"
LOCALE_DIR = Path(__file__).parent / "locale"
LANGUAGES = ("en", "zh-CN")
CATALOGUE_LOCALES = {"zh-CN": "zh_CN"}    # a language's folder under LOCALE_DIR


def language() -> str:
    """"en" or "zh-CN" (see the module's docstring); a bad COURSE_LANGUAGE raises ValueError."""
    return _resolve(os.environ.get("COURSE_LANGUAGE"), os.environ.get("JPY_SESSION_NAME"))


@lru_cache(maxsize=32)
def _resolve(setting: str | None, session: str | None) -> str:
    if setting is not None:
        if setting not in LANGUAGES:
            raise ValueError(f"COURSE_LANGUAGE={setting!r} is not a language of the course: "
                             f"use one of {', '.join(LANGUAGES)} (or leave it unset)")
        return setting
    if session and CHINESE_EDITION in _session_folders(session):
        return "zh-CN"
    return "en"


def _session_folders(session: str) -> tuple[str, ...]:
    """The folders of a notebook's path, below the repository when the path is inside it (so a
    clone that itself sits in a folder named zh-CN is not taken for the edition)."""
    from course.paths import REPO_ROOT

    path = PurePath(session)
    if path.is_absolute():
        try:
            path = path.relative_to(REPO_ROOT)
        except ValueError:
            pass
    return path.parts[:-1]


@lru_cache(maxsize=None)
def translations(lang: str) -> gettext.NullTranslations:
    """The catalogue of a language; English (the source text) translates nothing."""
    if lang not in CATALOGUE_LOCALES:
        return gettext.NullTranslations()
    # fallback: a missing catalogue shows English rather than breaking a lesson (a test keeps
    # the compiled catalogue committed and current)
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[CATALOGUE_LOCALES[lang]], fallback=True)


def _(message: str) -> str:
    """`message` in the course's language."""
    return translations(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural message for `n`, in the course's language."""
    return translations(language()).ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks a message for the catalogue where it is defined (a module's table of labels) and
    returns it unchanged: it is translated by `_` where it is shown, at call time."""
    return message


# ------------------------------------------------------------------ the catalogue's tooling
_SHELL_MESSAGE = re.compile(r'\bsay\s+"((?:[^"\\]|\\.)*)"')
_SHELL_ESCAPE = re.compile(r'\\([$`"\\])')     # what a backslash escapes in "..."


def extract_shell(fileobj, keywords, comment_tags, options):
    """A Babel extractor for run.sh: the message of every `say "..."` line (its placeholders are
    $names, which run.sh fills in after translating; see its `say`)."""
    for number, line in enumerate(fileobj.read().decode("utf-8").splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        for match in _SHELL_MESSAGE.finditer(line):
            yield number, "gettext", _SHELL_ESCAPE.sub(r"\1", match.group(1)), []


def extract_checks(fileobj, keywords, comment_tags, options):
    """A Babel extractor for a lab: the hint and assert messages of its check cells, as the
    templates `course.check_messages` translates a verdict by (a self-test's "not right yet" is
    one message of its own there, so it is left out)."""
    import json

    from course.check_messages import SELF_TEST, templates

    for number, cell in enumerate(json.loads(fileobj.read().decode("utf-8")).get("cells", []), 1):
        if "check" not in cell.get("metadata", {}).get("tags", []):
            continue
        source = cell.get("source", "")
        for template in templates("".join(source) if isinstance(source, list) else source):
            if not SELF_TEST.fullmatch(template):
                yield number, "gettext", template, []
