"""Counting tokens (Chapter 02): text, whole chat requests, honest truncation, budgets.

`count_request_tokens` follows the teaching model's chat template *as its documentation
describes it* (the docstring of `course/llm/template.py`) and is written from that text alone:
it never imports the server's rendering or counting code. Comparing it with the
`usage.prompt_tokens` the server reports is therefore a real test that can fail. Real providers
use their own templates and tokenizers; there, `usage` is the ground truth and any local count
is an estimate.

Texts are encoded with `encode_ordinary`: text that happens to look like a special token
("<|endoftext|>") is counted as the plain text it is, never as a control token.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple
from course.paths import DATA_DIR

ENCODING_NAMES = ("o200k_base", "cl100k_base")
TEMPLATE_ENCODING = "o200k_base"  # the tokenizer the teaching model bills with

# The study guide's four samples (hands-on lab 1): an error message, Chinese, a path, JSON.
SEED_SAMPLES = (
    "Could NOT find ZLIB (missing: ZLIB_LIBRARY ZLIB_INCLUDE_DIR)",
    "交叉编译时找不到目标平台的 zlib 库",
    "/opt/homebrew/Cellar/abseil/20240722.0/include/absl/base/config.h",
    '{"path": "CMakeLists.txt", "offset": 101}',
)

CORPUS_DIR = DATA_DIR / "corpus"

# The template documents <|im_start|> and <|im_end|> as one token each but not their ids;
# request_token_ids uses these stand-ins, which no real token id can equal.
IM_START = -1
IM_END = -2
GENERATION_PROMPT = "assistant\n"


# --------------------------------------------------------------------------- encodings

@lru_cache(maxsize=None)
def _encoding_by_name(name: str):
    from course.tokenizer import encoding  # prepares the offline vocabulary first

    return encoding(name)


def get_encoding(encoding="o200k_base"):
    """A tiktoken Encoding from its name ("o200k_base", "cl100k_base") or as given."""
    if isinstance(encoding, str):
        if encoding not in ENCODING_NAMES:
            raise ValueError(f"unknown encoding {encoding!r}: the course ships "
                             f"{', '.join(ENCODING_NAMES)}")
        return _encoding_by_name(encoding)
    if hasattr(encoding, "encode_ordinary") and hasattr(encoding, "decode_bytes"):
        return encoding
    raise TypeError(f"encoding must be a name such as 'o200k_base' or a tiktoken Encoding, "
                    f"not {type(encoding).__name__}")


def count_tokens(text: str, encoding="o200k_base") -> int:
    """Number of tokens in `text` (special-token look-alikes count as plain text)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    return len(get_encoding(encoding).encode_ordinary(text))


def describe_sample(text: str, encoding="o200k_base", first: int = 8) -> tuple[int, int, list[str]]:
    """(characters, tokens, the first `first` tokens decoded one by one), as the seed prints.

    A token that holds only part of a multi-byte character decodes to '\\ufffd' here: that is
    what decoding a single token shows, and why `token_pieces` groups such tokens instead.
    """
    enc = get_encoding(encoding)
    ids = enc.encode(text)
    return len(text), len(ids), [enc.decode([i]) for i in ids[:first]]


