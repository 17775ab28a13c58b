"""Text of a chosen length in a model's tokens, made from a seed: the system prompts of the cache
experiment and the haystacks of the needle experiment.

Every line is generated, not copied from a public text. A text that must share no prefix with
another seed's starts with a name made from the seed (`letters`).
"""
from __future__ import annotations

import random
from collections.abc import Callable

SUBJECTS = ("The courier", "A new clerk", "The night shift", "Our warehouse team", "The auditor",
            "A returning customer", "The support desk", "The regional office", "A field engineer",
            "The billing system", "The spring catalogue", "A delivery van", "The help centre")
VERBS = ("checked", "moved", "repainted", "counted", "reviewed", "delayed", "sorted", "labelled",
         "photographed", "archived", "shipped", "repaired", "measured", "described")
OBJECTS = ("the blue crates", "the spare saddles", "every loose receipt", "the old brochures",
           "two pallets of tyres", "the display stands", "a box of brake pads", "the shelf labels",
           "the rental helmets", "the winter stock", "the courtyard bins", "the coffee machine")
PLACES = ("near the loading bay", "before lunch", "on the second floor", "after the inventory",
          "behind the showroom", "during the storm", "by the east gate", "at the start of the week",
          "in the basement", "next to the workshop", "while it rained", "on Thursday morning")

POLICY = ("Refunds over {n} dollars need a supervisor's approval code.",
          "Orders shipped to region {n} take two extra working days.",
          "A customer may exchange at most {n} items per month.",
          "Warranty claims older than {n} days go to the claims team.",
          "Quote ticket numbers in full; ticket prefixes below {n} are archived.",
          "Never promise a delivery window shorter than {n} hours.")


def haystack_sentence(rng: random.Random) -> str:
    """One plain, unremarkable sentence (the kind that hides a needle)."""
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(PLACES)}."


def policy_line(rng: random.Random, number: int) -> str:
    """One numbered rule of a support agent's system prompt."""
    return f"Rule {number}: " + rng.choice(POLICY).format(n=rng.randint(2, 900))


def lines_to_tokens(make_line: Callable[[int], str], target: int, count: Callable[[str], int]) -> list[str]:
    """Lines `make_line(0)`, `make_line(1)`, ... until their tokens (counted one line at a time,
    with the newline) reach `target`. The joined text's exact count can differ by a token or so
    at the seams; callers report the exact count of what they send."""
    lines, total = [], 0
    while total < target:
        line = make_line(len(lines))
        lines.append(line)
        total += count(line + "\n")
    return lines


def letters(n: int) -> str:
    """A non-negative number written in letters (0 -> "a", 25 -> "z", 26 -> "ba"): a name that
    differs for every seed and holds no digits (a digit could pass for a key)."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out = chr(ord("a") + r) + out
        if n == 0:
            return out


def haystack(seed: int, target: int, count: Callable[[str], int]) -> list[str]:
    """Random sentences of about `target` tokens, drawn from the seed."""
    rng = random.Random(f"haystack-{seed}")
    return lines_to_tokens(lambda _: haystack_sentence(rng), target, count)


def policy(seed: int, target: int, count: Callable[[str], int]) -> list[str]:
    """Numbered rules of about `target` tokens."""
    rng = random.Random(f"policy-{seed}")
    return lines_to_tokens(lambda i: policy_line(rng, i + 1), target, count)
