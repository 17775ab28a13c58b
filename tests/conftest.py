"""Shared fixtures for the unit tests."""
import pytest
from hypothesis import HealthCheck, settings

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
