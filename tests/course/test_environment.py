"""The front door's checks: they report every problem and never raise."""
import course.environment as environment


def test_a_ready_machine_passes_every_check():
    results = environment.check_environment()
    assert [name for name, ok, _ in results if not ok] == []
    assert environment.report(results).endswith("Everything is ready.")


def test_missing_packages_are_named(monkeypatch):
    monkeypatch.setattr(environment, "PACKAGES", ("tiktoken", "no-such-package-here"))
    name, ok, detail = environment.check_packages()
    assert not ok and "no-such-package-here" in detail and "tiktoken" not in detail


def test_a_check_that_breaks_is_reported_not_raised(monkeypatch):
    def broken():
        raise OSError("disk on fire")

    monkeypatch.setattr(environment, "CHECKS", (environment.check_python, broken))
    results = environment.check_environment()
    assert results[1] == ("broken", False, "OSError: disk on fire")
    assert "PROBLEM" in environment.report(results)


def test_a_provider_without_a_model_name_is_a_problem(monkeypatch):
    monkeypatch.setenv("COURSE_LLM_API_KEY", "sk-test")
    monkeypatch.delenv("COURSE_LLM_MODEL", raising=False)
    name, ok, detail = environment.check_model()
    assert not ok and "COURSE_LLM_MODEL" in detail


def test_python_check_names_no_patch_version():
    name, ok, detail = environment.check_python()
    assert ok and detail == "yes", "a stored output must not carry the machine's Python version"


def test_the_teaching_model_behind_the_provider_variables_is_named_as_such(monkeypatch):
    """COURSE_LLM_* pointing at a teaching model: what answered is the teaching model (its reply
    carries `teaching_trace`, a field no provider sends), not "a real provider"."""
    import course.llm

    server = course.llm.serve()
    try:
        monkeypatch.setenv("COURSE_LLM_API_KEY", "sk-test")
        monkeypatch.setenv("COURSE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("COURSE_LLM_MODEL", "teaching-model")
        name, ok, detail = environment.check_model()
    finally:
        server.stop()
    assert ok, detail
    assert "real provider" not in detail.replace("not a real provider", ""), detail
    assert "teaching model" in detail and "COURSE_LLM_" in detail, detail


def test_a_real_providers_reply_is_labelled_a_real_provider(monkeypatch):
    class Reply:  # what a provider sends: no teaching_trace
        model, model_extra = "gpt-test-1", {}

    monkeypatch.setenv("COURSE_LLM_API_KEY", "sk-test")
    monkeypatch.setenv("COURSE_LLM_MODEL", "gpt-test")
    monkeypatch.setattr(environment, "say_hello", lambda client, model: Reply())
    name, ok, detail = environment.check_model()
    assert ok and detail == "a real provider (COURSE_LLM_* variables) (gpt-test-1) answered", detail


def test_a_provider_that_cannot_be_reached_points_at_the_variables(monkeypatch):
    import socket

    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    monkeypatch.setenv("COURSE_LLM_API_KEY", "sk-test")
    monkeypatch.setenv("COURSE_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("COURSE_LLM_MODEL", "gpt-test")
    name, ok, detail = environment.check_model()
    assert not ok and "COURSE_LLM_BASE_URL" in detail, detail
    report = environment.report([(name, ok, detail)])
    assert "./run.sh lab" not in report, "running ./run.sh lab again does not fix a provider's variables"


def test_in_a_release_the_course_files_are_what_the_release_wrote(monkeypatch, tmp_path):
    """A student release holds no tests, so the registry's parts do not all exist there: the
    check reads the release's manifest instead, and names what a student's copy lacks."""
    import json

    import course.release

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_start_here.ipynb").write_text("{}")
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "tokens.cpython-399.pyc").write_bytes(b"")
    manifest = {"files": ["notebooks/00_start_here.ipynb", "labs/01_agent_loop_lab.ipynb"],
                "compiled": ["solutions/tokens.pyc"], "pythons": ["cpython-399"]}
    (tmp_path / course.release.MANIFEST).write_text(json.dumps(manifest))
    monkeypatch.setattr(course.release, "REPO_ROOT", tmp_path)
    name, ok, detail = environment.check_course_files()
    assert not ok
    assert "1 files of the release are missing: labs/01_agent_loop_lab.ipynb" in detail, detail
    assert "compiled for cpython-399 only" in detail, detail
    assert "matches no file" not in detail, "a release is not checked against the registry's parts"


def test_lesson_00_tells_what_every_lesson_sends_to_a_provider():
    """The table lesson 00 prints: a row per lesson of the registry, and the total."""
    from course.chapters import CHAPTERS

    lines = environment.provider_load().splitlines()
    assert lines[0].split() == ["lesson", "requests", "prompt", "tokens", "completion", "tokens"]
    assert [line.split()[0] for line in lines[2:-1]] == \
        [c.lesson.rsplit("/", 1)[-1].removesuffix(".ipynb") for c in CHAPTERS]
    assert lines[-1].startswith("all lessons")


def test_the_table_is_what_the_measuring_script_writes(tmp_path):
    """The figures come from benchmarks/measure_provider_load.py, not from a hand: run on lesson
    00, it writes lesson 00's row as stored."""
    import json
    import subprocess
    import sys

    from course.paths import REPO_ROOT

    out = tmp_path / "load.json"
    done = subprocess.run([sys.executable, "benchmarks/measure_provider_load.py",
                           "notebooks/00_start_here.ipynb", "--output", str(out)],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    stored = json.loads(environment.PROVIDER_LOAD.read_text(encoding="utf-8"))["lessons"]
    assert json.loads(out.read_text())["lessons"] == [r for r in stored if r["lesson"].endswith("00_start_here.ipynb")]
