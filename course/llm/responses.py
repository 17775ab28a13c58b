"""The Responses API, simulated on the teaching model: what OpenAI's `/v1/responses` does with
the context, as documented rules (chapter 14 measures them against client-side context).

    POST   /v1/responses                  client.responses.create(...)
    POST   /v1/responses/compact          client.responses.compact(...)
    POST   /v1/responses/input_tokens     client.responses.input_tokens.count(...)
    GET    /v1/responses/{id}             client.responses.retrieve(id)
    DELETE /v1/responses/{id}             client.responses.delete(id)

The rules:

  - A request is turned into a Chat Completions request and answered by the same decision list
    (course.llm.chat): `instructions` become the system message; `input` is a string (one user
    message) or a list of items — messages (`user`, `assistant`, `system`, `developer`; text
    or `input_text`/`output_text` parts), `function_call`, `function_call_output`,
    `reasoning` and `compaction`. A reasoning item (its `summary` text, or its `encrypted_content`)
    is left out of the prompt for a model that does not reason; for a reasoning model
    (course/llm/reasoning.py) it follows the model's history policy: strip leaves it out,
    pass_back and since_last_user send it on as the next assistant turn's `reasoning_content`
    (rendered as that policy renders it), and pass_back refuses a function_call with no reasoning
    item before it (a 400 naming `input`), as a chain with previous_response_id never lacks. Function tools only, in the Responses format (`name`, `description`,
    `parameters` at the top level). `stream` is not simulated here (a 400 that says so).
  - `previous_response_id` continues a stored response: the conversation is that response's
    items (its input, then its output) followed by this `input`; its `instructions` are not
    carried over, as OpenAI documents. The whole conversation is the prompt, so a chained turn is
    billed for all of it, every turn: server state saves sending, not tokens.
  - `store` (default true) keeps the response for later turns, GET and DELETE; at most
    MAX_STORED responses, the oldest forgotten first. `store: false` keeps nothing: its id cannot
    be continued.
  - `truncation`: "disabled" (the default) answers a prompt over the model's window with the 400
    context_length_exceeded; "auto" drops the oldest turns (from one user message to the next,
    whole, so calls keep their outputs) until it fits, and the trace says how many.
  - `prompt_cache_key` gives the request a prompt cache of its own: the same prompt under another
    key hits nothing (the chain of cached blocks starts from the model and the key).
  - `context_management=[{"type": "compaction", "compact_threshold": N}]`: when the conversation's
    prompt holds more than N tokens, it is compacted before the model reads it, and the output
    starts with the `compaction` item. Compaction (here and in /responses/compact) keeps every
    user message before the current turn, replaces everything else before it with one
    compaction item, and keeps the current turn (from the last user message on) whole after it
    (so the calls it made stay paired with their outputs). A conversation that is one turn (an
    agent's many steps after one request) is cut at its last step instead: the user message, the
    compaction item, then the last step whole (the model's latest items and their outputs). The item's `encrypted_content` holds
    the teaching model's rule-based summary (course.llm.summary), sealed: the student can send
    it back but not read or edit it (a changed one is a 400), as with OpenAI's opaque item. A
    request that includes it is built from the summary it stands for.
  - usage: `input_tokens` (exact: `input_tokens.count` gives the same number for the same
    request), `input_tokens_details.cached_tokens`, `output_tokens`, `output_tokens_details.
    reasoning_tokens` (a reasoning model's, else 0). A reasoning model's output starts with a
    `reasoning` item: its `summary` is one `summary_text` part, the chat reply's reasoning_content,
    and its `encrypted_content` seals the same text (always sent here; OpenAI sends it when
    `include` asks for "reasoning.encrypted_content"). A reply cut by `max_output_tokens` is `status: "incomplete"`.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import zlib
from collections import OrderedDict

from course.llm.models import model_spec
from course.llm.reasoning import PASS_BACK, STRIP
from course.llm.summary import summarise
from course.llm.template import prompt_token_ids
from course.llm.validation import RequestError, expect_type

MAX_STORED = 1000  # responses a server keeps; the oldest is forgotten first
ROLES = ("user", "assistant", "system", "developer")
ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning", "compaction")
SEAL_PREFIX = "tmc1."  # a sealed compaction: version 1 of the teaching model's format
_SEAL_KEY = hashlib.sha256(b"context engineering hands-on: teaching model compaction key").digest()
COMPACTION_HEADER = "Context carried over by the server's compaction (the earlier turns, summarised):"


# ------------------------------------------------------------------ the store
class ResponseStore:
    """Stored responses by id, each with the conversation it ends (its items)."""

    def __init__(self, capacity: int = MAX_STORED):
        self.capacity = capacity
        self._stored: OrderedDict[str, tuple[dict, list[dict]]] = OrderedDict()
        self._lock = threading.Lock()
        self._count = 0

    def next_number(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    def put(self, response: dict, items: list[dict]) -> None:
        with self._lock:
            self._stored[response["id"]] = (response, items)
            self._stored.move_to_end(response["id"])
            while len(self._stored) > self.capacity:
                self._stored.popitem(last=False)

    def get(self, response_id: str) -> tuple[dict, list[dict]]:
        with self._lock:
            found = self._stored.get(response_id)
        if found is None:
            raise RequestError(f"Response with id '{response_id}' not found.", "response_id",
                               "not_found", status=404)
        return found

    def delete(self, response_id: str) -> dict:
        with self._lock:
            found = self._stored.pop(response_id, None)
        if found is None:
            raise RequestError(f"Response with id '{response_id}' not found.", "response_id",
                               "not_found", status=404)
        return {"id": response_id, "object": "response", "deleted": True}

    def __len__(self) -> int:
        return len(self._stored)


# ------------------------------------------------------------------ sealing compactions
def _keystream(nonce: bytes, size: int) -> bytes:
    blocks = (hashlib.blake2b(nonce + i.to_bytes(8, "big"), key=_SEAL_KEY).digest()
              for i in range(-(-size // 64)))
    return b"".join(blocks)[:size]


def seal(data: dict) -> str:
    """`data` as an opaque, tamper-evident string (deterministic: the same data, the same text)."""
    plain = zlib.compress(json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    nonce = hashlib.blake2b(plain, key=_SEAL_KEY, digest_size=12).digest()
    cipher = (int.from_bytes(plain, "big") ^ int.from_bytes(_keystream(nonce, len(plain)), "big")
              ).to_bytes(len(plain), "big")
    tag = hmac.new(_SEAL_KEY, nonce + cipher, "sha256").digest()[:16]
    return SEAL_PREFIX + base64.urlsafe_b64encode(nonce + cipher + tag).decode("ascii")


def unseal(text, param: str) -> dict:
    """What `seal` sealed; a 400 naming `param` for anything else."""
    bad = RequestError(f"Invalid '{param}': this is not a compaction the teaching model made "
                       f"(it is sealed; it cannot be edited or made by hand).", param,
                       "invalid_encrypted_content")
    if not isinstance(text, str) or not text.startswith(SEAL_PREFIX):
        raise bad
    try:
        raw = base64.urlsafe_b64decode(text[len(SEAL_PREFIX):].encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raise bad from None
    nonce, cipher, tag = raw[:12], raw[12:-16], raw[-16:]
    if len(raw) < 29 or not hmac.compare_digest(hmac.new(_SEAL_KEY, nonce + cipher, "sha256").digest()[:16], tag):
        raise bad
    plain = (int.from_bytes(cipher, "big") ^ int.from_bytes(_keystream(nonce, len(cipher)), "big")
             ).to_bytes(len(cipher), "big")
    return json.loads(zlib.decompress(plain).decode("utf-8"))


# ------------------------------------------------------------------ reading a request
def _text_of(content, param: str) -> str:
    if isinstance(content, str):
        return content
    expect_type(content, (list,), param, "a string or an array of content parts")
    parts = []
    for k, part in enumerate(content):
        expect_type(part, (dict,), f"{param}[{k}]", "an object")
        if part.get("type") not in ("input_text", "output_text", "text"):
            raise RequestError(f"Invalid '{param}[{k}].type': the teaching model reads text parts "
                               f"('input_text', 'output_text'), got {part.get('type')!r}.",
                               f"{param}[{k}].type", "unsupported_value")
        expect_type(part.get("text"), (str,), f"{param}[{k}].text", "a string")
        parts.append(part["text"])
    return "".join(parts)


def read_items(value, param: str = "input") -> list[dict]:
    """The request's input as normalised items (message, function_call, function_call_output,
    reasoning, compaction); a 400 naming the item and field for anything else."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    expect_type(value, (list,), param, "a string or an array of input items")
    items = []
    for i, item in enumerate(value):
        where = f"{param}[{i}]"
        expect_type(item, (dict,), where, "an object")
        kind = item.get("type", "message" if "role" in item else None)
        if kind not in ITEM_TYPES:
            raise RequestError(f"Invalid '{where}.type': the teaching model reads "
                               f"{', '.join(map(repr, ITEM_TYPES))}; got {kind!r}.",
                               f"{where}.type", "invalid_value")
        if kind == "message":
            if item.get("role") not in ROLES:
                raise RequestError(f"Invalid '{where}.role': expected one of "
                                   f"{', '.join(map(repr, ROLES))}; got {item.get('role')!r}.",
                                   f"{where}.role", "invalid_value")
            items.append({"type": "message", "role": item["role"],
                          "content": _text_of(item.get("content"), f"{where}.content")})
        elif kind == "function_call":
            for field in ("call_id", "name", "arguments"):
                expect_type(item.get(field), (str,), f"{where}.{field}", "a string")
            items.append({"type": "function_call", "call_id": item["call_id"], "name": item["name"],
                          "arguments": item["arguments"]})
        elif kind == "function_call_output":
            expect_type(item.get("call_id"), (str,), f"{where}.call_id", "a string")
            output = _text_of(item.get("output"), f"{where}.output")
            items.append({"type": "function_call_output", "call_id": item["call_id"], "output": output})
        elif kind == "reasoning":
            items.append({"type": "reasoning", "text": _reasoning_text(item, where)})
        else:
            sealed = unseal(item.get("encrypted_content"), f"{where}.encrypted_content")
            items.append({"type": "compaction", "encrypted_content": item["encrypted_content"],
                          "summary": sealed.get("summary", "")})
    return items