def token_pieces(text: str, encoding="o200k_base") -> list[tuple[str, int]]:
    """Split `text` into the pieces its tokens cover, as (piece, number of tokens).

    Most pieces are one token. When a character's bytes are spread over several tokens (common
    for Chinese and emoji), those tokens are grouped into one piece so no piece shows a broken
    character. Joining the pieces gives back `text`; the counts add up to its token count.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    enc = get_encoding(encoding)
    token_bytes = enc.decode_single_token_bytes
    pieces: list[tuple[str, int]] = []
    pending, count = b"", 0
    for token in enc.encode_ordinary(text):
        pending += token_bytes(token)
        count += 1
        try:
            piece = pending.decode("utf-8")
        except UnicodeDecodeError:
            continue  # the piece ends inside a character: wait for the next token
        pieces.append((piece, count))
        pending, count = b"", 0
    if pending:  # only reachable for text with lone surrogates, which tiktoken replaces
        pieces.append((pending.decode("utf-8", errors="replace"), count))
    return pieces


# --------------------------------------------------------------------------- requests

# One encoder for all tool calls (json.dumps(..., ensure_ascii=False) builds one per call).
_to_json = json.JSONEncoder(ensure_ascii=False).encode
_json_string = json.encoder.encode_basestring  # what _to_json does for a str, without the call


def _fields(item, where: str, *at, whole: bool = False) -> Mapping:
    """A dict, or an openai SDK (pydantic) object's fields in place (`whole`: model_dump's copy)."""
    if type(item) is dict:
        return item
    if not whole and hasattr(item, "__pydantic_fields_set__"):  # extra fields are kept aside
        extra = item.__pydantic_extra__
        return {**item.__dict__, **extra} if extra else item.__dict__
    if isinstance(item, Mapping):
        return item
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_none=True)
    raise TypeError(f"{where.format(*at)} must be a dict, not {type(item).__name__}")


def _content_text(content, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        texts = []
        for j, part in enumerate(content):
            part = _fields(part, "{}[{}]", where, j)
            if part.get("type") == "text":
                text = part.get("text")
                if not isinstance(text, str):
                    raise TypeError(f"{where}[{j}].text must be a str, not {type(text).__name__}")
                texts.append(text)
        return "".join(texts)
    raise TypeError(f"{where} must be a string, a list of content parts or None, "
                    f"not {type(content).__name__}")


def _tool_call_text(call, i: int, j: int) -> str:
    """json.dumps({"id": id, "name": name, "arguments": arguments}), written value by value."""
    call = _fields(call, "messages[{}].tool_calls[{}]", i, j)
    function = _fields(call.get("function") or {}, "messages[{}].tool_calls[{}].function", i, j)
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        raise TypeError(f"messages[{i}].tool_calls[{j}].function.arguments must be the JSON string "
                        f"sent to the API, not {type(arguments).__name__} (json.dumps it first)")
    call_id, name = call.get("id"), function.get("name")
    call_id = _json_string(call_id) if type(call_id) is str else _to_json(call_id)
    name = _json_string(name) if type(name) is str else _to_json(name)
    arguments = _json_string(arguments)
    return f'\n<tool_call>{{"id": {call_id}, "name": {name}, "arguments": {arguments}}}</tool_call>'


def _message_text(message, i: int) -> str:
    """HEADER + "\\n" + BODY of one message, per the template's documentation."""
    message = _fields(message, "messages[{}]", i)
    role = message.get("role")
    if not isinstance(role, str):
        raise ValueError(f"messages[{i}] has no 'role' (got {role!r})")
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise ValueError(f"messages[{i}] is a tool result without a 'tool_call_id'")
        header = "tool " + call_id
    else:
        name = message.get("name")
        header = f"{role} {name}" if name else role
    body = message.get("content")
    if type(body) is not str:
        body = _content_text(body, f"messages[{i}].content")
    calls = message.get("tool_calls")
    if calls:
        if type(calls) is not list and (isinstance(calls, (str, Mapping))
                                        or not isinstance(calls, Sequence)):
            raise TypeError(f"messages[{i}].tool_calls must be a list, not {type(calls).__name__}")
        body += "".join([_tool_call_text(call, i, j) for j, call in enumerate(calls)])
    return header + "\n" + body


def _tools_text(tools) -> str:
    if isinstance(tools, (str, Mapping)) or not isinstance(tools, Sequence):
        raise TypeError(f"tools must be a list of tool definitions, not {type(tools).__name__}")
    return "tools\n" + "\n".join([_to_json(_fields(t, "tools[{}]", j, whole=True))
                                  for j, t in enumerate(tools)])


def _blocks(messages, tools) -> list[str]:
    """The texts that sit between <|im_start|> and <|im_end|>, in order."""
    if type(messages) is not list and (isinstance(messages, (str, Mapping))
                                       or not isinstance(messages, Sequence)):
        raise TypeError(f"messages must be a list of messages, not {type(messages).__name__}")
    blocks = [_tools_text(tools)] if tools else []
    blocks.extend([_message_text(m, i) for i, m in enumerate(messages)])
    return blocks


