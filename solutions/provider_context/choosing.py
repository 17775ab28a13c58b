"""Choosing who keeps the context (Chapter 14): the lesson's decision table as code, after the
study guide's rule (section 4.6): one provider, and it is OpenAI or Anthropic, prefer its server
compaction and write less code; several providers, or a summary you must control or review,
write your own; clearing old tool results suits agents whose context is mostly tool output.

    requirement                            -> strategy
    provider "other" (no server feature)      own compaction
    control, inspect or portable              own compaction (a sealed summary can be neither
                                              steered, read nor moved to another provider)
    anthropic, tool_heavy                     context editing (clear old tool results; save first)
    otherwise (openai or anthropic)           server compaction

`store` is False when nothing may stay on the provider (no_retention): on the Responses API the
client then carries the conversation (and any sealed compaction item) itself.
"""
from __future__ import annotations

from course.givens.provider_context import REQUIREMENTS, STRATEGIES


def choose_strategy(requirements):
    """{"strategy": one of STRATEGIES, "store": bool, "why": a sentence} for a dict of
    requirements (keys in REQUIREMENTS; a missing one is False, provider "openai")."""
    unknown = set(requirements) - set(REQUIREMENTS)
    if unknown:
        raise ValueError(f"unknown requirements {sorted(unknown)}; known: {sorted(REQUIREMENTS)}")
    provider = requirements.get("provider", "openai")
    if provider not in ("openai", "anthropic", "other"):
        raise ValueError(f"provider must be 'openai', 'anthropic' or 'other', got {provider!r}")
    store = not requirements.get("no_retention", False)

    def pick(k: int, why: str) -> dict:
        return {"strategy": STRATEGIES[k], "store": store, "why": why}

    if provider == "other":
        return pick(0, "this provider keeps no context for you")
    if requirements.get("control") or requirements.get("inspect") or requirements.get("portable"):
        return pick(0, "a provider's summary cannot be steered, read or moved to another provider")
    if provider == "anthropic" and requirements.get("tool_heavy"):
        return pick(2, "old tool results are most of the context and can be fetched again")
    return pick(1, "one provider that compacts: less code, at the price of control and inspection")
