"""What crosses between a graded lab's judge and the confined worker that runs the student's code:
JSON, one message per line, never a pickle.

The judge (the kernel that runs the checks) and the worker (the sandboxed process that ran the
student's exercise cells) are two `Endpoint`s on a pair of pipes. Either side may ask the other to
call a function, read a public attribute, index, iterate or take the length of an object it
handed out; while it waits for the answer it serves the other side's requests, so a student's
`run_agent(client, ...)` can call back into the judge's `client`, and the judge's check can pass
the student's own `fence` back to the student's `run_attack_table`.

Values travel as plain data:

    None, bool, int, str, finite float, list, dict with str keys    as themselves
    tuple, set, frozenset, bytes, non-finite float, other dicts      tagged: {"$tuple": [...]}, ...
    datetime, date, timedelta, timezone, pathlib paths               tagged, rebuilt exactly
    an object of a type in DATA_TYPES (the givens' and answers'      {"$obj": "module:Name", ...},
    data classes, named tuples, marked dicts, exceptions; Python's   {"$dict": ..., "class": ...},
    built-in exceptions; openai's chat completion)                   rebuilt from decoded fields
    anything else (functions, open objects, generators)             a handle: {"$handle": id}

A handle becomes a `Remote` on the other side: calling it, reading its attributes, indexing or
iterating it asks the owner. A `Remote` compares equal only to itself and is true only if its
owner says so, with a real bool: nothing the worker sends can make `==` lie.

What the judge accepts from the worker is data, within bounds, and nothing else:
- a class is named by "module:Qualname" and rebuilt only if that name is in DATA_TYPES (or is a
  built-in exception), looked up in a module the judge has already imported: decoding never
  imports, so no name can make the judge run a module's code. The judge's own verdicts
  (StudentTimeout, WorkerStopped: course.labs.remote) are not data: a worker cannot raise them;
- one message is at most MAX_LINE bytes, MAX_VALUES values and MAX_DEPTH levels, checked
  before it is parsed: a bigger one fails the call that it answers, never the judge;
- a call never changes the judge's objects: a list or dict the judge passed and the student's
  code changed stays as it was, and the call fails saying so (the exercises build new values);
  only objects of the STATE_TYPES, made to record what a function did, take its changes back;
- `$same` (an argument returned as itself) names an argument by its path, and the objects it
  names are kept alive for the call, so a freed object's id never stands for a new one.
The worker, in its sandbox, may import a module to rebuild a DATA_TYPES class the judge sent.
"""
from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import importlib
import json
import math
import os
import pathlib
import itertools
import re
import select
import sys
import threading
import time
import traceback
import builtins

