"""Shared fixtures for the unit tests."""
import pytest
from hypothesis import HealthCheck, settings

import course.i18n
import course.llm

# Property tests are deterministic (the same examples every run, on every machine) and never
# fail on time: the course promises offline, reproducible tests without wall-clock limits.
settings.register_profile("course", derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("course")


@pytest.fixture
def server():
    """A private teaching model with an empty prompt cache."""
    with course.llm.serve() as handle:
        yield handle


@pytest.fixture
def client(server):
    return server.client()


@pytest.fixture
def english_unless_told(monkeypatch):
    """The course's messages in English unless a test sets COURSE_LANGUAGE (a notebook's
    session name would pick the Chinese edition); the language is resolved afresh either way."""
    for name in ("COURSE_LANGUAGE", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    course.i18n._resolve.cache_clear()
    yield
    course.i18n._resolve.cache_clear()
