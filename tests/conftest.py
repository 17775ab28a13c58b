"""Shared fixtures for the unit tests."""
import pytest

import course.llm


@pytest.fixture
def server():
    """A private teaching model with an empty prompt cache."""
    with course.llm.serve() as handle:
        yield handle


@pytest.fixture
def client(server):
    return server.client()
