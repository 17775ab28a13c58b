"""Chapter 13's lesson support: the raw token stream of a reply, simulated per-token latency for
"start tools early", Claude-style signed thinking blocks (simulated on the client), and the long
tool loop measured under each history policy and each variant of thinking question 2. The
answers are in `solutions.reasoning_stream`; the loop and its probes are the chapter's givens.

Simulated latency. The teaching model computes its whole reply at once and sends every chunk
immediately, so nothing here is timed. `paced` puts each chunk at the time a model decoding
`tokens_per_second` tokens per second would have finished it: the running sum of the chunk texts'
o200k_base tokens, divided by the rate (prefill and the network are not simulated). So the
figures depend only on token counts: the same on every machine.

Signed thinking blocks (Anthropic's rule, simulated here, not by the teaching model's server):
the server signs each thinking block (`sign`); inside the current tool loop (after the last real
user message) every assistant message with tool calls must come back with its block and
signature unchanged (`signed_problems` names the HTTP 400 a client would get); blocks before the
last user message are ignored, so the prompt holds what Qwen3's rule keeps: the measurement sends
the signed history, without the signature field, to the since-last-user teaching model.

The loop measurement sends every `stride`-th request (and requests 10, 50 and the last) to a
private teaching model, as chapter 11 does: `prompt_tokens` and the 400s come from the server;
`cached_tokens` is what the server reused from the request sent before (a lower bound of what an
agent sending every request sees). The token size of every request is counted offline with the
template, and the bill is priced from those counts with the cache estimated as an agent sending
every request would get it (the messages shared with the request before, OpenAI's rule: nothing
below 1,024 tokens, then in 128-token steps).
"""
from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from functools import lru_cache

from course.givens.reasoning_stream import (FIELD, LOOP_TOOLS, PASS_BACK, REASONER, SINCE_LAST_USER,
                                            STRIP, decision_record, last_real_user, loop_history,
                                            loop_step, probe, reason, think_tokens)
from course.llm.reasoning import prompt_view
from course.llm.template import (IM_END, completion_token_count, encoding, fixed_token_count,
                                 message_body, message_token_count, render_text, think_text)
from solutions.costs import price_run
from solutions.reasoning_stream import first_ready_call, history_for, parse_stream, reasoning_budget

# ------------------------------------------------------------------------ the raw stream


def chunk_dicts(stream) -> list[dict]:
    """The SDK's chunks as the plain dicts of the Server-Sent Events."""
    return [chunk.model_dump() for chunk in stream]


def reply_tokens(message: dict) -> list[tuple[str, str]]:
    """A reasoning model's reply as the template writes it, token by token: (kind, text) with
    kind "think" (the `<think>` block), "text" (content and tool calls) or "end" (<|im_end|>)."""
    enc = encoding()
    out = []
    if isinstance(message.get(FIELD), str):
        out += [("think", enc.decode_single_token_bytes(t).decode("utf-8", "replace"))
                for t in enc.encode_ordinary(think_text(message[FIELD]))]
    out += [("text", enc.decode_single_token_bytes(t).decode("utf-8", "replace"))
            for t in enc.encode_ordinary(message_body(message))]
    return out + [("end", str(IM_END))]


def delta_kind(chunk: dict) -> str:
    """What one chunk carries: role, reasoning, text, call i opened (name), call i arguments,
    finish (its finish_reason), usage."""
    if not chunk.get("choices"):
        return "usage" if chunk.get("usage") else "empty"
    choice = chunk["choices"][0]
    delta = choice.get("delta") or {}
    if delta.get("role"):
        return "role"
    if delta.get("reasoning_content") is not None:
        return "reasoning"
    if delta.get("content"):
        return "text"
    calls = delta.get("tool_calls") or []
    if calls:
        call = calls[0]
        if (call.get("function") or {}).get("name"):
            return f"call {call['index']} opened ({call['function']['name']})"
        return f"call {call['index']} arguments"
    if choice.get("finish_reason"):
        return f"finish ({choice['finish_reason']})"
    return "empty"


def kind_runs(chunks: list[dict]) -> list[tuple[str, int]]:
    """The chunks' kinds in order, runs of the same kind collapsed: [(kind, how many), ...]."""
    runs: list[tuple[str, int]] = []
    for chunk in chunks:
        kind = delta_kind(chunk)
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1] + 1)
        else:
            runs.append((kind, 1))
    return runs


