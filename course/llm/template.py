"""The teaching model's chat template: how a request becomes the tokens it is billed for.

Real chat models never see JSON. The server renders the request into one token sequence
with special tokens marking where each message starts and ends. The textbook shows the
envelope of Qwen models: `<|im_start|>` and the role (`<|im_start|>system`, `<|im_start|>user`,
...), the text, then `<|im_end|>`. The teaching model wraps messages the same way, but it is
its own simplified template, not Qwen's (see "Not a real template" below). It is documented
here so that its `usage.prompt_tokens` can be reproduced exactly by anyone who reads it:

    1. Tools, if the request has any, come first as one block:
           <|im_start|> "tools\\n" + TOOLS <|im_end|> "\\n"
       where TOOLS is json.dumps(tool, ensure_ascii=False) for each tool, joined by "\\n",
       in the order given (the keys in the order given, too).
    2. Then every message, in order:
           <|im_start|> HEADER + "\\n" + BODY <|im_end|> "\\n"
       HEADER is the role ("system", "developer", "user", "assistant"), followed by
       " " + name when the message has a "name"; for a tool result it is
       "tool " + tool_call_id.
       BODY is the content: a string as is; a list of parts as the "text" of each text part,
       joined with ""; null as "". An assistant message with tool calls adds, per call,
           "\\n<tool_call>" + json.dumps({"id": id, "name": name, "arguments": arguments},
                                         ensure_ascii=False) + "</tool_call>"
       with `arguments` exactly the string that was sent (not re-serialised).
    3. Last, the generation prompt: <|im_start|> "assistant\\n".

`<|im_start|>` and `<|im_end|>` are one token each. Every piece of text between them is
encoded on its own with o200k_base's `encode_ordinary` (so "<|im_start|>" typed inside a
message is plain text, not a special token). Hence, with enc = o200k_base:

    per message:  3 + len(enc.encode_ordinary(HEADER + "\\n" + BODY))
    tools block:  3 + len(enc.encode_ordinary("tools\\n" + TOOLS))
    reply primer: 1 + len(enc.encode_ordinary("assistant\\n"))

The reply is billed as `completion_tokens` = len(encode_ordinary(BODY of the reply)) + 1
(its closing `<|im_end|>`).

Reasoning models (course/llm/reasoning.py) render the reasoning their history policy keeps:
such an assistant message is <|im_start|> "assistant\\n" THINK BODY <|im_end|> "\\n", with
THINK = "<think>\\n" + reasoning_content + "\\n</think>\\n\\n" and the three texts encoded each
on its own (3 + len(enc("assistant\\n")) + len(enc(THINK)) + len(enc(BODY)) tokens); their reply
is billed len(enc(THINK)) + len(enc(BODY)) + 1, of which len(enc(THINK)) are `reasoning_tokens`.
Pass `reasoning=` the model's policy to the functions below to count that way; without it,
`reasoning_content` is not rendered (the template of every model that does not reason).

Not a real template. The envelope and the role headers follow the textbook's example; the
rest is the course's simplification. The separate `tools` block, placed before the system
prompt, is this template's own: every part of the request gets an envelope of its own, so the
cost of each part can be counted alone, and the tools render the same way with or without a
system message. Real ChatML-style templates do it differently: Qwen2.5's and Qwen3's write the
tool schemas inside the system turn, after the system prompt's text, under a "# Tools" heading
between <tools></tools> tags with instructions on how to call them, and they send tool
results back as a user turn wrapped in <tool_response> tags (no tool_call_id in the text).
What follows for caching: here the tools block comes first, so an edit to the system prompt
keeps the tools block in the reusable prefix; in Qwen's layout the schemas come after the
system prompt's text, so the same edit makes them miss the cache too.

Real providers use their own templates and tokenizers: there the `usage` numbers the API
returns are the ground truth and any local count is an estimate.
"""
from __future__ import annotations

import json
from array import array
from functools import lru_cache

from course.llm.reasoning import FIELD as REASONING, prompt_view, think_text

class SpecialToken(str):
    """A marker in the rendered pieces that stands for one special token, never for text."""


IM_START = SpecialToken("<|im_start|>")
IM_END = SpecialToken("<|im_end|>")
# Ids just past o200k_base's own range, so they never collide with a real token.
IM_START_ID = 200264
IM_END_ID = 200265
ENCODING_NAME = "o200k_base"


@lru_cache(maxsize=1)
def encoding():
    import course  # noqa: F401  (prepares the offline vocabulary before tiktoken looks)
    import tiktoken

    return tiktoken.get_encoding(ENCODING_NAME)