def _reasoning_text(item: dict, where: str) -> str | None:
    """A reasoning item's text: its sealed encrypted_content, else its summary parts joined."""
    if item.get("encrypted_content") is not None:
        return unseal(item["encrypted_content"], f"{where}.encrypted_content").get("reasoning")
    summary = item.get("summary")
    if summary is None:
        return None
    expect_type(summary, (list,), f"{where}.summary", "an array of summary parts")
    return _text_of([{**p, "type": "text"} if isinstance(p, dict) and p.get("type") == "summary_text"
                     else p for p in summary], f"{where}.summary")


def chat_tools(tools) -> list[dict] | None:
    """Responses-format function tools as Chat Completions tools."""
    if tools is None:
        return None
    expect_type(tools, (list,), "tools", "an array of tools")
    converted = []
    for k, tool in enumerate(tools):
        expect_type(tool, (dict,), f"tools[{k}]", "an object")
        if tool.get("type") != "function":
            raise RequestError(f"Invalid 'tools[{k}].type': the teaching model runs function tools "
                               f"only; got {tool.get('type')!r}.", f"tools[{k}].type", "unsupported_value")
        expect_type(tool.get("name"), (str,), f"tools[{k}].name", "a string")
        function = {"name": tool["name"]}
        if tool.get("description") is not None:
            function["description"] = tool["description"]
        if tool.get("parameters") is not None:
            function["parameters"] = tool["parameters"]
        converted.append({"type": "function", "function": function})
    return converted