def chunk_tokens(chunk: dict) -> int:
    """The tokens a model decodes to write one chunk's delta (its text, reasoning, name and
    argument pieces)."""
    enc = encoding()
    total = 0
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        for key in ("content", "reasoning_content"):
            if delta.get(key):
                total += len(enc.encode_ordinary(delta[key]))
        for call in delta.get("tool_calls") or ():
            fn = call.get("function") or {}
            total += sum(len(enc.encode_ordinary(fn.get(k) or "")) for k in ("name", "arguments"))
    return total


def paced(chunks: list[dict], tokens_per_second: float) -> list[tuple[float, dict]]:
    """Each chunk with the time (seconds from the first token) a model decoding
    `tokens_per_second` would have finished it: simulated from token counts, never measured."""
    out, tokens = [], 0
    for chunk in chunks:
        tokens += chunk_tokens(chunk)
        out.append((tokens / tokens_per_second, chunk))
    return out


@dataclass
class EarlyStart:
    starts: list[tuple[str, str, float]]   # (call id, tool name, start time in seconds)
    reply_done: float                      # when the last chunk arrived
    first_streamed: float | None           # first tool start, streaming
    first_whole: float | None              # first tool start, waiting for the whole reply
    done_streamed: float                   # every tool finished, streaming
    done_whole: float                      # every tool finished, waiting for the whole reply


def start_early(chunks: list[dict], tokens_per_second: float, tool_seconds,
                tools=None) -> EarlyStart:
    """The streaming agent loop on a paced stream: after every chunk, the reply so far
    (parse_stream) is asked for a call that may start (first_ready_call), which starts at once;
    each tool runs `tool_seconds` (a number, or seconds by tool name), all in parallel. Against
    it, the loop that waits for the whole reply and then starts every call."""
    def seconds(name):
        return tool_seconds[name] if isinstance(tool_seconds, dict) else tool_seconds

    timed = paced(chunks, tokens_per_second)
    starts: list[tuple[str, str, float]] = []
    for n, (t, _) in enumerate(timed, 1):
        partial = parse_stream([c for _, c in timed[:n]])
        while (call := first_ready_call(partial, tools, {s[0] for s in starts})) is not None:
            starts.append((call["id"], call["function"]["name"], t))
    done = timed[-1][0] if timed else 0.0
    calls = parse_stream(chunks)["tool_calls"] or []
    whole = [done + seconds(c["function"]["name"]) for c in calls]
    return EarlyStart(starts, done, starts[0][2] if starts else None, done if calls else None,
                      max([s[2] + seconds(s[1]) for s in starts] + [done]), max(whole + [done]))


# ------------------------------------------------------------------ signed thinking blocks
_KEY = b"teaching-signing-key (simulated; a real provider's key never leaves it)"
SIGNATURE = "reasoning_signature"


def sign(reasoning: str) -> str:
    return "sig_" + hmac.new(_KEY, reasoning.encode(), hashlib.sha256).hexdigest()[:24]


def signed(messages: list) -> list:
    """The history as a Claude-style API returns it: each thinking block with its signature."""
    return [{**m, SIGNATURE: sign(m[FIELD])} if m.get("role") == "assistant"
            and isinstance(m.get(FIELD), str) else m for m in messages]


def signed_problems(messages: list) -> list[str]:
    """The 400s of the simulated signed-block rule: inside the current tool loop every assistant
    message with tool calls needs its thinking block back, signature valid (unchanged text).
    Blocks before the last real user message are not checked (they are ignored)."""
    since = last_real_user(messages)
    found = []
    for i, m in enumerate(messages):
        if i <= since or m.get("role") != "assistant" or not m.get("tool_calls"):
            continue
        if not isinstance(m.get(FIELD), str) or not m.get(SIGNATURE):
            found.append(f"messages[{i}]: a tool loop needs this message's thinking block back "
                         f"(with its signature)")
        elif not hmac.compare_digest(m[SIGNATURE], sign(m[FIELD])):
            found.append(f"messages[{i}]: invalid signature in thinking block (the text was changed)")
    return found


def unsigned(messages: list) -> list:
    return [{k: v for k, v in m.items() if k != SIGNATURE} if SIGNATURE in m else m for m in messages]


# ------------------------------------------------------------------------ the long loop
def keep_last(messages: list, n: int) -> list:
    """Reasoning kept per decision: the newest `n` assistant messages keep their raw reasoning,
    older ones keep only their decision record."""
    out, seen = list(messages), 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "assistant" and isinstance(m.get(FIELD), str):
            seen += 1
            if seen > n:
                out[i] = {**m, FIELD: decision_record(m[FIELD])}
    return out


