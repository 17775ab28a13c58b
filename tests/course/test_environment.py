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
