"""The server never crashes: malformed, huge and random input all get a JSON answer."""
import http.client
import json
import subprocess
import sys
import urllib.request

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.server import MAX_BODY_BYTES, TeachingModel
from course.llm.validation import RequestError


def raw_post(server, body: bytes, headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request("POST", "/v1/chat/completions", body=body,
                     headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def healthy(server):
    ok = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    return raw_post(server, ok)[0] == 200


def test_malformed_json_is_a_400_with_an_openai_style_body(server):
    status, body = raw_post(server, b'{"model": "m", "messages": [')
    assert status == 400
    assert "could not parse the JSON body" in body["error"]["message"]
    assert body["error"]["type"] == "invalid_request_error"
    assert healthy(server)


def test_invalid_utf8_and_non_object_bodies(server):
    assert raw_post(server, b"\xff\xfe\x00")[0] == 400
    assert raw_post(server, b"[1, 2, 3]")[1]["error"]["message"].startswith("Invalid type for 'body'")
    assert raw_post(server, b"9" * 100000)[0] == 400
    assert raw_post(server, b"[" * 100000)[0] == 400  # deep nesting: RecursionError handled
    assert healthy(server)


def test_oversized_bodies_are_refused_before_reading(server):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.putrequest("POST", "/v1/chat/completions")
    conn.putheader("Content-Length", str(MAX_BODY_BYTES + 1))
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 413 and "larger than" in json.loads(response.read())["error"]["message"]
    conn.close()
    assert healthy(server)


def test_a_large_valid_request_is_answered(server):
    text = "Line of a long build log with an error code E1234 and path /src/a.c\n" * 20000
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()
    status, reply = raw_post(server, body)
    assert status == 200 and reply["usage"]["prompt_tokens"] > 200000


def test_unknown_paths_are_404_json(server):
    with urllib.request.urlopen(f"http://{server.host}:{server.port}/v1/models") as r:
        assert json.loads(r.read())["data"][0]["id"] == "teaching-model"
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request("POST", "/v1/completions", body=b"{}", headers={"Content-Length": "2"})
    response = conn.getresponse()
    assert response.status == 404 and "chat/completions" in json.loads(response.read())["error"]["message"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
roles = st.sampled_from(["system", "user", "assistant", "tool", "developer", "robot", None])
messages = st.lists(st.fixed_dictionaries({"role": roles}, optional={
    "content": st.none() | st.text(max_size=50) | json_values,
    "tool_call_id": st.text(max_size=5) | json_values,
    "tool_calls": st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "b"]) | json_values},
                                                 optional={"type": json_values,
                                                           "function": json_values}), max_size=3),
    "name": json_values}), max_size=6)
bodies = st.fixed_dictionaries({}, optional={
    "model": st.text(max_size=10) | json_values, "messages": messages | json_values,
    "tools": json_values, "tool_choice": json_values, "temperature": json_values,
    "max_tokens": json_values, "stream": json_values})


@settings(max_examples=300, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(bodies)
def test_any_body_is_answered_or_refused_never_crashes(body):
    try:
        reply = TeachingModel().complete(body)
    except RequestError as exc:
        assert exc.status == 400 and exc.message
    else:
        assert reply["choices"][0]["message"]["role"] == "assistant"


def test_standalone_server_for_curl():
    with course.llm.serve() as probe:  # find a free port, then release it
        port = probe.port
    proc = subprocess.Popen([sys.executable, "-m", "course.llm", "--port", str(port)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert "listening on" in proc.stdout.readline()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            data=json.dumps({"model": "teaching-model",
                             "messages": [{"role": "user", "content": "Hello"}]}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.loads(response.read())["choices"][0]["message"]["content"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_client_uses_the_teaching_model_unless_a_provider_is_configured(monkeypatch):
    for var in ("COURSE_LLM_API_KEY", "COURSE_LLM_BASE_URL", "COURSE_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    local = course.llm.client()
    assert str(local.base_url).startswith("http://127.0.0.1:")
    assert course.llm.client().base_url == local.base_url  # one server per process
    assert course.llm.model_name() == "teaching-model"

    monkeypatch.setenv("COURSE_LLM_API_KEY", "sk-test")
    monkeypatch.setenv("COURSE_LLM_BASE_URL", "https://api.example.invalid/v1")
    monkeypatch.setenv("COURSE_LLM_MODEL", "some-model")
    remote = course.llm.client()
    assert str(remote.base_url) == "https://api.example.invalid/v1/"
    assert course.llm.model_name() == "some-model"

    monkeypatch.delenv("COURSE_LLM_MODEL")
    try:
        course.llm.model_name()
    except RuntimeError as exc:
        assert "COURSE_LLM_MODEL" in str(exc)
    else:
        raise AssertionError("a provider without a model name must be refused")
