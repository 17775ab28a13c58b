"""The session's trace as plain records: one per model request, the run it belongs to, the
totals, and why its prompt cache stopped where it did. Pure functions of span attributes, so the
inspector's logic is tested without a widget or a model."""
from __future__ import annotations

import json
from dataclasses import dataclass

# OpenAI's reporting rules, which the teaching model follows (course/llm/cache.py): nothing
# below MINIMUM tokens, then whole BLOCKs. A provider with other rules is explained with these,
# and the explanation says so where its figure does not fit.
BLOCK, MINIMUM = 128, 1024


@dataclass(frozen=True)
class Request:
    number: int                 # 1-based, in the order the requests ended
    span_id: str
    run: str | None             # the agent run's name, if it ran inside one
    model: str
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None   # None: not reported
    parts: dict                 # part -> tokens, in order
    cache_key: str
    previous_span_id: str | None
    diverges_at_unit: int | None
    shared_prefix_tokens: int | None
    diverging_part: str | None
    compaction: str | None
    messages: list | None       # only when contents were recorded


def _hex(number: int | None) -> str | None:
    return None if number is None else format(number, "016x")


def request_from_span(number: int, attributes: dict, span_id: str, run: str | None) -> Request:
    """One request record from its span's attributes."""
    a = attributes
    messages = a.get("gen_ai.input.messages")
    policy, layer = a.get("course.compaction.policy"), a.get("course.compaction.layer")
    return Request(
        number=number, span_id=span_id, run=run,
        model=a.get("gen_ai.request.model", ""),
        input_tokens=a.get("gen_ai.usage.input_tokens"),
        output_tokens=a.get("gen_ai.usage.output_tokens"),
        cached_tokens=a.get("gen_ai.usage.cache_read.input_tokens"),
        parts=dict(zip(a.get("course.context.parts", ()), a.get("course.context.part_tokens", ()))),
        cache_key=a.get("course.cache.key", ""),
        previous_span_id=a.get("course.cache.previous_span_id"),
        diverges_at_unit=a.get("course.cache.diverges_at_unit"),
        shared_prefix_tokens=a.get("course.cache.shared_prefix_tokens"),
        diverging_part=a.get("course.cache.diverging_part"),
        compaction=None if policy is None else (policy if layer is None else f"{layer}: {policy}"),
        messages=json.loads(messages) if isinstance(messages, str) else None,
    )


def requests(spans=None) -> list[Request]:
    """The session's model requests (chat spans), in the order they ended; `spans`: finished
    spans (default: those tracing kept in memory)."""
    if spans is None:
        from course.tracing.setup import current

        state = current()
        if state is None:
            return []
        state.flush()
        spans = list(state.store.spans)
    runs = {_hex(s.context.span_id): s.attributes.get("gen_ai.agent.name") for s in spans
            if s.attributes.get("gen_ai.operation.name") == "invoke_agent"}
    by_id = {_hex(s.context.span_id): s for s in spans}
    out = []
    for span in spans:
        if span.attributes.get("gen_ai.operation.name") != "chat":
            continue
        run = None
        parent = span.parent
        while parent is not None and run is None:  # the nearest agent run above it
            pid = _hex(parent.span_id)
            run = runs.get(pid)
            above = by_id.get(pid)
            parent = above.parent if above is not None else None
        out.append(request_from_span(len(out) + 1, dict(span.attributes), _hex(span.context.span_id), run))
    return out


def totals(records: list[Request]) -> dict:
    """Requests, input, cached and output tokens, and tokens per part, over `records` (a
    figure a provider did not report counts as 0, and `unreported` says how many did not)."""
    parts: dict[str, int] = {}
    for r in records:
        for part, count in r.parts.items():
            parts[part] = parts.get(part, 0) + count
    return {"requests": len(records),
            "input_tokens": sum(r.input_tokens or 0 for r in records),
            "cached_tokens": sum(r.cached_tokens or 0 for r in records),
            "output_tokens": sum(r.output_tokens or 0 for r in records),
            "unreported": sum(r.cached_tokens is None for r in records),
            "parts": parts}


def by_run(records: list[Request]) -> dict:
    """`totals` per agent run (None: requests outside any run), in order of first request."""
    groups: dict = {}
    for r in records:
        groups.setdefault(r.run, []).append(r)
    return {run: totals(group) for run, group in groups.items()}


def longest_match(record: Request, records: list[Request], details: dict):
    """The earlier request with `record`'s cache key whose prompt shares the longest prefix of
    whole units with `record`'s: (its number, the tokens shared, the unit and part where it
    first differs, None when it does not), the latest of equals; None when there is no earlier
    request or a composition is not kept. `details`: span id -> Composition (what tracing keeps
    in memory). A prompt cache keeps earlier prompts too, not only the previous one."""
    from course.tracing.composition import divergence

    now = details.get(record.span_id)
    earlier = [r for r in records if r.number < record.number and r.cache_key == record.cache_key]
    if now is None or not earlier:
        return None
    best = None
    for r in earlier:
        before = details.get(r.span_id)
        if before is None:
            return None  # an earlier prompt we cannot see might be the longest
        where = divergence(before, now)
        # a request equal to an earlier one repeats its reply primer too
        shared = now.total if before.hashes == now.hashes else where.token
        if best is None or shared >= best[1]:
            best = (r.number, shared, where.unit, where.part)
    return best


def cache_reason(record: Request, longest=None, block: int = BLOCK,
                 minimum: int = MINIMUM) -> tuple[str, dict]:
    """Why `record`'s cached tokens stopped where they did: a code and its figures. `longest`:
    what `longest_match` found among the earlier requests (None: not searched).

    first         no earlier request with the same cache key in this session: a cold cache
    identical     the whole earlier prompt is a prefix of this one (up to `shared` tokens)
    diverged      the prefix shared with the previous request ends at `shared` tokens, where a
                  unit of part `part` differs; at most `reusable` (whole blocks) can be cached
    below_minimum the shared prefix is shorter than the provider's minimum
    short         this whole request repeats the start of the previous one, but is shorter than
                  the minimum
    fewer         the provider cached fewer tokens than the shared prefix allows (evicted,
                  another server, or other caching rules)
    older         more were cached than the previous request allows: an older request (`older`)
                  shares whole units that far (`older_shared` tokens)
    inside        more were cached than any earlier request's whole units allow: the unit where
                  the longest match ends (`older_unit`, `older_part`) starts as an earlier
                  prompt did, token for token (the trace compares whole units only)
    earlier       more were cached than the previous request allows, the earlier requests not
                  searched (`longest` None)
    unreported    the provider does not report cached tokens
    """
    if record.cached_tokens is None:
        return "unreported", {}
    if record.previous_span_id is None:
        return "first", {"cached": record.cached_tokens}
    shared = record.shared_prefix_tokens or 0
    reusable = shared // block * block
    figures = {"shared": shared, "reusable": reusable, "cached": record.cached_tokens,
               "part": record.diverging_part, "unit": record.diverges_at_unit,
               "minimum": minimum, "block": block}
    if record.cached_tokens < reusable and reusable >= minimum:
        return "fewer", figures
    if record.cached_tokens > reusable:  # not from the previous request's prefix alone
        if longest is None:
            return "earlier", figures
        number, tokens, unit, part = longest
        figures.update(older=number, older_shared=tokens, older_unit=unit, older_part=part)
        return ("older" if record.cached_tokens <= tokens // block * block else "inside"), figures
    if shared < minimum:
        return ("short" if record.diverges_at_unit is None else "below_minimum"), figures
    if record.diverges_at_unit is None:
        return "identical", figures
    return "diverged", figures
