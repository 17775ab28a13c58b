"""Chapter 10's red-team harness, becoming a package: for now all of it is in world.py."""
from lesson_support.injection.world import *  # noqa: F401,F403