MAX_LINE = 32 * 2**20      # bytes in one message; a bigger one is refused, not read into memory
MAX_VALUES = 500_000       # values in one message (each an object when parsed), counted before
MAX_DEPTH = 100            # nesting of a value
MAX_ITEMS = MAX_VALUES     # items produced by iterating a remote object (one answer holds them)
# The classes either side rebuilds from what the other sent: the givens' and answers' values a
# lab's functions take or return, the exceptions the labs' checks expect by type, and the
# teaching model's answer. Anything else crosses as a handle (a value) or as the nearest class
# here it derives from (an exception). Each is checked for its kind when it is rebuilt.
DATA_TYPES = frozenset({
    # course.givens: what the labs hand the student (tests/labs/test_hostile_wire.py checks that
    # every data class, named tuple, marked dict and exception there is listed)
    "course.givens.capstone:ManagerError",
    "course.givens.capstone_family:Family",
    "course.givens.gssc.config:BudgetError", "course.givens.gssc.config:ContextConfig",
    "course.givens.gssc.packets:Packet",
    "course.givens.injection:Effects", "course.givens.injection:Guarded",
    "course.givens.injection:ToolPolicy", "course.givens.injection:Verdict",
    "course.givens.memory:ForgetPolicy", "course.givens.memory:MemoryRecord",
    "course.givens.memory:RecallQuestion", "course.givens.memory:Session",
    "course.givens.notes.crashes:SimulatedCrash", "course.givens.notes.note:InvalidNoteId",
    "course.givens.notes.note:Note", "course.givens.notes.note:NoteError",
    "course.givens.notes.note:NoteFormatError", "course.givens.notes.note:NoteNotFound",
    "course.givens.production_compaction:CircuitBreaker",
    "course.givens.production_compaction:ResultStore", "course.givens.production_compaction:Run",
    "course.givens.sandbox.limits:ResourceLimits", "course.givens.sandbox.limits:RunResult",
    "course.givens.sandbox.refusal:Refusal", "course.givens.sandbox.rules:CommandRule",
    "course.givens.skills:Catalog", "course.givens.skills:Skill", "course.givens.skills:SkillError",
    "course.givens.status_bar:StatusMessage",
    # earlier chapters' answers a lab gives as tools, and what they return
    "solutions.tokens:Truncation", "solutions.compaction.pairing:Pairing",
    "solutions.costs.schedule:Schedule", "solutions.production_compaction.compactor:ContextOverflow",
    # the teaching model's answers, and the standard library's exceptions labs expect
    "openai.types.chat.chat_completion:ChatCompletion", "openai.types.responses.response:Response",
    "json.decoder:JSONDecodeError",
})
# Python's own exceptions (not KeyboardInterrupt, SystemExit, GeneratorExit: the judge decides
# when it stops, never the worker).
BUILTIN_EXCEPTIONS = frozenset(f"builtins:{name}" for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, Exception))
# Objects a function is given to record what it did (lab 11's store and breaker): the only
# judge objects a call's changes are copied back into.
STATE_TYPES = frozenset({"course.givens.production_compaction:ResultStore",
                         "course.givens.production_compaction:CircuitBreaker"})


class WireError(RuntimeError):
    """The other side broke the protocol (a malformed or oversized message, or it went away)."""


class MessageTooLarge(WireError):
    """A message past MAX_LINE bytes, MAX_VALUES values or MAX_DEPTH levels (refused unparsed)."""


class ArgumentChanged(Exception):
    """The other side's function changed a list or dict it was given (the caller's stays as it was)."""


class CallTimeout(Exception):
    """No message arrived before the reader's deadline (the judge turns it into a timeout)."""


class LineReader:
    """readline(limit) on a pipe's descriptor, giving up at `deadline` (time.monotonic) when one
    is set. Unbuffered reads of our own, so a limit never reads past the line it stops at."""

    def __init__(self, fd: int):
        self.fd, self.buffer, self.deadline = fd, bytearray(), None

    def readline(self, limit: int) -> bytes:
        while b"\n" not in self.buffer and len(self.buffer) <= limit:
            if self.deadline is not None:
                wait = self.deadline - time.monotonic()
                if wait <= 0 or not select.select([self.fd], [], [], wait)[0]:
                    raise CallTimeout()
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                break
            self.buffer += chunk
        end = self.buffer.find(b"\n")
        end = len(self.buffer) if end < 0 else end + 1
        line = bytes(memoryview(self.buffer)[:end])  # one copy
        del self.buffer[:end]
        return line


class RemoteError(Exception):
    """The other side's code raised an exception that cannot be rebuilt here as its own type."""

    def __init__(self, type_name: str, message: str, where: str = ""):
        super().__init__(f"{type_name}: {message}" if message else type_name)
        self.type_name, self.remote_message, self.where = type_name, message, where


