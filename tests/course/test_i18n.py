"""The course's language (course/i18n.py) and its catalogue: which language is chosen, what the
verdicts and the tally say in Chinese (and that English stays as it was), that the catalogue is
current with the code, and that run.sh speaks Chinese too."""
from __future__ import annotations

import ast
import fnmatch
import io
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

import course.checks as checks
import course.i18n as i18n
from course.checks import check, tally
from course.paths import REPO_ROOT

PO = i18n.LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "course.po"
MO = PO.with_suffix(".mo")
POT = i18n.LOCALE_DIR / "course.pot"
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def clean_language(monkeypatch):
    """No language setting from the machine running the tests; no verdicts of other tests."""
    for name in ("COURSE_LANGUAGE", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    i18n._resolve.cache_clear()
    checks._verdicts.clear()
    yield
    i18n._resolve.cache_clear()
    checks._verdicts.clear()


# ------------------------------------------------------------------ which language
def test_english_by_default_whatever_the_machines_locale(monkeypatch):
    for name, value in (("LANG", "zh_CN.UTF-8"), ("LC_ALL", "zh_CN.UTF-8"), ("LANGUAGE", "zh_CN")):
        monkeypatch.setenv(name, value)
    assert i18n.language() == "en"
    assert i18n._("failing:") == "failing:"


@pytest.mark.parametrize("value", ["en", "zh-CN"])
def test_course_language_chooses(monkeypatch, value):
    monkeypatch.setenv("COURSE_LANGUAGE", value)
    monkeypatch.setenv("JPY_SESSION_NAME", "zh-CN/notebooks/01_agent_loop.ipynb")
    assert i18n.language() == value  # the variable wins over the notebook's folder


@pytest.mark.parametrize("value", ["zh", "zh_CN", "", "EN", "fr"])
def test_a_language_the_course_does_not_have_is_refused(monkeypatch, value):
    monkeypatch.setenv("COURSE_LANGUAGE", value)
    with pytest.raises(ValueError, match="use one of en, zh-CN"):
        i18n.language()


@pytest.mark.parametrize("session,expected", [
    ("zh-CN/notebooks/01_agent_loop.ipynb", "zh-CN"),
    ("zh-CN/labs/01_agent_loop_lab.ipynb", "zh-CN"),
    (str(REPO_ROOT / "zh-CN" / "labs" / "04_compaction_lab.ipynb"), "zh-CN"),  # jupyter_server's absolute form
    ("notebooks/01_agent_loop.ipynb", "en"),
    (str(REPO_ROOT / "notebooks" / "01_agent_loop.ipynb"), "en"),
    ("notebooks/zh-CN.ipynb", "en"),           # a file name is not a folder
    ("", "en"),
])
def test_a_kernel_of_the_chinese_edition_speaks_chinese(monkeypatch, session, expected):
    monkeypatch.setenv("JPY_SESSION_NAME", session)
    assert i18n.language() == expected


def test_a_clone_inside_a_folder_named_zh_cn_is_not_the_edition(monkeypatch, tmp_path):
    clone = tmp_path / "zh-CN" / "course"
    monkeypatch.setattr("course.paths.REPO_ROOT", clone)
    monkeypatch.setenv("JPY_SESSION_NAME", str(clone / "notebooks" / "01_agent_loop.ipynb"))
    assert i18n.language() == "en"
    monkeypatch.setenv("JPY_SESSION_NAME", str(clone / "zh-CN" / "notebooks" / "01_agent_loop.ipynb"))
    assert i18n.language() == "zh-CN"


def test_the_language_follows_the_variable_at_call_time(monkeypatch):
    assert i18n._("failing:") == "failing:"
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    assert i18n._("failing:") == "未通过："
    monkeypatch.setenv("COURSE_LANGUAGE", "en")
    assert i18n._("failing:") == "failing:"


# ------------------------------------------------------------------ verdicts and the tally
def run_two_checks():
    with check("check-a", hint="h"):
        pass
    with check("check-b", hint="b must work"):
        raise AssertionError("b must return 2, got 3")  # a lab's assert (pytest rewrites a bare one)


TALLY_EN = "1 of 2 checks pass\nfailing:\n  ✗ check-b: b must return 2, got 3"
TALLY_ZH = "2 个检查项中通过了 1 个\n未通过：\n  ✗ check-b: b must return 2, got 3"


def test_the_tally_in_english_is_unchanged(capsys):
    run_two_checks()
    assert tally() == TALLY_EN


def test_the_tally_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    run_two_checks()
    assert tally() == TALLY_ZH
    with check("check-b", hint="b must work"):
        pass
    assert tally() == "2 个检查项中通过了 2 个：全部检查项都通过了。"


def test_the_tally_names_checks_not_run_and_borrowed_answers_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    monkeypatch.setattr(checks, "lab_check_keys", lambda lab_id: ["check-a", "check-z"])
    monkeypatch.setattr(checks, "_reference_answers_in_use", lambda lab_id: ["validate_messages"])
    with check("check-a", hint="h"):
        pass
    text = tally("00_some_lab")
    assert text.startswith("2 个检查项中通过了 1 个\n尚未运行（")
    assert "\n  · check-z\n将按待实现的函数评分（" in text and text.endswith("：\n  · validate_messages")


def test_a_failing_verdict_in_chinese_keeps_its_key_message_and_payload(monkeypatch, capsys):
    """The framing is translated; the check's key and its assert's message (the lab's code) are
    not, and neither is what tools read."""
    run_two_checks()
    english = checks.verdicts()["check-b"]
    checks._verdicts.clear()
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    run_two_checks()
    chinese = checks.verdicts()["check-b"]
    assert chinese == english and chinese.text == "✗ check-b\n  b must return 2, got 3"
    assert checks.verdicts()["check-a"].text == "✓ check-a"


def test_the_time_limit_says_so_in_chinese(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    monkeypatch.setenv("COURSE_CHECK_SECONDS", "0.2")
    with pytest.raises(checks.CheckTimeout) as stopped:
        check("check-endless")._expired(None, None)  # what the check's timer calls
    assert str(stopped.value) == "检查项没有在 0.2 秒内运行完（死循环，还是一个永远等不到头的等待？）：已被终止"


def test_the_environment_check_in_chinese(monkeypatch):
    import course.environment as environment

    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    text = environment.report([("Python 3.11 或更新版本", True, "是"), ("broken", False, "OSError: x")])
    assert text == ("[正常] Python 3.11 或更新版本：是\n[问题] broken：OSError: x\n\n"
                    "有些东西还没准备好：请修复上面标为“问题”的各行（每一行都说明了怎么修复）。")
    assert environment.check_python()[0] == "Python 3.11 或更新版本"


# ------------------------------------------------------------------ the catalogue is current
def mapping() -> list[tuple[str, str]]:
    """pyproject.toml's Babel mapping, as extract_from_dir takes it."""
    return [(pattern, entry["method"]) for entry in PYPROJECT["tool"]["babel"]["mappings"]
            for pattern in ([entry["pattern"]] if isinstance(entry["pattern"], str) else entry["pattern"])]


def extracted_catalogue(tmp_path: Path) -> Catalog:
    """The messages marked in the code now, written to a temporary template and read back."""
    template = Catalog()
    for filename, lineno, message, comments, context in extract_from_dir(
            REPO_ROOT, mapping(), keywords=DEFAULT_KEYWORDS):
        template.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    path = tmp_path / "course.pot"
    with path.open("wb") as f:
        write_po(f, template)
    with path.open("rb") as f:
        return read_po(f)


def catalogue(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale="zh_CN" if path.suffix == ".po" else None)


def ids(cat: Catalog) -> set:
    return {m.id for m in cat if m.id}


def test_every_message_marked_in_the_code_is_in_the_catalogue_and_no_other(tmp_path):
    marked, translated = ids(extracted_catalogue(tmp_path)), ids(catalogue(PO))
    assert len(marked) > 200, "the extraction found too few messages: is the mapping right?"
    assert sorted(map(str, marked - translated)) == [], (
        "messages not in the catalogue: run `pybabel extract && pybabel update`, translate, then "
        "`pybabel compile` (CONTRIBUTING.md, Messages in code)")
    assert sorted(map(str, translated - marked)) == [], "messages no code uses any more: pybabel update"
    assert ids(catalogue(POT)) == marked, "course/locale/course.pot is stale: pybabel extract"


def test_the_extraction_sees_the_shell_messages(tmp_path):
    marked = ids(extracted_catalogue(tmp_path))
    assert "run.sh: this course needs Python 3.11 or newer (3.11, 3.12 or 3.13)." in marked
    assert "  $python is Python $version. $fix" in marked


def test_no_message_is_marked_inside_an_f_string():
    """Babel reads an f-string as one string token on Python 3.11: a _() inside one is never
    extracted (and the catalogue would differ by Python version)."""
    found = []
    for pattern, method in mapping():
        if method != "python":
            continue
        for path in sorted(REPO_ROOT.glob(pattern.replace("**", "**/*"))):  # Babel's ** is any depth
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.JoinedStr):
                    found += [f"{path.relative_to(REPO_ROOT)}:{call.lineno}" for call in ast.walk(node)
                              if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                              and call.func.id in ("_", "N_", "ngettext")]
    assert found == []


PLACEHOLDER = re.compile(r"\{[^{}]*\}|%\(\w+\)\w|%[sd]|\$[A-Za-z_]\w*")


def forms(message) -> list[tuple[str, str]]:
    """(English, Chinese) pairs of a message: one, or one per plural form."""
    if isinstance(message.id, tuple):
        return [(english, chinese) for english in message.id for chinese in message.string]
    return [(message.id, message.string)]


def test_every_message_is_translated_with_its_placeholders_and_symbols():
    cat = catalogue(PO)
    assert not cat.fuzzy
    problems = []
    for message in cat:
        if not message.id:
            continue
        if "fuzzy" in message.flags:
            problems.append(f"fuzzy: {message.id!r}")
        for english, chinese in forms(message):
            if not chinese.strip():
                problems.append(f"not translated: {english!r}")
            elif sorted(PLACEHOLDER.findall(english)) != sorted(PLACEHOLDER.findall(chinese)):
                problems.append(f"placeholders differ: {english!r} -> {chinese!r}")
            elif any(english.count(s) != chinese.count(s) for s in "✓✗·◀▶"):
                problems.append(f"symbols differ: {english!r} -> {chinese!r}")
    assert problems == []


def test_the_committed_mo_is_the_compiled_po():
    with MO.open("rb") as f:
        committed = read_mo(f)
    fresh = io.BytesIO()
    write_mo(fresh, catalogue(PO))
    fresh.seek(0)
    compiled = read_mo(fresh)
    assert contents(committed) == contents(compiled), "course.mo is out of date: pybabel compile"


def contents(cat: Catalog) -> dict:
    """{msgid: msgstr}, plural forms as tuples (read_mo gives lists)."""
    def plain(value):
        return tuple(value) if isinstance(value, list) else value
    return {plain(m.id): plain(m.string) for m in cat if m.id}


def test_the_compiled_catalogue_ships_with_the_package():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["course"]
    relative = MO.relative_to(REPO_ROOT / "course").as_posix()
    assert any(fnmatch.fnmatch(relative, p) for p in patterns)


# ------------------------------------------------------------------ run.sh
def fake_python(folder: Path, version: str) -> Path:
    """A python3 that answers run.sh's version question with `version` and does nothing else."""
    python = folder / "python3"
    python.write_text(f"#!/bin/sh\necho {version}\n", encoding="utf-8")
    python.chmod(0o755)
    return python


def run_sh(tmp_path: Path, *args: str, language: str | None = None, path: str | None = None,
           python: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_LANGUAGE", "LANGUAGE", "LC_ALL")}
    env.update(COURSE_VENV=str(tmp_path / "no-venv"), PATH=path or env["PATH"])
    if python is not None:
        env["PYTHON"] = str(python)
    if language is not None:
        env["COURSE_LANGUAGE"] = language
    return subprocess.run([shutil.which("bash"), str(REPO_ROOT / "run.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=60)


REFUSAL_EN = ("run.sh: this course needs Python 3.11 or newer (3.11, 3.12 or 3.13).\n"
              "  {python} is Python 3.10. Install a newer one and name it: PYTHON=python3.12 ./run.sh setup\n")


def test_run_sh_refuses_python_3_10_in_english_by_default(tmp_path):
    python = fake_python(tmp_path, "3.10")
    done = run_sh(tmp_path, "setup", python=python)
    assert (done.returncode, done.stderr) == (1, REFUSAL_EN.format(python=python))


@pytest.mark.skipif(shutil.which("gettext") is None, reason="gettext(1) (Debian's gettext-base) is not installed")
def test_run_sh_speaks_chinese(tmp_path):
    python = fake_python(tmp_path, "3.10")
    done = run_sh(tmp_path, "setup", python=python, language="zh-CN")
    assert (done.returncode, done.stderr) == (1, (
        "run.sh：本课程需要 Python 3.11 或更新版本（3.11、3.12 或 3.13）。\n"
        f"  {python} 是 Python 3.10。请安装更新的版本并指明它：PYTHON=python3.12 ./run.sh setup\n"))
    usage = run_sh(tmp_path, language="zh-CN")
    assert (usage.returncode, usage.stderr) == (
        2, "用法：./run.sh lab [--local-model] [JupyterLab 选项] | ./run.sh test [pytest 选项] | "
           "./run.sh setup [--local-model]\n")


def test_run_sh_falls_back_to_english_without_gettext(tmp_path):
    """A minimal machine without gettext-base: the English text, the same refusal."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    python = fake_python(bin_dir, "3.10")
    done = run_sh(tmp_path, "setup", language="zh-CN", path=str(bin_dir), python=python)
    assert (done.returncode, done.stderr) == (1, REFUSAL_EN.format(python=python))


def test_run_sh_refuses_a_language_it_does_not_have(tmp_path):
    done = run_sh(tmp_path, "setup", language="fr")
    assert done.returncode == 2 and "use en or zh-CN" in done.stderr
