"""The red-team harness of Chapter 07, becoming a package: for now all of it is in judging.py."""
from lesson_support.redteam.judging import *  # noqa: F401,F403
