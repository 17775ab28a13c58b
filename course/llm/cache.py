"""Prompt caching by real prefix matching, with OpenAI's reporting rules.

A provider keeps the attention state (the KV cache) of prompts it has seen, in blocks. A new
prompt reuses the blocks of the longest prefix it shares *token for token* with an earlier
prompt. We model that with chained block hashes: block k's key hashes block k's tokens together
with block k-1's key, so a key matches only if everything before it matched too, and the number
of leading blocks found equals the longest shared prefix rounded down to the block size.

OpenAI's rules (the default): nothing is reported below `minimum` (1024) tokens, then in
`block` (128) token steps. Memory is bounded: least-recently-used blocks are evicted.

The chain starts from the model's name: a KV cache belongs to one model's weights, so the same
prompt sent to another model shares nothing (switching models mid-session loses the whole
cache, as the textbook's second section says of production agents, 21.6.9).
"""
from __future__ import annotations

import hashlib
import threading
from array import array
from collections import OrderedDict


def block_keys(tokens: list[int], block: int, model: str = "") -> list[bytes]:
    """The chained key of every full block of `tokens` (a partial block is never cached), for
    `model`: the chain starts from its name, so no block is shared between models."""
    data = array("I", tokens).tobytes()
    step = block * 4
    keys, previous = [], hashlib.blake2b(model.encode("utf-8"), digest_size=16).digest() if model else b""
    for start in range(0, (len(tokens) // block) * step, step):
        previous = hashlib.blake2b(previous + data[start:start + step], digest_size=16).digest()
        keys.append(previous)
    return keys


class PrefixCache:
    def __init__(self, block: int = 128, minimum: int = 1024, capacity_blocks: int = 200_000):
        if block < 1 or minimum < 0 or capacity_blocks < 1:
            raise ValueError("block and capacity_blocks must be positive, minimum non-negative")
        self.block = block
        self.minimum = minimum
        self.capacity_blocks = capacity_blocks
        self._blocks: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()

    def lookup_and_store(self, tokens: list[int], model: str = "") -> int:
        """Report how many of `tokens` were cached for `model`, then remember this prompt's blocks."""
        return self.lookup_and_store_keys(block_keys(tokens, self.block, model))

    def lookup_and_store_keys(self, keys: list[bytes]) -> int:
        """lookup_and_store for a prompt given by its block_keys (computed anywhere)."""
        with self._lock:
            hits = 0
            for key in keys:
                if key not in self._blocks:
                    break
                hits += 1
            for key in keys:  # store (or refresh) every block of this prompt
                self._blocks[key] = None
                self._blocks.move_to_end(key)
            while len(self._blocks) > self.capacity_blocks:
                self._blocks.popitem(last=False)
        cached = hits * self.block
        return cached if cached >= self.minimum else 0

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()

    def __len__(self) -> int:
        return len(self._blocks)
