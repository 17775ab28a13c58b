"""Sampling with a seed: `temperature`, `top_p` and `seed`, as the OpenAI API takes them.

A language model samples every token from a probability distribution; the teaching model has
no tokens to sample, only the choices its rules make. What the simulation does:

  - An omitted temperature is 0 for the teaching model (OpenAI's default is 1), so every
    lesson's reply is the same every run. At temperature 0 every choice is its best-scored
    candidate (ties: the first in the rule's order), which is exactly the reply the decision
    list gave before sampling existed; `seed` and `top_p` then change nothing.
  - At a temperature T > 0, wherever a rule chooses among scored candidates it draws one from
    softmax(score / T): p_i = exp(s_i / T) / sum_j exp(s_j / T). The choices, with their
    candidates and scores (CHOICES below lists them for the docs):
      which tool fits an ask (rule memory; planning.plan_tool_groups): every ordinary offered
        tool, 2 points per content word of the ask shared with its name, 1 per word shared with
        its description and parameters, plus a few-shot rut's bonus for the tool its recent
        alike turns repeated (course/llm/rut.py: 1 per turn, at most 6, from 3 turns); an ask
        no tool scores above 0 for still plans no call;
      the best-fitting tool when tool_choice is "required" (rule required): the same scores
        over the whole request, every ordinary tool a candidate;
      which value fills an enum parameter (planning.fill_arguments): 5 if the request names the
        value, +2 for the enum's first value (the default a schema lists first);
      which form of a name fills a parameter whose description gives examples ("Timezone name,
        e.g. America/Vancouver"): each example that contains the name the request gives, 2;
        the name as the request writes it, 1;
      whether the skills rule loads a skill, and which: every catalogue skill, 1 point per
        content word shared with its name and description, and "no skill" at 1.5 (at
        temperature 0 a skill needs 2 shared words);
      whether the memory rule answers from an earlier turn's result when no tool fits: every
        such result, 1 point per word of the question it shares, and "none" at 1.5.
    The scores come from the context: a tool's name and description, a parameter's enum and
    examples, a skill's catalogue line. Better definitions raise the right candidate's score,
    so they make the right choice more likely (chapter 12 measures it).
  - `top_p` (nucleus sampling) is honoured: the candidates, most probable first, are cut to the
    fewest whose probabilities add up to top_p (at least one is kept), and the draw is among
    those, renormalised. 1 (the default) keeps them all.
  - `seed` (an integer) fixes the draws: draw k of a reply is u_k, the first 52 bits of
    sha256("seed:k") as a fraction of 1, and the candidate drawn is the first whose cumulative
    probability exceeds u_k. The same seed and request give the same reply, in any process,
    streamed or not; another seed may give another. With no seed at T > 0 the seed is derived
    from the request (the first 63 bits of the sha256 of the prompt's token ids) and the trace
    says so: the course stays deterministic offline, where OpenAI would answer differently
    from call to call. Sending that seed explicitly gives the same reply.
  - The reply's id and its tool calls' ids come from the prompt alone at temperature 0; when
    sampling, the temperature, top_p and seed are mixed in. `system_fingerprint` is
    "teaching-model-1": the same fingerprint, seed and request give the same reply.
  - Usage and the prompt cache do not depend on sampling: the prompt is the same, and
    `completion_tokens` counts whatever reply was drawn.
  - The trace: a request that sets temperature, top_p or seed gets a step `sampling` saying
    which settings apply (an omitted temperature: "0 for the teaching model, unlike OpenAI's
    default of 1"), then one `sampling` step per choice among two or more candidates: the
    candidates, their scores, their probabilities (after top_p), the draw u and the candidate
    chosen; the step's extra field `draw` holds the same as data. A request that sets none of
    them gets none of these steps, so the traces the lessons print are as they were.

What a real provider does differently: it samples every token, so any part of a reply can
change, not only these choices; OpenAI's seed is best effort ("mostly" deterministic, and only
while `system_fingerprint` stays the same); its default temperature is 1; reasoning models take
only their default temperature; Anthropic's temperature runs from 0 to 1.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

NO_SKILL_SCORE = 1.5  # "no skill" / "no earlier result": between 1 and 2 shared words
SHOWN = 10  # candidates the trace names one by one; the rest are counted
KEPT = 20  # candidates the step's `draw` data lists
# The scored choices, for the docs and `python -m course.llm --help`: (where, candidates: scores)
CHOICES = (
    ("which tool fits an ask (memory, required)",
     "each tool: 2 per word shared with its name, 1 per word shared with its description or "
     "parameters; in memory, +1 per turn (at most 6) for the tool a few-shot rut of 3 or more alike turns "
     "repeated"),
    ("which enum value fills a parameter",
     "5 if the request names the value, +2 for the enum's first"),
    ("which form of a name fills a parameter",
     "2 for a description's example containing the name, 1 for the name as written"),
    ("whether a skill is loaded, and which (skills)",
     "1 per word shared with the skill's catalogue line; no skill: 1.5"),
    ("whether an earlier result answers when no tool fits (memory)",
     "1 per word of the question it shares; none: 1.5"),
)


def _number(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass
class Sampler:
    """One request's sampling settings and draws. Its steps go into `trace` as they happen."""
    temperature: float = 0
    top_p: float = 1
    seed: int | None = None
    derived: bool = False  # the seed was derived from the request, not sent
    shown: bool = False  # the request set temperature, top_p or seed: choices are traced
    temperature_sent: bool = False
    trace: list = field(default_factory=list)
    draws: int = 0

    @classmethod
    def from_body(cls, body: dict, prompt_hash: str = "", trace: list | None = None) -> "Sampler":
        """The settings of a validated request; `prompt_hash` (hex) derives a missing seed."""
        temperature = body.get("temperature")
        top_p = body.get("top_p")
        seed = body.get("seed")
        sampler = cls(temperature=temperature or 0, top_p=1 if top_p is None else top_p,
                      seed=seed, trace=trace if trace is not None else [],
                      temperature_sent=temperature is not None,
                      shown=any(body.get(k) is not None for k in ("temperature", "top_p", "seed")))
        if sampler.sampling and seed is None:
            sampler.seed, sampler.derived = derived_seed(prompt_hash), True
        return sampler

    @property
    def sampling(self) -> bool:
        return self.temperature > 0

    def settings(self) -> str:
        """The trace's first sampling step: what the request's settings do."""
        if not self.sampling:
            said = ("temperature 0" if self.temperature_sent else
                    "temperature omitted: 0 for the teaching model (OpenAI's default is 1)")
            ignored = [f"{k} {_number(v)}" for k, v in (("top_p", self.top_p), ("seed", self.seed))
                       if (k == "top_p" and v != 1) or (k == "seed" and v is not None)]
            return (f"{said}: every choice is its best-scored candidate (ties: the first), the "
                    f"same reply every time" + (f"; {', '.join(ignored)} change nothing"
                                                 if ignored else ""))
        seed = (f"no seed sent, so one derived from the request: {self.seed} (send seed="
                f"{self.seed} for the same draws)" if self.derived else f"seed {self.seed}")
        cut = "all candidates" if self.top_p >= 1 else f"the most probable up to {_number(self.top_p)}"
        return (f"temperature {_number(self.temperature)}: each choice among scored candidates "
                f"is drawn from softmax(score / {_number(self.temperature)}); top_p "
                f"{_number(self.top_p)} ({cut}); {seed}")

    def choose(self, what: str, candidates: list[tuple[str, float]]) -> int:
        """The index of the chosen candidate: the best score (ties: the first) at temperature
        0, else a draw from the softmax; a choice among two or more is traced when shown."""
        best = max(range(len(candidates)), key=lambda i: (candidates[i][1], -i))
        if len(candidates) < 2:
            return best
        if not self.sampling:
            if self.shown:
                listed = _listed(candidates, None)
                self._step(f"{what}: {listed}; temperature 0, so the best -> "
                           f"{candidates[best][0]}", candidates, None, None, best)
            return best
        probabilities = softmax([s for _, s in candidates], self.temperature)
        kept = nucleus(probabilities, self.top_p)
        u = uniform(self.seed, self.draws)
        self.draws += 1
        total = sum(probabilities[i] for i in kept)
        chosen, running = kept[-1], 0.0
        for i in kept:
            running += probabilities[i] / total
            if u < running:
                chosen = i
                break
        final = [probabilities[i] / total if i in kept else 0.0 for i in range(len(candidates))]
        self._step(f"{what}: {_listed(candidates, final, kept)}; draw u = {u:.3f} -> "
                   f"{candidates[chosen][0]}", candidates, final, u, chosen)
        return chosen

    def _step(self, why, candidates, final, u, chosen) -> None:
        order = sorted(range(len(candidates)), key=lambda i: (-(final[i] if final else 0),
                                                              -candidates[i][1], i))
        data = {"candidates": [[candidates[i][0], candidates[i][1],
                                None if final is None else round(final[i], 4)]
                               for i in order[:KEPT]],
                "others": max(len(candidates) - KEPT, 0),
                "u": None if u is None else round(u, 4), "chosen": candidates[chosen][0]}
        self.trace.append({"rule": "sampling", "why": why, "evidence": [], "draw": data})


