"""What crosses between the judge and the worker (course.labs.wire): plain data only.

Two endpoints on a pair of in-memory pipes stand for the judge and the worker (a thread serves
the worker's side), so the protocol is tested without starting a process: values come back
equal and of the same type, identity and in-place changes of arguments are kept, exceptions
arrive as their own type or the nearest data type, and nothing the worker sends can make the
judge build an object of its choosing or make `==` lie (attacks: test_hostile_wire.py).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import threading
from pathlib import Path, PureWindowsPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.labs.wire import MAX_DEPTH, Codec, Endpoint, Remote, RemoteError, WireError


class _Pipe:
    """One direction: a blocking byte pipe with readline(limit), write and flush."""

    def __init__(self):
        self.r, self.w = os.pipe()
        self.reader = os.fdopen(self.r, "rb")
        self.writer = os.fdopen(self.w, "wb")

    def close(self):
        self.writer.close()


@pytest.fixture
def pair():
    """(judge endpoint, worker namespace): the worker serves in a thread until closed."""
    to_worker, to_judge = _Pipe(), _Pipe()
    namespace: dict = {}
    worker = Endpoint(to_worker.reader, to_judge.writer, namespace=namespace)
    judge = Endpoint(to_judge.reader, to_worker.writer)

    def serve():
        try:
            worker.serve_forever()
        except (WireError, ValueError, OSError):
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield judge, namespace
    to_worker.close()
    thread.join(5)


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
    | st.binary(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    | st.dictionaries(st.integers(), inner, max_size=3)
    | st.frozensets(st.integers(), max_size=3),
    max_leaves=20)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(plain)
def test_plain_values_cross_unchanged_with_their_types(value):
    codec = Codec(Endpoint(None, None))
    back = codec.decode(json.loads(json.dumps(codec.encode(value))))
    assert back == value and _types(back) == _types(value)


def _types(value):
    if isinstance(value, (list, tuple)):
        return type(value), [_types(v) for v in value]
    if isinstance(value, dict):
        return type(value), sorted((repr(k), _types(v)) for k, v in value.items())
    return type(value)


def test_dates_paths_special_floats_and_dollar_keys_cross_exactly():
    codec = Codec(Endpoint(None, None))
    tz = dt.timezone(dt.timedelta(hours=8))
    values = [dt.datetime(2026, 9, 14, 10, 30, tzinfo=tz), dt.date(2026, 1, 2), dt.timedelta(seconds=90),
              tz, Path("/tmp/x"), PureWindowsPath("C:/x"), float("inf"), {"$tuple": 1}, {"a": {"$set": []}}]
    for value in values:
        back = codec.decode(json.loads(json.dumps(codec.encode(value))))
        assert back == value and type(back) is type(value), value
    assert str(codec.decode(codec.encode(float("nan")))) == "nan"


def test_calls_keep_the_identity_of_their_arguments(pair):
    # (what a call may not do to them: tests/labs/test_hostile_wire.py)
    judge, ns = pair
    exec("def first(xs):\n    return xs[0]\n"
         "def same(xs):\n    return xs\n", ns)
    messages = [{"role": "user"}, {"role": "assistant"}]
    assert judge.lookup("first")(messages) is messages[0]
    assert judge.lookup("same")(messages) is messages


def test_callbacks_reach_the_judge_and_the_worker_s_own_objects_go_home(pair):
    judge, ns = pair
    exec("def twice(f, x):\n    return f(f(x))\n"
         "class Box:\n    def __init__(self): self.n = 0\n"
         "def make():\n    return Box()\n"
         "def peek(box):\n    return type(box).__name__, box.n\n", ns)
    assert judge.lookup("twice")(lambda x: x * 3, 2) == 18
    box = judge.lookup("make")()
    assert isinstance(box, Remote) and box.n == 0
    assert judge.lookup("peek")(box) == ("Box", 0)  # its own object, not a copy


def test_callbacks_from_many_threads_at_once_each_get_their_own_answer(pair):
    # A student's agent loop runs a turn's tool calls in a thread pool; each thread calls back
    # into the judge's execute_tool and client at once. Before the endpoint took turns, replies
    # went to the wrong thread: a wrong answer, or a thread waiting for ever (a 300 s timeout).
    judge, ns = pair
    exec("from concurrent.futures import ThreadPoolExecutor\n"
         "def fan_out(f, n):\n"
         "    with ThreadPoolExecutor(8) as pool:\n"
         "        return list(pool.map(lambda i: f(i, [i]), range(n)))\n", ns)

    def slow_square(i, box):
        if i % 3 == 0:
            threading.Event().wait(0.001)  # let the other threads' requests cross this one
        return i * i, box

    for _ in range(20):
        assert judge.lookup("fan_out")(slow_square, 40) == [(i * i, [i]) for i in range(40)]


def test_a_callback_may_fan_out_to_threads_that_call_the_other_side(pair):
    # Lab 10: the judge calls the student's run_attack_table, which calls back into the judge's
    # agent loop, whose thread pool calls the student's guard: the thread that serves the
    # callback waits for threads that need answers of their own (a lock held by it deadlocked).
    judge, ns = pair
    exec("def square(x):\n    return x * x\n"
         "def call_back(f):\n    return f()\n", ns)
    square = judge.lookup("square")

    def fan():
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(square, range(30)))

    for _ in range(10):
        assert judge.lookup("call_back")(fan) == [x * x for x in range(30)]


def test_a_remote_object_never_equals_what_it_claims_to(pair):
    judge, ns = pair
    exec("class Liar:\n    def __eq__(self, o): return True\n    def __bool__(self): return True\n"
         "def liar():\n    return Liar()\n"
         "class S(str):\n    def __eq__(self, o): return True\n"
         "def fake():\n    return S('wrong')\n", ns)
    liar = judge.lookup("liar")()
    assert (liar == 5) is False and (liar == liar) is True
    assert judge.lookup("fake")() == "wrong" and type(judge.lookup("fake")()) is str


def test_exceptions_arrive_as_their_type_or_the_nearest_trusted_one_with_the_line(pair):
    judge, ns = pair
    exec(compile("class Mine(ValueError):\n    pass\n"
                 "def bad():\n    return {}['limit']\n"
                 "def mine():\n    raise Mine('no good')\n"
                 "def odd():\n    raise type('Odd', (BaseException,), {})('strange')\n",
                 "<exercise demo>", "exec"), ns)
    with pytest.raises(KeyError) as raised:
        judge.lookup("bad")()
    assert "line 4" in " ".join(getattr(raised.value, "__notes__", []))
    with pytest.raises(ValueError, match="no good"):
        judge.lookup("mine")()
    with pytest.raises(RemoteError, match="Odd: strange"):
        judge.lookup("odd")()
    with pytest.raises(NameError, match="not defined by your exercise"):
        judge.lookup("nothing_here")


@dataclasses.dataclass
class _Untrusted:  # defined in a test module: not a class the judge rebuilds
    x: int = 0


@pytest.mark.parametrize("message", [
    {"$obj": "subprocess:Popen", "fields": {"args": "touch /tmp/pwned"}},
    {"$enum": "subprocess:Popen", "value": "touch /tmp/pwned"},
    {"$enum": "builtins:type", "value": "x"},
    {"$obj": "builtins:str", "items": ["x"]},
    {"$exception": "builtins:dict", "args": []},
    {"$model": "course.llm.models:ModelSpec", "data": {}},
    {"$obj": "tests.labs.test_wire:_Untrusted", "fields": {"x": 1}},
    {"$ref": 999}, {"$same": [0]}, {"$float": "1e999999"}, {"$timedelta": ["a", 0, 0]},
    {"$nothing": 1},
    {"$dict": [], "class": "collections:OrderedDict"},  # not a trusted module
    {"$dict": [], "class": "solutions.status_bar.place:_text"},  # not a class
    {"$dict": [], "class": "course.labs.wire:Codec"},  # not a dict
    {"$dict": [], "class": "course.givens.status_bar:StatusMessage", "attrs": {"__class__": 1}},
    {"$exception": "course.labs.remote:StudentTimeout", "args": ["forged"]},  # the judge's verdict
    {"$exception": "builtins:KeyboardInterrupt", "args": []},  # the judge's to decide
])
def test_the_judge_refuses_to_build_what_it_does_not_trust(message):
    codec = Codec(Endpoint(None, None))
    with pytest.raises(WireError):
        codec.decode(message)


def test_a_marked_dict_of_a_trusted_module_keeps_its_class_and_attributes():
    # Lab 08: a status bar the student's place_status placed is a StatusMessage (a dict whose
    # type is the mark); as a plain dict the judge could not tell it from a look-alike.
    from solutions.status_bar import StatusMessage

    codec = Codec(Endpoint(None, None))
    bar = StatusMessage("<agent_status>\nstep: 3\n</agent_status>")
    back = codec.decode(json.loads(json.dumps(codec.encode([bar, dict(bar)]))))
    assert type(back[0]) is StatusMessage and back[0] == bar and back[0].block == bar.block
    assert type(back[1]) is dict


def test_too_deep_a_value_is_refused_both_ways():
    codec = Codec(Endpoint(None, None))
    deep = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(WireError):
        codec.encode(deep)
    data = []
    for _ in range(MAX_DEPTH + 5):
        data = [data]
    with pytest.raises(WireError):
        codec.decode(data)


def test_a_malformed_request_gets_an_error_answer_and_the_worker_goes_on(pair):
    judge, ns = pair
    ns["f"] = lambda: 1
    judge.send({"id": 77, "op": "call", "handle": 12345, "args": [], "kwargs": {}})
    answer = judge.receive()
    assert answer["re"] == 77 and "no object with handle" in answer["error"]["message"]
    assert judge.lookup("f")() == 1
