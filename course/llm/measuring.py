"""Where a lesson's measurement runs, and the label each of its figures carries.

A measurement that needs a clean prompt cache runs on a *private* teaching model (`serve()`):
a shared provider's cache may already hold the requests from an earlier run, so only a fresh
simulation gives clean numbers. When a provider is configured (the COURSE_LLM_* variables), the
same requests also go to it, and the lesson prints both, each figure labelled with the model
that produced it:

    with course.llm.fresh_targets() as targets:      # private teaching model, then the provider
        course.llm.announce(targets)                 # says what runs where
        for target in targets:
            usage = read_usage(target.create(messages=...).usage)
            print(..., f"[{target.label}]")

A label is never chosen by the lesson: it comes from the target that sent the request, so a
figure cannot be printed under the provider's name when the teaching model produced it.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

from course.llm import connection

TEACHING_LABEL = "teaching model (private cache)"
PROVIDER_SUFFIX = "(your provider)"
LOCAL_SUFFIX = "(local model)"

NO_PROVIDER = (
    "No provider is configured, so only the teaching model's simulation runs here.\n"
    "To send the same requests to a real model too, set COURSE_LLM_API_KEY, COURSE_LLM_MODEL "
    "and\n(except for OpenAI) COURSE_LLM_BASE_URL, as the README explains.")


def provider_label(model: str) -> str:
    """How a figure from the configured real model is labelled: its model name, marked as your
    provider's or as the local model's (COURSE_MODEL=local, course/local_model)."""
    return f"{model} {LOCAL_SUFFIX if connection.local_model_configured() else PROVIDER_SUFFIX}"


@dataclass(frozen=True)
class Target:
    """One model a measurement is sent to: its label, an openai client and the model name."""

    label: str
    client: object
    model: str
    simulated: bool  # True for the teaching model, whose rules and cache are documented

    def create(self, **request):
        """`client.chat.completions.create` with this target's model name filled in."""
        return self.client.chat.completions.create(model=self.model, **request)


def teaching_target(server) -> Target:
    """The private teaching model behind `server` (a `course.llm.serve()` handle)."""
    from course.llm.server import MODEL_NAME

    return Target(TEACHING_LABEL, server.client(), MODEL_NAME, simulated=True)


def provider_target() -> Target | None:
    """The configured provider, or None when the course runs on the teaching model alone."""
    if not connection.provider_configured():
        return None
    model = connection.model_name()
    return Target(provider_label(model), connection.client(), model, simulated=False)


def targets(server) -> list[Target]:
    """The private teaching model behind `server`, then the provider if one is configured."""
    provider = provider_target()
    return [teaching_target(server)] + ([provider] if provider else [])


@contextlib.contextmanager
def fresh_targets():
    """`targets()` on a newly started private teaching model (an empty cache), stopped after."""
    with connection.serve() as server:
        yield targets(server)


def announce(chosen: list[Target]) -> None:
    """Print which models a measurement goes to (and how to add a real one when none is set)."""
    if all(t.simulated for t in chosen):
        print(NO_PROVIDER)
    else:
        print("Sent to:", "; ".join(t.label for t in chosen))