def _listed(candidates, final, kept=()) -> str:
    """'name score (p 0.912), ...', most probable first, SHOWN of them and the rest counted."""
    order = sorted(range(len(candidates)), key=lambda i: (-(final[i] if final else 0),
                                                          -candidates[i][1], i))
    parts = []
    for i in order[:SHOWN]:
        label, score = candidates[i][0], candidates[i][1]
        if final is None:
            parts.append(f"{label} {_number(score)}")
        elif i in kept:
            parts.append(f"{label} {_number(score)} (p {final[i]:.3f})")
        else:
            parts.append(f"{label} {_number(score)} (cut by top_p)")
    rest = len(candidates) - SHOWN
    if rest > 0:
        parts.append(f"and {rest} more" + ("" if final is None else
                                           f" (p {sum(final[i] for i in order[SHOWN:]):.3f} together)"))
    return ", ".join(parts)


def softmax(scores: list[float], temperature: float) -> list[float]:
    top = max(scores)
    weights = [math.exp((s - top) / temperature) for s in scores]  # the best weighs 1: no overflow
    total = sum(weights)
    return [w / total for w in weights]


def nucleus(probabilities: list[float], top_p: float) -> list[int]:
    """Indices kept by top_p, most probable first (ties: in order): the fewest whose
    probabilities add up to top_p, at least one."""
    order = sorted(range(len(probabilities)), key=lambda i: (-probabilities[i], i))
    kept, running = [], 0.0
    for i in order:
        kept.append(i)
        running += probabilities[i]
        if running >= top_p - 1e-12:
            break
    return kept


def uniform(seed: int, k: int) -> float:
    """Draw k of a seed: a number in [0, 1) from sha256("seed:k")."""
    digest = hashlib.sha256(f"{seed}:{k}".encode()).digest()
    return (int.from_bytes(digest[:7], "big") >> 4) / float(1 << 52)


def derived_seed(prompt_hash: str) -> int:
    """The seed of a request that sends none: the first 63 bits of its prompt's hash."""
    return int(prompt_hash[:16] or "0", 16) >> 1


def choose(sampler: "Sampler | None", what: str, candidates: list[tuple[str, float]]) -> int:
    """`sampler.choose(...)`, or the best-scored candidate (ties: the first) without one."""
    if sampler is None:
        return max(range(len(candidates)), key=lambda i: (candidates[i][1], -i))
    return sampler.choose(what, candidates)
