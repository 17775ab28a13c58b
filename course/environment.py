"""Is this machine ready for the course? `python -m course.environment` (also in notebook 00).

Each check returns (name, ok, detail); nothing here raises, so a broken set-up is reported in
full instead of stopping at its first problem.
"""
from __future__ import annotations

import importlib.metadata
import json
import sys

from course.i18n import _
from course.paths import REPO_ROOT

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


def answered_by(reply, configured: bool) -> str:
    """Who answered, from the reply itself: the teaching model's replies carry `teaching_trace`,
    a field no real provider sends, so COURSE_LLM_* pointing at a teaching model is not taken
    for a real provider."""
    from course.llm.explain import trace_of

    if trace_of(reply) is not None:
        return _("the teaching model, reached through the COURSE_LLM_* variables (not a real "
                 "provider)") if configured else _("the local teaching model")
    return _("a real provider (COURSE_LLM_* variables)") if configured else _("a model")


def check_model() -> tuple[str, bool, str]:
    import course.llm

    configured = course.llm.using_real_provider()
    try:
        reply = say_hello(course.llm.client(), course.llm.model_name())
    except Exception as exc:
        if configured:
            return _("model answering"), False, _(
                "the provider named by the COURSE_LLM_* variables did not answer: {error} (check "
                "COURSE_LLM_BASE_URL, COURSE_LLM_API_KEY and COURSE_LLM_MODEL, or unset them to "
                "use the teaching model)").format(error=f"{type(exc).__name__}: {exc}")
        return _("model answering"), False, _(
            "the local teaching model did not answer: {error} (run ./run.sh lab again)").format(
            error=f"{type(exc).__name__}: {exc}")
    return _("model answering"), True, _("{where} ({model}) answered").format(
        where=answered_by(reply, configured), model=reply.model)


def release_problems(manifest: dict) -> list[str]:
    """What a student's copy lacks of the release its manifest describes."""
    import course.release

    gone, compiled = course.release.missing(manifest)
    found = []
    if gone:
        shown = ", ".join(gone[:5]) + (_(" and {count} more").format(count=len(gone) - 5)
                                       if len(gone) > 5 else "")
        found.append(_("{count} files of the release are missing: {paths} (get them again from "
                       "your instructor's release)").format(count=len(gone), paths=shown))
    if compiled:
        found.append(_("the answers are compiled for {built} only, not for this Python "
                       "({tag}): run the course with that version").format(
            built=", ".join(manifest.get("pythons", [])) or "?", tag=sys.implementation.cache_tag))
    return found


def check_course_files() -> tuple[str, bool, str]:
    """The registry's lessons and labs against the files: in the repository every chapter's
    parts (`course.chapters.problems`); in a student release, which holds only some of them,
    the files the release wrote (its manifest, `course.release.MANIFEST`)."""
    import course.release
    from course.chapters import CHAPTERS, problems

    manifest = course.release.read_manifest()
    found = problems() if manifest is None else release_problems(manifest)
    if found:
        return _("lessons and labs"), False, "; ".join(found)
    labs = sum(1 for c in CHAPTERS if c.lab)
    return _("lessons and labs"), True, _("{lessons} lessons, {labs} labs").format(
        lessons=len(CHAPTERS), labs=labs)


# What each lesson sends to a provider, measured by benchmarks/measure_provider_load.py.
PROVIDER_LOAD = REPO_ROOT / "course" / "provider_load.json"


def provider_load() -> str:
    """A table of what each lesson sends to a provider when COURSE_LLM_* are set: requests,
    prompt and completion tokens (measured, `PROVIDER_LOAD`), and the total."""
    from course.tables import text_table

    lessons = json.loads(PROVIDER_LOAD.read_text(encoding="utf-8"))["lessons"]
    rows = [[row["lesson"].rsplit("/", 1)[-1].removesuffix(".ipynb"), f"{row['requests']:,}",
             f"{row['prompt_tokens']:,}", f"{row['completion_tokens']:,}"] for row in lessons]
    rows.append([_("all lessons"), *(f"{sum(r[k] for r in lessons):,}"
                                     for k in ("requests", "prompt_tokens", "completion_tokens"))])
    return text_table([_("lesson"), _("requests"), _("prompt tokens"), _("completion tokens")],
                      rows, "<>>>", sep="  ", rule="-")


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
        _("Something is not ready: fix the PROBLEM lines above (each says how).")
    return "\n".join(lines + ["", verdict])


def main() -> int:
    results = check_environment()
    print(report(results))
    return 0 if all(ok for _name, ok, _detail in results) else 1


if __name__ == "__main__":
    sys.exit(main())