# variant: (the model's history policy, what the client does to the history, how it is labelled)
VARIANTS = {
    "strip (R1)": (STRIP, lambda h: history_for(STRIP, h)),
    "pass back (V4/Kimi/GLM)": (PASS_BACK, lambda h: history_for(PASS_BACK, h)),
    "since last user (Qwen3)": (SINCE_LAST_USER, lambda h: history_for(SINCE_LAST_USER, h)),
    "signed blocks (Claude, simulated)": (SINCE_LAST_USER, lambda h: signed(h)),
    "TQ2: raw last 5, records before": (PASS_BACK, lambda h: keep_last(h, 5)),
    "TQ2: budget 1,000 tokens": (PASS_BACK, lambda h: reasoning_budget(h, 1_000)),
    "TQ2: records only": (PASS_BACK, lambda h: reasoning_budget(h, 0)),
}
CHECKPOINTS = (10, 50, 200)


@lru_cache(maxsize=50_000)
def _tokens(key: str, think: bool) -> int:
    return message_token_count(json.loads(key), think)


def rendered_sizes(messages: list, policy: str) -> list[int]:
    """Each message's tokens in the prompt under `policy` (reasoning rendered where kept)."""
    view = prompt_view(messages, policy)
    return [_tokens(json.dumps(m, sort_keys=True, ensure_ascii=False),
                    m.get("role") == "assistant" and isinstance(m.get(FIELD), str)) for m in view]


def _cached(before: list, after: list, sizes: list[int]) -> int:
    shared = 0
    for i, (a, b) in enumerate(zip(before, after)):
        if a != b:
            break
        shared += sizes[i]
    return 0 if shared < 1024 else shared // 128 * 128


@dataclass
class LoopResult:
    variant: str
    policy: str
    prompts: list[int] = field(default_factory=list)   # offline, every request 1..steps+1
    estimated_cached: list[int] = field(default_factory=list)
    sent: dict = field(default_factory=dict)           # request -> (prompt_tokens, cached_tokens)
    in_loop: dict = field(default_factory=dict)        # checkpoint -> probes answered in the prompt
    after_user: dict = field(default_factory=dict)     # checkpoint -> after a new user question
    refused: list = field(default_factory=list)
    completions: list[int] = field(default_factory=list)  # each request's reply (the recorded step)
    reasoning: int = 0

    def at(self, j: int) -> dict:
        prompt, cached = self.sent[j]
        return {"prompt": prompt, "cached": cached, "in_loop": self.in_loop[j],
                "after_user": self.after_user[j]}

    def bill(self, prices) -> tuple[float, float]:
        """(USD for the whole loop, of which the reasoning tokens' share as output)."""
        total = price_run(self.prompts, self.estimated_cached, prices, completion_tokens=self.completions)
        return total, self.reasoning * prices.output / 1e6


def probes_kept(messages: list, policy: str, upto: int) -> int:
    """How many of steps 1..upto have their probe's answer in the prompt the model reads."""
    text = render_text(messages, LOOP_TOOLS, reasoning=policy)
    return sum(reason(k) in text for k in range(1, upto + 1))


def measure_loop(variant: str, client, steps: int = 200, stride: int = 10) -> LoopResult:
    """The loop of `steps` calls under one variant: request j sends steps 1..j-1 (as the variant
    prepares them); every stride-th and each checkpoint is sent to `client` (a private teaching
    model). Probes are read from the prompt at each checkpoint, inside the loop and after a new
    user question."""
    policy, prepare = VARIANTS[variant]
    model = REASONER[policy]
    result = LoopResult(variant, policy)
    fixed = fixed_token_count(LOOP_TOOLS)
    history, previous = loop_history(0), None
    for j in range(1, steps + 1):
        if j > 1:
            history += loop_step(j - 1)
        sent = prepare(history)
        view = prompt_view(unsigned(sent), policy)
        sizes = rendered_sizes(sent, policy)
        result.prompts.append(fixed + sum(sizes))
        result.estimated_cached.append(_cached(previous, view, sizes) if previous else 0)
        previous = view
        if j % stride == 0 or j in CHECKPOINTS:
            problems = signed_problems(sent) if "signed" in variant else []
            if problems:
                result.refused.append((j, problems))
            reply = client.chat.completions.create(model=model, messages=unsigned(sent), tools=LOOP_TOOLS)
            usage = reply.usage
            result.sent[j] = (usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens)
        if j in CHECKPOINTS:
            result.in_loop[j] = probes_kept(unsigned(sent), policy, j - 1)
            question = {"role": "user", "content": probe(1)["question"]}
            result.after_user[j] = probes_kept(unsigned(sent) + [question], policy, j - 1)
    for k in range(1, steps + 1):
        step = loop_step(k)[0]
        result.completions.append(completion_token_count(step, think=True))
        result.reasoning += think_tokens(step[FIELD])
    return result