class Remote:
    """An object the other side owns: every use asks it (see the module docstring)."""

    __slots__ = ("_endpoint", "_handle", "_repr", "_epoch", "_name")

    def __init__(self, endpoint: "Endpoint", handle: int, text: str):
        for name, value in (("_endpoint", endpoint), ("_handle", handle), ("_repr", text),
                            ("_epoch", endpoint.epoch), ("_name", None)):
            object.__setattr__(self, name, value)

    def _ask(self, op: str, **fields):
        endpoint = self._endpoint
        endpoint.prepare()
        if self._epoch != endpoint.epoch:  # the other side was restarted since this was made
            if self._name is None:
                raise WireError(f"{self._repr} belonged to a worker that was stopped (after a "
                                f"timeout or a crash): it is gone")
            fresh = endpoint.lookup(self._name)  # an exercise's function: the new worker has it too
            if not isinstance(fresh, Remote):
                raise WireError(f"{self._name!r} is no longer a function in the restarted worker")
            object.__setattr__(self, "_handle", fresh._handle)
            object.__setattr__(self, "_epoch", fresh._epoch)
        return endpoint.request(op, handle=self._handle, **fields)

    def __call__(self, *args, **kwargs):
        return self._ask("call", what=self._name or self._repr, args=list(args), kwargs=kwargs)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(f"{name!r}: private attributes are not shared between the judge and the worker")
        return self._ask("getattr", name=name)

    def __setattr__(self, name, value):
        raise AttributeError("a remote object cannot be changed from here")

    def __getitem__(self, key):
        return self._ask("getitem", key=key)

    def __len__(self):
        n = self._ask("len")
        if type(n) is not int or n < 0:
            raise TypeError(f"the length of {self._repr} is not a whole number: {n!r}")
        return n

    def __iter__(self):
        return iter(self._ask("iter"))

    def __contains__(self, item):
        return self._ask("contains", item=item) is True

    def __bool__(self):
        return self._ask("bool") is True

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return self._repr

    def __str__(self):
        text = self._ask("str")
        return text if type(text) is str else self._repr

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


# ------------------------------------------------------------------------------------ codec
def _qualified(cls) -> str:
    module = getattr(cls, "__module__", None)  # a class made by exec() without __name__ has none
    return f"{module if isinstance(module, str) else '?'}:{getattr(cls, '__qualname__', '?')}"


def data_class(name, may_import: bool = False):
    """The class `module:Qualname` names if it is in DATA_TYPES or a built-in exception, taken
    from its module as already imported here (imported first only when `may_import`); else None."""
    name = str(name)
    if name not in DATA_TYPES and name not in BUILTIN_EXCEPTIONS:
        return None
    module_name, _, qualname = name.partition(":")
    target = sys.modules.get(module_name)
    try:
        if target is None and may_import:
            target = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except Exception:
        return None
    return target if isinstance(target, type) else None


def load_data_types() -> None:
    """Import the modules of the DATA_TYPES, so that the judge can rebuild them without importing
    on the worker's word (remote.start calls it first). openai's are left to whoever makes one:
    the judge has them once its teaching model answered (importing openai costs seconds)."""
    for module_name in sorted({name.partition(":")[0] for name in DATA_TYPES}):
        if not module_name.startswith("openai."):
            try:
                importlib.import_module(module_name)
            except ImportError:  # an answer a student's copy of the course does not hold
                pass


def _data_type(t) -> bool:
    """Is `t` a class the other side may rebuild (in DATA_TYPES, and the very class named)?"""
    return data_class(_qualified(t)) is t


def _is_model(value) -> bool:
    return _data_type(type(value)) and hasattr(value, "model_dump")


