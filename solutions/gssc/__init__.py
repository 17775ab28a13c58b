"""Chapter 03: build a context with Gather -> Select -> Structure -> Compress.

The four stages are plain functions so each can be read, tested and replaced on its own:

    packets, failures = gather(sources, task)            # collect candidates; a broken source is reported, not fatal
    chosen = select(candidates, task, room, config)      # score, then fill the budget greedily
    text = structure(task, pinned + chosen, output)      # fixed sections, fixed order, same bytes every time
    result = compress(task, pinned + chosen, output, limit)   # guarantee the limit; mark any cut

`build_context` runs select, structure and compress on packets you already have;
`ContextBuilder` adds gather in front. Token counts are exact (tiktoken o200k_base) and are
computed once per packet, when the packet is made.

The layout of the rendered context, and why:

    [Role & Policies]      the system's own instructions: pinned, never scored, never cut
    [Task]                 the user's task: never cut
    [State]                task state, blockers, next actions (notes)
    [Evidence]             documents and tool results
    [Context]              conversation history, general notes
    [Output]               how to answer: never cut

Every optional entry is one line `- (source, YYYY-MM-DD HH:MM) text`, its further lines
indented by two spaces, so retrieved text can never pose as a section header. Token counts add
up exactly: every section starts with "[", every entry with "-", each ends with a newline, and
o200k_base never merges a newline with a following "[" or "-" into one token. So the context's
count is the count of its fixed parts plus the `tokens` of each entry, which is what lets
select fill the budget exactly.

The package, one concern per module (this module re-exports what is used through it):

    constants    the sections, where packets go, the default output, the words left out
    packets      Packet, as_datetime, load_packets
    config       ContextConfig, BudgetError
    matching     terms, query_terms, overlap, relevance (Chapter 06's notes use them too)
    selection    recency, score, explain_selection, greedy_fill, select
    render       structure, section_tokens, mandatory_tokens, candidate_budget
    compression  compress
    pipeline     build_context, gather, ContextBuilder
"""
from __future__ import annotations

from solutions.gssc.compression import compress
from course.givens.gssc.config import BudgetError, ContextConfig
from course.givens.gssc.constants import DEFAULT_OUTPUT, SECTIONS
from course.givens.gssc.matching import query_terms, terms
from solutions.gssc.matching import relevance
from course.givens.gssc.packets import Packet, as_datetime, load_packets, packet_from_dict
from solutions.gssc.pipeline import Built, ContextBuilder, build_context, gather
from solutions.gssc.render import candidate_budget, mandatory_tokens, section_tokens, structure
from solutions.gssc.selection import (default_now, explain_selection, greedy_fill, recency, score,
                                      select)
from solutions.gssc.self_test import self_test
from solutions.tokens import count_tokens

__all__ = [
    "BudgetError", "Built", "ContextBuilder", "ContextConfig", "DEFAULT_OUTPUT", "Packet",
    "SECTIONS", "as_datetime", "build_context", "candidate_budget", "compress", "count_tokens",
    "default_now", "explain_selection", "gather", "greedy_fill", "load_packets", "mandatory_tokens",
    "packet_from_dict", "query_terms", "recency", "relevance", "score", "section_tokens", "select",
    "self_test", "structure", "terms",
]