def chat_tool_choice(choice):
    if choice is None or isinstance(choice, str):
        return choice
    expect_type(choice, (dict,), "tool_choice", "a string or an object")
    if choice.get("type") == "function" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise RequestError("Invalid 'tool_choice': expected 'auto', 'none', 'required' or "
                       "{\"type\": \"function\", \"name\": ...}.", "tool_choice", "invalid_value")


def chat_messages(instructions: str | None, items: list[dict], reasoning: bool = False) -> list[dict]:
    """The Chat Completions messages for the conversation's items (function calls in a row
    become one assistant message with several tool_calls); with `reasoning`, a reasoning
    item's text becomes the next assistant message's reasoning_content."""
    messages = [{"role": "system", "content": instructions}] if instructions else []
    thought = None  # a reasoning item's text, waiting for the assistant turn it belongs to
    for item in items:
        kind = item["type"]
        if kind == "reasoning":
            thought = item.get("text") if reasoning else None
            continue
        if kind == "message":
            messages.append({"role": item["role"], "content": item["content"]})
        elif kind == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":  # text, then calls: one turn
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        elif kind == "compaction":
            messages.append({"role": "developer", "content": f"{COMPACTION_HEADER}\n{item['summary']}"})
        if thought is not None and kind in ("message", "function_call") and messages[-1]["role"] == "assistant":
            messages[-1]["reasoning_content"] = thought
        thought = None
    return messages