class Codec:
    """Encodes values for the other side and decodes what it sent (see the module docstring)."""

    def __init__(self, endpoint: "Endpoint"):
        self.endpoint = endpoint

    def data_class(self, name):
        return data_class(name, may_import=self.endpoint.may_import)

    def encode(self, value, depth: int = 0, same: dict | None = None):
        """`same`: the arguments of the call being answered, by id: one of them (or a list or
        dict inside one) returned is sent as {"$same": path}, and is that object on the other
        side, so `split_turns(messages)[0][0] is messages[0]` holds across the boundary."""
        if depth > MAX_DEPTH:
            raise WireError(f"a value nested more than {MAX_DEPTH} levels deep cannot be sent")
        e = lambda v: self.encode(v, depth + 1, same)  # noqa: E731
        t = type(value)
        if same and isinstance(value, (list, dict)) and same.get(id(value), (None, None))[1] is value:
            return {"$same": same[id(value)][0]}
        if value is None or t in (bool, str, int):
            return value
        if isinstance(value, float):
            value = float(value)
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, Remote) and value._endpoint is self.endpoint:
            return {"$ref": value._handle}  # the other side's own object, going home
        if isinstance(value, list):  # subclasses too (their type is not kept: a list is a list)
            return [e(v) for v in list.__iter__(value)]
        if isinstance(value, dict):  # OrderedDict, defaultdict, Counter: compared as dicts anyway
            items = list(dict.items(value))
            if t is not dict and _data_type(t):  # a marked dict (a placed bar, lab 11's store)
                attrs = {k: e(v) for k, v in vars(value).items() if not k.startswith("_")}
                return {"$dict": [[e(k), e(v)] for k, v in items], "class": _qualified(t), "attrs": attrs}
            if all(type(k) is str and not k.startswith("$") for k, _ in items):
                return {k: e(v) for k, v in items}
            return {"$dict": [[e(k), e(v)] for k, v in items]}
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return int.__index__(value)
        if t is tuple or (isinstance(value, tuple) and not _data_type(t)):
            return {"$tuple": [e(v) for v in tuple.__iter__(value)]}
        if t in (set, frozenset):
            return {"$set" if t is set else "$frozenset": [e(v) for v in value]}
        if t in (bytes, bytearray):
            return {"$bytes": base64.b64encode(value).decode("ascii")}
        if t is dt.datetime:
            return {"$datetime": value.isoformat()}
        if t is dt.date:
            return {"$date": value.isoformat()}
        if t is dt.timedelta:
            return {"$timedelta": [value.days, value.seconds, value.microseconds]}
        if t is dt.timezone:
            return {"$timezone": [e(value.utcoffset(None)), value.tzname(None)]}
        if isinstance(value, pathlib.PurePath):
            return {"$path": str(value), "posix": isinstance(value, pathlib.PurePosixPath)}
        if isinstance(value, enum.Enum) and _data_type(t):
            return {"$enum": _qualified(t), "value": e(value.value)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type) and _data_type(t):
            fields = {f.name: e(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
            return {"$obj": _qualified(t), "fields": fields}
        if isinstance(value, tuple) and hasattr(t, "_fields") and _data_type(t):
            return {"$obj": _qualified(t), "items": [e(v) for v in value]}
        if isinstance(value, BaseException) and _data_type(t):
            return {"$exception": _qualified(t), "args": [e(a) for a in value.args]}
        if _is_model(value):
            return {"$model": _qualified(t), "data": value.model_dump(mode="json", exclude_unset=True)}
        return self.endpoint.handle_for(value)

    def decode(self, data, depth: int = 0, originals=None):
        """`originals`: the (args, kwargs) of the call this answers, for {"$same": path}."""
        if depth > MAX_DEPTH:
            raise WireError(f"a value nested more than {MAX_DEPTH} levels deep")
        d = lambda v: self.decode(v, depth + 1, originals)  # noqa: E731
        if data is None or type(data) in (bool, str, int, float):
            return data
        if type(data) is list:
            return [d(v) for v in data]
        if type(data) is not dict:
            raise WireError(f"not a value: {type(data).__name__}")
        tags = [k for k in data if k.startswith("$")]
        if not tags:
            return {k: d(v) for k, v in data.items()}
        tag, body = tags[0], data[tags[0]]
        if tag == "$same":
            return _follow(originals, body)
        try:
            return self._tagged(tag, body, data, d)
        except WireError:
            raise
        except Exception as exc:  # a malformed tagged value: a protocol error, said plainly
            raise WireError(f"a malformed {tag} value: {type(exc).__name__}: {exc}") from None

    def _tagged(self, tag, body, data, d):
        if tag == "$dict":
            pairs = [(d(k), d(v)) for k, v in body]
            if "class" not in data:
                return dict(pairs)
            cls = self.data_class(data["class"])  # a marked dict, built without its code
            if cls is None or not issubclass(cls, dict) or cls.__new__ is not dict.__new__:
                raise WireError(f"not a dict class the wire rebuilds: {data['class']!r}")
            value = cls.__new__(cls)
            dict.update(value, pairs)
            for name, attr in dict(data.get("attrs") or {}).items():
                if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                    raise WireError(f"not a public attribute name: {name!r}")
                object.__setattr__(value, name, d(attr))
            return value
        if tag == "$tuple":
            return tuple(d(v) for v in body)
        if tag == "$set":
            return {d(v) for v in body}
        if tag == "$frozenset":
            return frozenset(d(v) for v in body)
        if tag == "$float":
            if body not in ("nan", "inf", "-inf"):
                raise WireError(f"not a special float: {body!r}")
            return float(body)
        if tag == "$bytes":
            return base64.b64decode(body.encode("ascii"), validate=True)
        if tag == "$datetime":
            return dt.datetime.fromisoformat(body)
        if tag == "$date":
            return dt.date.fromisoformat(body)
        if tag == "$timedelta":
            days, seconds, micro = (int(x) for x in body)
            return dt.timedelta(days=days, seconds=seconds, microseconds=micro)
        if tag == "$timezone":
            offset, name = d(body[0]), body[1]
            return dt.timezone(offset, name) if name and name != "UTC" else dt.timezone(offset)
        if tag == "$path":
            return pathlib.Path(body) if data.get("posix", True) else pathlib.PureWindowsPath(body)
        if tag == "$handle":
            return Remote(self.endpoint, int(body), str(data.get("repr", "<remote>"))[:300])
        if tag == "$ref":
            return self.endpoint.object_of(int(body))
        cls = self.data_class(body)
        if cls is None:
            raise WireError(f"{body!r} is not one of the data types the wire rebuilds (or its "
                            f"module was not loaded here)")
        if tag == "$enum":
            if not issubclass(cls, enum.Enum):
                raise WireError(f"{body} is not an enum")
            return cls(d(data["value"]))
        if tag == "$obj" and "fields" in data:
            if not dataclasses.is_dataclass(cls):
                raise WireError(f"{body} is not a dataclass")
            return cls(**{str(k): d(v) for k, v in data["fields"].items()})
        if tag == "$obj":
            if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
                raise WireError(f"{body} is not a named tuple")
            return cls(*[d(v) for v in data["items"]])
        if tag == "$exception":
            if not issubclass(cls, BaseException):
                raise WireError(f"{body} is not an exception")
            return cls(*[d(a) for a in data["args"]])
        if tag == "$model":
            if not hasattr(cls, "model_validate"):
                raise WireError(f"{body} is not a model")
            return cls.model_validate(data["data"])
        raise WireError(f"unknown tag {tag!r}")


# ------------------------------------------------------------------------------------ endpoint
OPS = ("global", "call", "getattr", "getitem", "len", "iter", "contains", "bool", "str")


class Endpoint:
    """One side of the conversation: its handles, its codec, and the request/serve loop."""

    def __init__(self, reader, writer, *, namespace: dict | None = None):
        self.reader, self.writer = reader, writer  # binary: readline(limit), write, flush
        self.namespace = namespace  # what "global" may look up (the worker's exercises); None: nothing
        # The worker (the side with a namespace) may import a data type's module to rebuild a
        # value the judge sent; the judge never imports on the other side's word.
        self.may_import = namespace is not None
        self.objects: dict[int, object] = {}
        self.codec = Codec(self)
        self.epoch = 0  # bumped when the other side is replaced: handles it gave before are void
        self._ids = itertools.count(1)  # handles and request ids (next() on a count is atomic)
        # Several threads may make requests at once (a student's parallel tool loop calling back
        # into the judge, a judge's loop calling the student's functions): one thread at a time
        # reads; an answer goes to the thread whose request it answers, a request is served by
        # the thread that read it, which lets another thread read meanwhile (the call it serves
        # may wait for threads that need answers of their own).
        self._mail = threading.Condition()
        self._waiting: set[int] = set()  # requests sent and not yet answered
        self._answers: dict[int, dict] = {}  # answers read by one thread for another
        self._reading = False
        self._writing = threading.Lock()  # a message is one line, never two interleaved
        self._local = threading.local()  # while answering a call: `same`, its arguments' paths

    # handles
    def handle_for(self, value) -> dict:
        handle = next(self._ids)
        self.objects[handle] = value
        return {"$handle": handle, "repr": _safe_repr(value)}

    def object_of(self, handle: int):
        if handle not in self.objects:
            raise WireError(f"no object with handle {handle} here")
        return self.objects[handle]

    def prepare(self) -> None:
        """Called before each use of a `Remote`: the judge starts its worker again here."""

    def lookup(self, name: str):
        """A name the other side's exercise cells defined (a function comes as a `Remote` that
        survives a restart of the worker: it is looked up again by name)."""
        value = self.request("global", name=name)
        if isinstance(value, Remote):
            object.__setattr__(value, "_name", name)
        return value

    # messages
    def send(self, message: dict) -> None:
        line = json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n"
        with self._writing:
            self.writer.write(line.encode("ascii"))
            self.writer.flush()

    def receive(self) -> dict:
        line = self.reader.readline(MAX_LINE + 1)
        if not line:
            raise WireError("the other side closed the connection")
        if len(line) > MAX_LINE:
            raise MessageTooLarge(f"a message of more than {MAX_LINE // 2**20} MiB")
        if _values_at_most(line) > MAX_VALUES:
            raise MessageTooLarge(f"a message of more than {MAX_VALUES:,} values")
        try:
            message = json.loads(line)
        except RecursionError:
            raise MessageTooLarge(f"a message nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as exc:
            raise WireError(f"a message that is not JSON: {exc}") from None
        if not isinstance(message, dict):
            raise WireError("a message that is not a JSON object")
        return message

    def request(self, op: str, what: str = "", **fields):
        """Ask the other side; serve its requests until it answers this one. `what`: the
        function called, as the student knows it (for messages). See `_changed_arguments` for
        what happens to a call's list and dict arguments the other side changed."""
        rid = next(self._ids)
        with self._mail:
            self._waiting.add(rid)
        self.send({"id": rid, "op": op, **{k: self.codec.encode(v) for k, v in fields.items()}})
        message = self._answer_to(rid)
        if "error" in message:
            raise self._error_of(message["error"])
        args, kwargs = fields.get("args", []), fields.get("kwargs", {})
        value = self.codec.decode(message.get("value"), originals=(args, kwargs) if op == "call" else None)
        if op == "call" and isinstance(message.get("changed"), dict):
            self._changed_arguments(message["changed"], args, kwargs, what)
        return value

    def _answer_to(self, rid: int | None) -> dict:
        """Read, route and serve until the answer to `rid` arrives (None: until the connection
        ends, as the worker's main loop does)."""
        while True:
            with self._mail:
                while rid not in self._answers and self._reading:
                    self._mail.wait()
                if rid in self._answers:
                    return self._answers.pop(rid)
                self._reading = True
            message = None
            try:
                message = self.receive()
                if "op" not in message and message.get("re") not in self._waiting:
                    raise WireError(f"an answer to request {message.get('re')!r}, which was not made")
            finally:
                with self._mail:
                    self._reading = False
                    if message is not None and "op" not in message and message.get("re") in self._waiting:
                        self._waiting.discard(message["re"])
                        self._answers[message["re"]] = message
                    self._mail.notify_all()
            if "op" in message:
                self.serve(message)

    def _changed_arguments(self, changed: dict, args: list, kwargs: dict, what: str) -> None:
        """The other side's function changed list or dict arguments in place. The worker takes
        the judge's changes (a check's agent that marks the database it is given, as it would in
        one process). The judge takes them only into an object of the STATE_TYPES, made for
        that; any other argument stays as the check made it, and the call fails: a check's
        expectation never depends on what the student's code did to its data."""
        refused = []
        for where, data in changed.items():
            original = kwargs.get(where[1:]) if where.startswith("=") else (
                args[int(where)] if where.isdigit() and int(where) < len(args) else None)
            if not isinstance(original, (list, dict)):
                continue
            if self.namespace is None and _qualified(type(original)) not in STATE_TYPES:  # the judge
                refused.append(f"argument {int(where) + 1}" if where.isdigit() else f"argument {where[1:]!r}")
                continue
            new = self.codec.decode(data)
            if isinstance(original, list) and isinstance(new, list):
                original[:] = new
            elif isinstance(original, dict) and isinstance(new, dict):
                original.clear()
                original.update(new)
        if refused:
            raise ArgumentChanged(
                f"{what or 'your function'} changed the {' and '.join(refused)} it was given, in "
                f"place: the caller's value must stay as it was (build a new list or dict and "
                f"return it); the checks keep theirs unchanged")

    def serve(self, message: dict) -> None:
        """Answer one request of the other side: its value, or the exception it raised (a
        malformed request is answered with an error too; only a broken connection ends this)."""
        rid = message.get("id")
        try:
            value, changed = self._perform(message)
            reply = {"re": rid, "value": self.codec.encode(value, same=getattr(self._local, "same", None))}
            if changed:
                reply["changed"] = changed
        except BaseException as exc:  # noqa: BLE001 - the other side's request failed: tell it
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and self.namespace is None:
                raise  # the judge was interrupted: not the worker's answer to give
            reply = {"re": rid, "error": self.describe(exc)}
        finally:
            self._local.same = None
        self.send(reply)

    def serve_forever(self) -> None:
        self._answer_to(None)

    def _perform(self, message: dict) -> tuple[object, dict]:
        """(the value, the call's list and dict arguments it changed, encoded by position or "=name")."""
        if message.get("op") != "call":
            return self._inspect(message), {}
        target = self.object_of(message.get("handle"))
        sent_args, sent_kwargs = message.get("args", []), message.get("kwargs", {})
        args, kwargs = self.codec.decode(sent_args), self.codec.decode(sent_kwargs)
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise WireError("call arguments must be a list and a dict")
        self._local.same = _containers(args, kwargs)
        value = target(*args, **{str(k): v for k, v in kwargs.items()})
        changed = {}
        for where, arg, sent in [(str(i), a, s) for i, (a, s) in enumerate(zip(args, sent_args))] + \
                [("=" + str(k), kwargs[k], sent_kwargs.get(k)) for k in kwargs]:
            if isinstance(arg, (list, dict)):
                now = self.codec.encode(arg)
                if now != sent:
                    changed[where] = now
        return value, changed

    def _inspect(self, message: dict):
        op = message.get("op")
        if op not in OPS:
            raise WireError(f"unknown operation {op!r}")
        if op == "global":
            name = message.get("name")
            if self.namespace is None or not isinstance(name, str) or name not in self.namespace:
                raise NameError(f"name {name!r} is not defined by your exercise cells")
            return self.namespace[name]
        target = self.object_of(message.get("handle"))
        decode = self.codec.decode
        if op == "getattr":
            name = message.get("name")
            if not isinstance(name, str) or name.startswith("_"):
                raise AttributeError(f"{name!r}: private attributes are not shared")
            return getattr(target, name)
        if op == "getitem":
            return target[decode(message.get("key"))]
        if op == "len":
            return len(target)
        if op == "iter":
            items = []
            for item in target:
                items.append(item)
                if len(items) > MAX_ITEMS:
                    raise OverflowError(f"more than {MAX_ITEMS} items")
            return items
        if op == "contains":
            return decode(message.get("item")) in target
        if op == "bool":
            return bool(target)
        return str(target)

    def describe(self, exc: BaseException) -> dict:
        """An exception as data: its type, message, the student's line, the names of its classes
        (the other side rebuilds the nearest data type) and, for a data type, its args."""
        cls = type(exc)
        described = {"type": cls.__name__, "message": _safe_str(exc), "where": _student_line(exc),
                     "classes": [_qualified(c) for c in cls.__mro__[:20]]}
        if _data_type(cls):
            try:
                described["exception"] = self.codec.encode(exc)
            except Exception:
                pass
        return described

    def _error_of(self, error) -> BaseException:
        """The exception to raise here for the other side's: its own type if a data type, else the
        nearest data type it derives from (a ValueError subclass the student defined is a
        ValueError here, so `except ValueError` in a check works), else a RemoteError."""
        if not isinstance(error, dict):
            return WireError("a malformed error answer")
        type_name, message = str(error.get("type", "Exception")), str(error.get("message", ""))
        where = str(error.get("where", ""))
        exc = None
        if "exception" in error:
            try:
                exc = self.codec.decode(error["exception"])
            except WireError:
                exc = None
        if not isinstance(exc, Exception):  # (KeyboardInterrupt, SystemExit: never the worker's to raise)
            exc = None
            classes = error.get("classes") if isinstance(error.get("classes"), list) else []
            for name in classes[:20]:
                cls = self.codec.data_class(str(name))
                if cls is not None and issubclass(cls, Exception) and cls is not Exception:
                    try:
                        exc = cls(message)
                    except Exception:
                        continue
                    if name != classes[0]:
                        exc.add_note(f"(raised as {type_name}, defined where the judge cannot rebuild it)")
                    break
        if exc is None:
            return RemoteError(type_name, message, where)
        if where:
            exc.add_note(where)
        return exc


MAX_CONTAINERS = 200_000  # lists and dicts inside a call's arguments tracked for "$same"


def _containers(args: list, kwargs: dict) -> dict[int, tuple[list, object]]:
    """id -> (path, the object) of every list and dict in a call's arguments (paths: [position
    or "=name", key...]). Each object is held until the call's answer is sent: one the call
    dropped cannot be freed, so its id cannot come back as a new object's."""
    found: dict[int, tuple[list, object]] = {}
    todo = [([i], a) for i, a in enumerate(args)] + [(["=" + str(k)], v) for k, v in kwargs.items()]
    while todo and len(found) < MAX_CONTAINERS:
        path, value = todo.pop()
        if not isinstance(value, (list, dict)) or id(value) in found or len(path) > MAX_DEPTH:
            continue
        found[id(value)] = (path, value)
        items = enumerate(value) if isinstance(value, list) else \
            ((k, v) for k, v in value.items() if type(k) in (str, int))
        todo += [(path + [k], v) for k, v in items]
    return found


def _follow(originals, path):
    """The object at `path` in the (args, kwargs) this side sent."""
    if originals is None or not isinstance(path, list) or not path:
        raise WireError("a $same reference outside an answer to a call")
    args, kwargs = originals
    first = path[0]
    try:
        target = kwargs[first[1:]] if isinstance(first, str) and first.startswith("=") else args[first]
        for step in path[1:]:
            target = target[step]
    except (KeyError, IndexError, TypeError):
        raise WireError(f"a $same reference to nothing: {path!r}") from None
    if not isinstance(target, (list, dict)):
        raise WireError(f"a $same reference to a {type(target).__name__}")
    return target


def _safe_repr(value) -> str:
    try:
        return repr(value)[:300]
    except Exception:
        return f"<{type(value).__name__}>"


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)[:4000]
    except Exception:
        return f"<{type(exc).__name__} whose message cannot be shown>"


EXERCISE_FILE = "<exercise "  # the file name the worker compiles an exercise cell under


def _student_line(exc: BaseException) -> str:
    """Where in the student's own code the exception was raised: 'exercise compact, line 7: ...'."""
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(EXERCISE_FILE):
            key = frame.filename[len(EXERCISE_FILE):].rstrip(">")
            found = f"in your exercise {key!r}, line {frame.lineno}: {(frame.line or '').strip()}"
    return found


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _values_at_most(line: bytes) -> int:
    """An upper bound on the values parsing `line` would make: each value but the first follows
    the "[" or "{" of a container that is not empty, a "," or a ":". Counted on the bytes first
    (fast, may count characters inside strings); only a line over MAX_VALUES by that count is
    counted again without its strings."""
    def count(text: bytes) -> int:
        return (1 + sum(text.count(c) for c in (b"[", b"{", b",", b":"))
                - text.count(b"[]") - text.count(b"{}"))

    found = count(line)
    return found if found <= MAX_VALUES else count(_STRING.sub(b'""', line))