def count_request_tokens(messages, tools=None, encoding="o200k_base") -> int:
    """Prompt tokens of a chat request under the teaching model's documented template.

    Each block (the tools, then every message) is <|im_start|> TEXT <|im_end|> "\\n": two special
    tokens, the tokens of TEXT, the tokens of "\\n". The request ends with <|im_start|>
    "assistant\\n", the prompt for the reply. With o200k_base this equals the teaching model's
    usage.prompt_tokens; with another encoding it is only an estimate.
    """
    encode = get_encoding(encoding).encode_ordinary
    blocks = _blocks(messages, tools)
    return (1 + len(encode(GENERATION_PROMPT)) + len(blocks) * (2 + len(encode("\n")))
            + sum(map(len, map(encode, blocks))))


def request_token_ids(messages, tools=None, encoding="o200k_base") -> list[int]:
    """The request as a token sequence (special tokens as the stand-ins IM_START, IM_END).

    Two requests share a cacheable prefix exactly as far as these sequences agree.
    """
    encode = get_encoding(encoding).encode_ordinary
    newline = encode("\n")
    ids: list[int] = []
    for text in _blocks(messages, tools):
        ids.append(IM_START)
        ids.extend(encode(text))
        ids.append(IM_END)
        ids.extend(newline)
    ids.append(IM_START)
    ids.extend(encode(GENERATION_PROMPT))
    return ids


def render_request(messages, tools=None) -> str:
    """The request as the text the model reads, special tokens written out."""
    return "".join(f"<|im_start|>{text}<|im_end|>\n" for text in _blocks(messages, tools)) \
        + "<|im_start|>" + GENERATION_PROMPT


# --------------------------------------------------------------------------- truncation

class Truncation(NamedTuple):
    """What `truncate_to_tokens` kept and what it cut."""

    text: str          # the kept beginning of the original text
    kept_tokens: int   # tokens of `text`
    cut_tokens: int    # tokens of the original minus tokens of `text`
    cut_text: str      # the part that was removed (original == text + cut_text)

    @property
    def truncated(self) -> bool:
        return bool(self.cut_text)

    @property
    def notice(self) -> str:
        """One line that tells a reader (or a model) what is missing."""
        if not self.truncated:
            return f"[complete: {self.kept_tokens:,} tokens, nothing cut]"
        total = self.kept_tokens + self.cut_tokens
        return (f"[truncated: kept the first {self.kept_tokens:,} of {total:,} tokens; cut "
                f"{self.cut_tokens:,} tokens ({len(self.cut_text):,} characters) from the end]")