def _turns(items: list[dict]) -> list[list[dict]]:
    """The items cut at each user message: a turn is a user message and what followed it."""
    turns: list[list[dict]] = []
    for item in items:
        if not turns or (item["type"] == "message" and item["role"] == "user"):
            turns.append([])
        turns[-1].append(item)
    return turns


def _by_model(item: dict) -> bool:
    return item["type"] in ("function_call", "reasoning") or (
        item["type"] == "message" and item["role"] == "assistant")


def compacted(items: list[dict], instructions: str | None) -> list[dict] | None:
    """Every user message before the current turn, one compaction item standing for everything
    else before it, then the current turn whole (see the module's rules). A conversation of one
    turn (an agent working through many steps after one request) is cut inside it instead: its
    user message kept, its steps but the last summarised, the last step (the model's latest
    items and the outputs after them) kept whole. None when there is nothing to compact."""
    turns = _turns(items)
    earlier = [item for turn in turns[:-1] for item in turn]
    if not earlier:
        turn = turns[-1] if turns else []
        steps = [k for k in range(1, len(turn)) if _by_model(turn[k]) and not _by_model(turn[k - 1])]
        if not steps or steps[-1] < 2:
            return None
        cut, head = steps[-1], turn[:1] if turn[0]["type"] == "message" and turn[0]["role"] == "user" else []
        summary = summarise(chat_messages(instructions, turn[:cut]))
        sealed = seal({"summary": summary})
        return head + [{"type": "compaction", "encrypted_content": sealed, "summary": summary}] + turn[cut:]
    summary = summarise(chat_messages(instructions, earlier))
    kept = [item for item in earlier if item["type"] == "message" and item["role"] == "user"]
    sealed = seal({"summary": summary})
    return kept + [{"type": "compaction", "encrypted_content": sealed, "summary": summary}] + turns[-1]


