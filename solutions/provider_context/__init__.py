"""Context kept by the provider (Chapter 14): server state, server compaction, context editing.

    chain      chain_turns (a Responses-API conversation chained with previous_response_id)
    clearing   clear_tool_uses (Anthropic's edit, done by the client), cache_loss
    choosing   choose_strategy (the lesson's decision table)

The chapter's givens (`course.givens.provider_context`, no answers) are re-exported: the tools
and turns of the lesson's conversation, the token counts, the placeholder, the strategies.
"""
from __future__ import annotations

from course.givens.provider_context import (CHAT_TOOLS, INSTRUCTIONS, PLACEHOLDER, STRATEGIES,
                                            TURNS, execute_tool, fixed_tokens, message_tokens,
                                            tool_run)
from solutions.provider_context.chain import chain_turns
from solutions.provider_context.choosing import choose_strategy
from solutions.provider_context.clearing import cache_loss, clear_tool_uses
from solutions.provider_context.self_test import self_test

__all__ = [
    "CHAT_TOOLS", "INSTRUCTIONS", "PLACEHOLDER", "STRATEGIES", "TURNS", "cache_loss", "chain_turns",
    "choose_strategy", "clear_tool_uses", "execute_tool", "fixed_tokens", "message_tokens",
    "self_test", "tool_run",
]