def content_text(content) -> str:
    """The text of a message's content: a string, a list of text parts, or None."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def tool_call_text(call: dict) -> str:
    fn = call.get("function") or {}
    payload = {"id": call.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")}
    return "\n<tool_call>" + json.dumps(payload, ensure_ascii=False) + "</tool_call>"


def message_header(message: dict) -> str:
    role = message.get("role")
    if role == "tool":
        return f"tool {message.get('tool_call_id')}"
    name = message.get("name")
    return f"{role} {name}" if name else str(role)


def message_body(message: dict) -> str:
    body = content_text(message.get("content"))
    for call in message.get("tool_calls") or ():
        body += tool_call_text(call)
    return body


def tools_text(tools: list) -> str:
    return "tools\n" + "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)


def message_pieces(message: dict, think: bool = False) -> list[str]:
    """One message's pieces; with `think`, an assistant message that carries reasoning_content
    renders it (the caller has applied the history policy: reasoning.prompt_view)."""
    reasoning = message.get(REASONING) if think and message.get("role") == "assistant" else None
    if isinstance(reasoning, str):
        return [IM_START, message_header(message) + "\n", think_text(reasoning),
                message_body(message), IM_END, "\n"]
    return [IM_START, message_header(message) + "\n" + message_body(message), IM_END, "\n"]


def render_pieces(messages: list, tools: list | None = None, reasoning: str | None = None) -> list[str]:
    """The request as a list of text pieces and special-token markers, for display; `reasoning`:
    a reasoning model's history policy (course/llm/reasoning.py), None for any other model."""
    pieces: list[str] = []
    if tools:
        pieces += [IM_START, tools_text(tools), IM_END, "\n"]
    if reasoning:
        messages = prompt_view(messages, reasoning)
    for message in messages:
        pieces += message_pieces(message, bool(reasoning))
    pieces += [IM_START, "assistant\n"]
    return pieces


def render_text(messages: list, tools: list | None = None, reasoning: str | None = None) -> str:
    """The whole rendered request as one string (what the lesson prints)."""
    return "".join(render_pieces(messages, tools, reasoning))


def prompt_token_ids(messages: list, tools: list | None = None,
                     reasoning: str | None = None) -> list[int]:
    """The exact token ids the teaching model sees (and bills as prompt_tokens); `reasoning`:
    the model's history policy, for a reasoning model."""
    return pieces_token_ids(render_pieces(messages, tools, reasoning))


PIECES_KEPT = 1024  # text pieces whose token ids are kept (4 bytes a token)


@lru_cache(maxsize=PIECES_KEPT)
def piece_ids(piece: str) -> array:
    """One text piece's token ids, kept: a request repeats the tools and the history of the one
    before, and tracing (course/tracing) counts a request's pieces just before the teaching model,
    in the same process, encodes them. Read only."""
    return array("I", encoding().encode_ordinary(piece))


def pieces_token_ids(pieces: list[str]) -> list[int]:
    """The token ids of rendered pieces (render_pieces): each text piece encoded on its own."""
    ids: list[int] = []
    for piece in pieces:
        if isinstance(piece, SpecialToken):
            ids.append(IM_START_ID if piece == IM_START else IM_END_ID)
        else:
            ids.extend(piece_ids(piece))
    return ids


# Bounds on a count from sizes alone, so that a request far over a context window is refused
# without tokenising it. Both rest on facts about o200k_base's vocabulary that
# tests/course/test_llm_window.py checks token by token:
#   - every token is at least one byte, so a text has at most as many tokens as UTF-8 bytes;
#   - no token holds more than MAX_CORE_BYTES bytes that are not ASCII white space;
#   - no token holds a byte that is not ASCII white space, then ASCII white space, then a
#     printable ASCII character other than "/": so every such "word start" begins a new token.
ASCII_SPACE = b" \t\n\r\x0b\x0c"
MAX_CORE_BYTES = 112
_WORD_START = bytes(c for c in range(0x21, 0x7F) if c != ord("/"))
# one byte per byte of text: " " white space, "w" a possible word start, "x" anything else
_MARKS = bytes(32 if c in ASCII_SPACE else ord("w") if c in _WORD_START else ord("x")
               for c in range(256))


def text_token_bounds(text: str) -> tuple[int, int]:
    """(at least, at most) len(encoding().encode_ordinary(text)), from the text's bytes only."""
    data = text.encode("utf-8", "surrogatepass")  # tiktoken counts a lone surrogate as U+FFFD
    if not data:
        return 0, 0
    marks = data.translate(_MARKS)
    starts = marks.count(b" w") + marks.startswith(b"w")
    core = len(data) - marks.count(b" ")
    return max(starts, -(-core // MAX_CORE_BYTES)), len(data)


def pieces_byte_ceiling(pieces: list[str]) -> int:
    """At most this many tokens, cheaply: one per special token, one per byte of text."""
    return sum(1 if isinstance(p, SpecialToken) else len(p.encode("utf-8", "surrogatepass"))
               for p in pieces)


def pieces_token_floor(pieces: list[str]) -> int:
    """At least this many tokens, from the pieces' bytes (see text_token_bounds)."""
    return sum(1 if isinstance(p, SpecialToken) else text_token_bounds(p)[0] for p in pieces)


def think_token_count(message: dict) -> int:
    """The reply's reasoning_tokens: the tokens of THINK (0 without reasoning_content)."""
    reasoning = message.get(REASONING)
    return len(encoding().encode_ordinary(think_text(reasoning))) if isinstance(reasoning, str) else 0


def completion_token_count(message: dict, think: bool = False) -> int:
    """A reply's completion_tokens; with `think` (a reasoning model) its THINK counts too."""
    return (len(encoding().encode_ordinary(message_body(message))) + 1
            + (think_token_count(message) if think else 0))


def message_token_count(message: dict, think: bool = False) -> int:
    """What one message adds to the prompt: 3 + its text's tokens (see the formula above);
    `think`: render its reasoning_content (a message of reasoning.prompt_view)."""
    return sum(1 if isinstance(p, SpecialToken) else len(piece_ids(p))
               for p in message_pieces(message, think)[:-1]) + 1


def fixed_token_count(tools: list | None) -> int:
    """What the prompt holds besides its messages: the tools block and the reply primer."""
    block = 3 + len(piece_ids(tools_text(tools))) if tools else 0
    return block + 1 + len(piece_ids("assistant\n"))