def public_item(item: dict, number: int) -> dict:
    """An item as the API shows it (a compaction without its readable summary)."""
    ident = hashlib.blake2b(json.dumps(item, sort_keys=True).encode() + str(number).encode(),
                            digest_size=12).hexdigest()
    if item["type"] == "compaction":
        return {"type": "compaction", "id": "cmp_" + ident, "encrypted_content": item["encrypted_content"],
                "created_by": "teaching-model"}
    if item["type"] == "function_call":
        return {"type": "function_call", "id": "fc_" + ident, "call_id": item["call_id"],
                "name": item["name"], "arguments": item["arguments"], "status": "completed"}
    if item["type"] == "message" and item["role"] == "assistant":
        return {"type": "message", "id": "msg_" + ident, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": item["content"], "annotations": []}]}
    if item["type"] == "message":
        return {"type": "message", "id": "msg_" + ident, "role": item["role"], "status": "completed",
                "content": [{"type": "input_text", "text": item["content"]}]}
    if item["type"] == "reasoning":
        text = item.get("text")
        return {"type": "reasoning", "id": "rs_" + ident,
                "summary": [] if text is None else [{"type": "summary_text", "text": text}],
                **({} if text is None else {"encrypted_content": seal({"reasoning": text})})}
    return {"id": "item_" + ident, **item}


# ------------------------------------------------------------------ answering
class Conversation:
    """A request's conversation: its items (after the stored ones), instructions, tools."""

    def __init__(self, body, store: ResponseStore):
        expect_type(body, (dict,), "body", "a JSON object")
        if "model" not in body:
            raise RequestError("you must provide a model parameter", "model", "missing_required_parameter")
        expect_type(body["model"], (str,), "model", "a string")
        model_spec(body["model"])  # an unknown model is a 404, before anything else
        self.body = body
        self.instructions = body.get("instructions")
        if self.instructions is not None:
            expect_type(self.instructions, (str,), "instructions", "a string")
        previous = body.get("previous_response_id")
        earlier: list[dict] = []
        if previous is not None:
            expect_type(previous, (str,), "previous_response_id", "a string")
            try:
                _, earlier = store.get(previous)
            except RequestError:
                raise RequestError(f"Previous response with id '{previous}' not found.",
                                   "previous_response_id", "previous_response_not_found") from None
        self.items = earlier + read_items(body.get("input"))
        if not self.items:
            raise RequestError("Missing required parameter: 'input'.", "input", "missing_required_parameter")
        self.tools = chat_tools(body.get("tools"))
        self.notes: list[str] = []
        self.policy = model_spec(body["model"]).reasoning
        reasoning = sum(item["type"] == "reasoning" for item in self.items)
        if self.policy == PASS_BACK:
            _check_passed_back(self.items)
        if reasoning and self.policy == STRIP:
            self.notes.append(f"{reasoning} reasoning item{'s' * (reasoning != 1)} left out of the "
                              f"prompt: history policy strip (earlier reasoning is not part of it)")
        elif reasoning and not self.policy:
            self.notes.append(f"{reasoning} reasoning item{'s' * (reasoning != 1)} left out of the "
                              f"prompt: the teaching model does not reason")

    def messages(self) -> list[dict]:
        return chat_messages(self.instructions, self.items, self.policy not in (None, STRIP))

    def prompt_tokens(self) -> int:
        return len(prompt_token_ids(self.messages(), self.tools, self.policy))

    def truncate_to(self, window: int) -> None:
        """Drop the oldest turns, whole, until the prompt fits `window` tokens (truncation auto)."""
        turns, dropped = _turns(self.items), 0
        while len(turns) > 1 and self.prompt_tokens() > window:
            turns.pop(0)
            dropped += 1
            self.items = [item for turn in turns for item in turn]
        if dropped:
            self.notes.append(f"truncation auto: the prompt was over the {window}-token window; the "
                              f"oldest {dropped} turn{'s' * (dropped != 1)} dropped")

    def compact_over(self, threshold: int) -> bool:
        tokens = self.prompt_tokens()
        if tokens <= threshold:
            return False
        items = compacted(self.items, self.instructions)
        if items is None:
            self.notes.append(f"compaction: {tokens} tokens, over compact_threshold {threshold}, but the "
                              f"conversation is one step: nothing before it to compact")
            return False
        self.items = items
        self.notes.append(f"compaction: {tokens} tokens, over compact_threshold {threshold}: every "
                          f"earlier user message kept, the rest summarised into one compaction item; "
                          f"now {self.prompt_tokens()} tokens")
        return True


def _check_passed_back(items: list[dict]) -> None:
    """pass_back: each run of function_call items needs a reasoning item with text before it."""
    thought = False
    for item in items:
        if item["type"] == "reasoning":
            thought = item.get("text") is not None
        elif item["type"] == "function_call":
            if not thought:
                raise RequestError(
                    f"Missing reasoning for the function_call item with call_id "
                    f"{item['call_id']!r}: this model (history policy pass_back, like DeepSeek "
                    f"V4, Kimi K2 and GLM-5) needs the reasoning item it returned before its "
                    f"calls sent back with them (previous_response_id keeps it; with store=false, "
                    f"send the reasoning item back).", "input", "missing_reasoning")
        elif item["type"] != "message" or item["role"] != "assistant":
            thought = False


def _threshold(body) -> int | None:
    management = body.get("context_management")
    if management is None:
        return None
    expect_type(management, (list,), "context_management", "an array")
    threshold = None
    for k, entry in enumerate(management):
        expect_type(entry, (dict,), f"context_management[{k}]", "an object")
        if entry.get("type") != "compaction":
            raise RequestError(f"Invalid 'context_management[{k}].type': only 'compaction' is "
                               f"supported; got {entry.get('type')!r}.",
                               f"context_management[{k}].type", "invalid_value")
        value = entry.get("compact_threshold")
        expect_type(value, (int,), f"context_management[{k}].compact_threshold", "an integer")
        if value < 1:
            raise RequestError(f"Invalid 'context_management[{k}].compact_threshold': must be at "
                               f"least 1.", f"context_management[{k}].compact_threshold", "invalid_value")
        threshold = value
    return threshold


def _check_options(body) -> None:
    for key, types, what in (("store", (bool,), "a boolean"), ("parallel_tool_calls", (bool,), "a boolean"),
                             ("prompt_cache_key", (str,), "a string"), ("max_output_tokens", (int,), "an integer")):
        if body.get(key) is not None:
            expect_type(body[key], types, key, what)
    if body.get("truncation") not in (None, "auto", "disabled"):
        raise RequestError("Invalid 'truncation': expected 'auto' or 'disabled'.", "truncation", "invalid_value")
    if body.get("max_output_tokens") is not None and body["max_output_tokens"] < 16:
        raise RequestError("Invalid 'max_output_tokens': integer below minimum value. Expected a value "
                           f">= 16, but got {body['max_output_tokens']} instead.", "max_output_tokens",
                           "integer_below_min_value")
    if body.get("stream"):
        raise RequestError("The teaching model does not stream on the Responses API (stream=true); "
                           "its Chat Completions endpoint streams.", "stream", "unsupported_value")


def _chat_body(conversation: Conversation) -> dict:
    body = conversation.body
    chat = {"model": body["model"], "messages": conversation.messages()}
    if conversation.tools is not None:
        chat["tools"] = conversation.tools
    choice = chat_tool_choice(body.get("tool_choice"))
    if choice is not None:
        chat["tool_choice"] = choice
    for source, target in (("parallel_tool_calls", "parallel_tool_calls"), ("max_output_tokens", "max_completion_tokens"),
                           ("temperature", "temperature"), ("top_p", "top_p"), ("seed", "seed")):
        if body.get(source) is not None:
            chat[target] = body[source]
    return chat


def _usage(chat_usage: dict) -> dict:
    return {"input_tokens": chat_usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": chat_usage["prompt_tokens_details"]["cached_tokens"],
                                     "cache_write_tokens": 0},
            "output_tokens": chat_usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens":
                                      chat_usage["completion_tokens_details"]["reasoning_tokens"]},
            "total_tokens": chat_usage["total_tokens"]}


