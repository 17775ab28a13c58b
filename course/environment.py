"""Is this machine ready for the course? `python -m course.environment` (also in notebook 00).

Each check returns (name, ok, detail); nothing here raises, so a broken set-up is reported in
full instead of stopping at its first problem.
"""
from __future__ import annotations

import importlib.metadata
import sys

from course.i18n import _

PACKAGES = ("jupyterlab", "ipywidgets", "tiktoken", "openai", "matplotlib", "nbval", "pytest",
            "PyYAML", "quicktok-v1")


MINIMUM_PYTHON = (3, 11)


def check_python() -> tuple[str, bool, str]:
    # The detail names the version only when it is a problem: stored outputs must not depend
    # on which Python ran them.
    version = ".".join(map(str, sys.version_info[:2]))
    name = _("Python 3.11 or newer")
    if sys.version_info[:2] < MINIMUM_PYTHON:
        return name, False, _("this is Python {version} (install 3.11, 3.12 or 3.13)").format(
            version=version)
    return name, True, _("yes")


def check_packages() -> tuple[str, bool, str]:
    missing, found = [], []
    for name in PACKAGES:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        return _("course packages"), False, _("missing: {packages} (run ./run.sh lab)").format(
            packages=", ".join(missing))
    return _("course packages"), True, ", ".join(found)


def check_tokenizers() -> tuple[str, bool, str]:
    try:
        from course.tokenizer import encoding

        names = ("o200k_base", "cl100k_base")
        for name in names:
            encoding(name).encode("Context engineering, hands-on")
    except Exception as exc:
        return _("offline tokenizers"), False, f"{type(exc).__name__}: {exc}"
    return _("offline tokenizers"), True, ", ".join(_("{encoding} ready").format(encoding=n)
                                                    for n in names)


def _refuses(error, parameter: str) -> bool:
    """Is this HTTP 400 a server naming `parameter` as one it does not take?"""
    return getattr(error, "param", None) == parameter or parameter in str(error)


def say_hello(client, model: str, limit: int = 60):
    """One short request, its length capped the way the server accepts.

    `max_completion_tokens` is OpenAI's current name, the only one its reasoning models take;
    the teaching model and vLLM take it too. A server that names it in a 400 gets the older
    `max_tokens` instead (servers that merely ignore it answer anyway, just without the cap).
    """
    import openai

    messages = [{"role": "user", "content": "Say hello."}]
    try:
        return client.chat.completions.create(model=model, messages=messages,
                                              max_completion_tokens=limit)
    except openai.BadRequestError as exc:
        if not _refuses(exc, "max_completion_tokens"):
            raise
    return client.chat.completions.create(model=model, messages=messages, max_tokens=limit)


def check_model() -> tuple[str, bool, str]:
    import course.llm

    where = _("a real provider (COURSE_LLM_* variables)") if course.llm.using_real_provider() \
        else _("the local teaching model")
    try:
        reply = say_hello(course.llm.client(), course.llm.model_name())
    except Exception as exc:
        return _("model answering"), False, f"{where}: {type(exc).__name__}: {exc}"
    return _("model answering"), True, _("{where} ({model}) answered").format(where=where,
                                                                             model=reply.model)


def check_course_files() -> tuple[str, bool, str]:
    from course.chapters import CHAPTERS, problems

    found = problems()
    if found:
        return _("lessons and labs"), False, "; ".join(found)
    labs = sum(1 for c in CHAPTERS if c.lab)
    return _("lessons and labs"), True, _("{lessons} lessons, {labs} labs").format(
        lessons=len(CHAPTERS), labs=labs)


CHECKS = (check_python, check_packages, check_tokenizers, check_model, check_course_files)


def check_environment() -> list[tuple[str, bool, str]]:
    results = []
    for check in CHECKS:
        try:
            results.append(check())
        except Exception as exc:  # a check that breaks is itself a finding
            results.append((check.__name__, False, f"{type(exc).__name__}: {exc}"))
    return results


def report(results) -> str:
    lines = [_("[{status}] {name}: {detail}").format(status=_("ok") if ok else _("PROBLEM"),
                                                      name=name, detail=detail)
             for name, ok, detail in results]
    verdict = _("Everything is ready.") if all(ok for _name, ok, _detail in results) else \
        _("Something is not ready: fix the PROBLEM lines above (./run.sh lab sets everything up).")
    return "\n".join(lines + ["", verdict])


def main() -> int:
    results = check_environment()
    print(report(results))
    return 0 if all(ok for _name, ok, _detail in results) else 1


if __name__ == "__main__":
    sys.exit(main())