def truncate_to_tokens(text: str, max_tokens: int, encoding="o200k_base") -> Truncation:
    """Keep the beginning of `text` in at most `max_tokens` tokens, and say what was cut.

    Cutting the token list and decoding can split a character whose bytes span two tokens
    (Chinese, emoji), leaving a broken '\\ufffd'. We cut only at a character boundary, and we
    re-count the kept text, because a cut-off string can tokenize differently from the same
    tokens inside the whole text.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise TypeError(f"max_tokens must be an int, not {type(max_tokens).__name__}")
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be 0 or more, got {max_tokens}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text is not valid Unicode (lone surrogate at index {exc.start})") from None
    enc = get_encoding(encoding)
    ids = enc.encode_ordinary(text)
    if len(ids) <= max_tokens:
        return Truncation(text, len(ids), 0, "")
    keep = max_tokens
    while keep > 0:
        # The bytes of ids[:keep] are a prefix of the text's UTF-8; drop a partial last char.
        head = enc.decode_bytes(ids[:keep]).decode("utf-8", errors="ignore")
        kept = len(enc.encode_ordinary(head))
        if kept <= max_tokens and text.startswith(head):
            return Truncation(head, kept, len(ids) - kept, text[len(head):])
        keep -= 1
    return Truncation("", 0, len(ids), text)


# --------------------------------------------------------------------------- content types

def load_corpus(corpus_dir=CORPUS_DIR) -> dict[str, dict[str, str]]:
    """{content type: {file name: text}} from a folder of folders of UTF-8 files."""
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise FileNotFoundError(f"no corpus folder at {corpus_dir}")
    corpus = {}
    for folder in sorted(p for p in corpus_dir.iterdir() if p.is_dir()):
        files = {f.name: f.read_text(encoding="utf-8") for f in sorted(folder.iterdir())
                 if f.is_file()}
        if files:
            corpus[folder.name] = files
    if not corpus:
        raise ValueError(f"the corpus folder {corpus_dir} has no sub-folders with files")
    return corpus


def tokens_per_char(text: str, encoding="o200k_base") -> float:
    """Tokens per character: about 0.25 for English prose, near 1 for Chinese."""
    if not text:
        raise ValueError("tokens per character of an empty text is undefined")
    return count_tokens(text, encoding) / len(text)


def corpus_table(corpus_dir=CORPUS_DIR, encodings=ENCODING_NAMES) -> list[dict]:
    """One row per (content type, encoding): files, characters, UTF-8 bytes, tokens, ratios."""
    corpus = load_corpus(corpus_dir)
    rows = []
    for kind, files in corpus.items():
        text = "".join(files.values())
        for name in encodings:
            tokens = count_tokens(text, name)
            rows.append({"content": kind, "encoding": name, "files": len(files),
                         "chars": len(text), "bytes": len(text.encode("utf-8")),
                         "tokens": tokens, "tokens_per_char": tokens / len(text),
                         "chars_per_token": len(text) / tokens})
    return rows


def plot_tokens_per_char(rows, ax=None):
    """Grouped bars of tokens per character by content type, one bar per encoding."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    kinds = sorted({r["content"] for r in rows}, key=lambda k: min(
        r["tokens_per_char"] for r in rows if r["content"] == k))
    encodings = list(dict.fromkeys(r["encoding"] for r in rows))
    width = 0.8 / len(encodings)
    value = {(r["content"], r["encoding"]): r["tokens_per_char"] for r in rows}
    for j, name in enumerate(encodings):
        xs = [i + (j - (len(encodings) - 1) / 2) * width for i in range(len(kinds))]
        ax.bar(xs, [value.get((k, name), 0.0) for k in kinds], width, label=name)
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_ylabel("tokens per character")
    ax.set_title("How many tokens a character costs, by content type")
    ax.legend()
    return ax


# --------------------------------------------------------------------------- budgets

@dataclass(frozen=True)
class Budget:
    """How a request sits in a context window (input and output share the window)."""

    prompt_tokens: int
    window_tokens: int
    reserved_output: int = 0

    @property
    def share_used(self) -> float:
        return self.prompt_tokens / self.window_tokens

    @property
    def left_for_output(self) -> int:
        """Tokens the reply may still use; negative when the prompt alone is too big."""
        return self.window_tokens - self.prompt_tokens

    @property
    def fits(self) -> bool:
        return self.prompt_tokens + self.reserved_output <= self.window_tokens

    def __str__(self) -> str:
        used = f"{self.prompt_tokens:,} of {self.window_tokens:,} tokens ({self.share_used:.1%})"
        if self.left_for_output < 0:
            return f"{used}: over the window by {-self.left_for_output:,}"
        verdict = "fits" if self.fits else "does NOT fit"
        return (f"{used}; {self.left_for_output:,} left for output; reserving "
                f"{self.reserved_output:,} for the reply {verdict}")


def _count(value, name: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def window_budget(prompt_tokens: int, window_tokens: int, reserved_output: int = 0) -> Budget:
    """Share of the window a prompt uses and what is left for the reply."""
    return Budget(_count(prompt_tokens, "prompt_tokens"), _count(window_tokens, "window_tokens", 1),
                  _count(reserved_output, "reserved_output"))


def request_budget(messages, tools=None, window_tokens: int = 128_000, reserved_output: int = 0,
                   encoding="o200k_base") -> Budget:
    """`window_budget` of a whole chat request, counted with `count_request_tokens`."""
    return window_budget(count_request_tokens(messages, tools, encoding), window_tokens,
                         reserved_output)


# The self-test (the lab's last exercise): answers, not code.
def self_test() -> dict:
    """The answers to lab 02's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "b", "q2": 14, "q3": "a", "q4": "b"}