def _reply_items(message: dict) -> list[dict]:
    items = []
    if message.get("reasoning_content") is not None:  # a reasoning model: its thought first
        items.append({"type": "reasoning", "text": message["reasoning_content"]})
    if message.get("content"):
        items.append({"type": "message", "role": "assistant", "content": message["content"]})
    for call in message.get("tool_calls") or []:
        items.append({"type": "function_call", "call_id": call["id"], "name": call["function"]["name"],
                      "arguments": call["function"]["arguments"]})
    return items


def cache_scope(body) -> str:
    """The prompt cache a request uses: the model's, or the model's under its prompt_cache_key."""
    key = body.get("prompt_cache_key")
    return body["model"] + ("\x00key:" + key if key else "")


def create(model, body) -> dict:
    """POST /v1/responses."""
    store: ResponseStore = model.responses
    conversation = Conversation(body, store)
    _check_options(body)
    threshold = _threshold(body)
    spec = model_spec(body["model"])
    if body.get("truncation") == "auto":
        conversation.truncate_to(spec.context_window - (body.get("max_output_tokens") or 0))
    compaction = None
    if threshold is not None and conversation.compact_over(threshold):
        compaction = next(i for i in conversation.items if i["type"] == "compaction")
    payload = model.complete(_chat_body(conversation), scope=cache_scope(body))
    number = store.next_number()
    message = payload["choices"][0]["message"]
    reply = _reply_items(message)
    output = ([compaction] if compaction else []) + reply
    trace = payload["teaching_trace"]
    trace[1:1] = [{"rule": "responses", "why": note, "evidence": []} for note in conversation.notes]
    incomplete = payload["choices"][0]["finish_reason"] == "length"
    response = {
        "id": "resp_" + hashlib.blake2b(f"{payload['id']}:{number}".encode(), digest_size=16).hexdigest(),
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "model": body["model"],
        "instructions": conversation.instructions,
        "output": [public_item(item, number) for item in output],
        "tools": body.get("tools") or [],
        "tool_choice": body.get("tool_choice", "auto"),
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "store": body.get("store", True),
        "truncation": body.get("truncation", "disabled"),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "max_output_tokens": body.get("max_output_tokens"),
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "text": {"format": {"type": "text"}},
        "reasoning": {"effort": None, "summary": None},
        "metadata": body.get("metadata") or {},
        "usage": _usage(payload["usage"]),
        "system_fingerprint": payload.get("system_fingerprint"),
        # Not part of the OpenAI API: why the teaching model replied so (course.llm.explain).
        "teaching_trace": trace,
        # Not part of the OpenAI API either: the time a real deployment would take (timing.py).
        "teaching_timing": payload.get("teaching_timing"),
    }
    if body.get("store", True):
        store.put(response, conversation.items + reply)
    return response


def compact(model, body) -> dict:
    """POST /v1/responses/compact: the conversation compacted, returned, not stored."""
    conversation = Conversation(body, model.responses)
    before = conversation.prompt_tokens()
    items = compacted(conversation.items, conversation.instructions) or conversation.items
    number = model.responses.next_number()
    summary = next((i["summary"] for i in items if i["type"] == "compaction"), "")
    output_tokens = len(prompt_token_ids([{"role": "assistant", "content": summary}])) if summary else 0
    return {"id": "resp_" + hashlib.blake2b(f"compact:{before}:{number}".encode(), digest_size=16).hexdigest(),
            "object": "response.compaction",
            "created_at": int(time.time()),
            "output": [public_item(item, number) for item in items],
            "usage": {"input_tokens": before, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                      "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": before + output_tokens}}


def count_input_tokens(model, body) -> dict:
    """POST /v1/responses/input_tokens: the exact input_tokens `create` would bill (before
    any truncation or compaction)."""
    conversation = Conversation(body, model.responses)
    return {"object": "response.input_tokens", "input_tokens": conversation.prompt_tokens()}

