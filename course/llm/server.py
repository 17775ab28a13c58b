"""The teaching model's HTTP server: an OpenAI-compatible `/v1/chat/completions` and
`/v1/responses` (course/llm/responses.py) on 127.0.0.1.

Standard library only. Every request is answered with JSON, in the OpenAI error shape when it
is refused: malformed, oversized or over-window input, an unknown path or method, a URL or
headers too long all get a 4xx (tests/course/test_llm_never_500.py posts generated bodies and
bytes to prove it). A 500 would be a bug in the teaching model; it never takes the server down.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from course.llm.cache import PrefixCache, block_keys
from course.llm.chat import answer
from course.llm import responses
from course.llm.models import MODEL_NAME, model_listing
from course.llm.streaming import chat_chunks
from course.llm.timing import simulated_timing
from course.llm.validation import RequestError
from course.workers import Pool, WorkerDied
MAX_BODY_BYTES = 64 * 1024 * 1024
# the `code` of the errors http.server raises by itself (JsonHandler.send_error)
HTTP_ERROR_CODES = {400: "invalid_request", 405: "method_not_allowed", 408: "request_timeout",
                    414: "url_too_long", 431: "headers_too_large",
                    505: "http_version_not_supported"}
# A JSON escape of a surrogate (\ud800-\udfff): a pair is one character, a lone one is none.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
SOCKET_TIMEOUT_S = 60


class TeachingModel:
    """The model behind the server: stateless answers plus a prompt cache.

    Answers are a pure function of the request (`answer`), so while one request is being
    answered in the server's thread, concurrent ones are answered in a pool of worker
    processes (`workers` of them, shared by every server in this process, started on first
    need; 0: threads only). The prompt cache stays here, in one place: a worker returns the
    prompt's block keys and the cache is looked up and filled in this process, exactly as for
    an answer computed in the thread, so every client shares one cache.
    """

    def __init__(self, cache: PrefixCache | None = None, workers: int | None = None):
        self.cache = cache if cache is not None else PrefixCache()  # an empty cache is falsy
        self.responses = responses.ResponseStore()  # the Responses API's stored conversations
        self.workers = DEFAULT_WORKERS if workers is None else workers
        self._busy = 0
        self._busy_lock = threading.Lock()

    def complete(self, body, scope: str | None = None) -> dict:
        """The chat completion for a request body (RequestError, HTTP 4xx, on a problem).
        `scope` names the prompt cache it uses (default: the model's own)."""
        payload, tokens = answer(body)
        self._cached(payload, block_keys(tokens, self.cache.block, scope or payload["model"]))
        return payload

    def complete_raw(self, body, raw: bytes) -> dict:
        """`complete(body)` for a body the server parsed from `raw`: in this thread when no
        other request is being answered, else in a worker process."""
        with self._busy_lock:
            concurrent = self._busy > 0
            self._busy += 1
        try:
            if concurrent and self.workers > 0:
                outcome = _in_worker(self.workers, raw, self.cache.block)
                if outcome is not None:
                    kind, payload, keys = outcome
                    if kind == "error":
                        raise _refusal(*payload)
                    self._cached(payload, keys)
                    return payload
            return self.complete(body)
        finally:
            with self._busy_lock:
                self._busy -= 1

    def _cached(self, payload: dict, keys: list[bytes]) -> None:
        usage = payload["usage"]
        cached = usage["prompt_tokens_details"]["cached_tokens"] = self.cache.lookup_and_store_keys(keys)
        # Not part of the OpenAI API: the time a real deployment would take (course/llm/timing.py).
        payload["teaching_timing"] = simulated_timing(usage["prompt_tokens"], cached,
                                                      usage["completion_tokens"])

def _refusal(status: int, body: dict) -> RequestError:
    """The RequestError a worker reported as (status, body)."""
    error = body["error"]
    return RequestError(error["message"], error["param"], error["code"], status, error["type"])


def _work(raw: bytes, block: int):
    """In a worker process: ("ok", payload, block keys) or ("error", (status, body), None)."""
    try:
        payload, tokens = answer(json.loads(raw))
    except RequestError as exc:
        return "error", (exc.status, exc.body()), None
    return "ok", payload, block_keys(tokens, block, payload["model"])


DEFAULT_WORKERS = min(os.cpu_count() or 1, 4)
_pool: Pool | None = None
_pool_lock = threading.Lock()


def _in_worker(workers: int, raw: bytes, block: int):
    """`_work` in the process-wide pool of worker processes; None if the worker died (then
    the caller answers in its own thread)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = Pool(workers)
            atexit.register(_pool.stop)
        pool = _pool
    try:
        return pool.call(_work, raw, block)
    except WorkerDied:
        return None


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet keep-alive handler that answers in JSON (the teaching model, the test proxies)."""
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai SDK expects
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall

    def log_message(self, format, *args):  # quiet: notebooks should not fill with access logs
        pass

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_events(self, events) -> None:
        """Server-Sent Events, one per chunk, then `data: [DONE]`, in HTTP/1.1 chunked transfer
        encoding (so the connection stays open for the next request, as the SDK expects).
        `events` may be a generator (the local model's stream): each is sent as it comes, and the
        generator is closed even if the client goes away."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def send(event: str) -> None:
            data = f"data: {event}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        try:
            for event in events:
                send(json.dumps(event, ensure_ascii=False))
        finally:
            getattr(events, "close", lambda: None)()
        send("[DONE]")
        self.wfile.write(b"0\r\n\r\n")

    def send_error(self, code, message=None, explain=None):
        """The errors http.server sends by itself (a bad request line, a URL or headers too
        long, an unknown method, another HTTP version), as OpenAI-style JSON, not HTML; an
        unknown method is a 405 rather than http.server's 501."""
        code = int(code)
        if code == 501:
            code, message = 405, (f"Method {self.command!r} is not allowed: this server answers "
                                  f"GET, POST and DELETE")
        short, _ = self.responses.get(code, ("Error", ""))
        text = {414: "The request line is longer than this server reads (65,536 bytes)",
                431: f"{message or short}: this server reads at most 100 header lines of at "
                     f"most 65,536 bytes each"}.get(code, message or short)
        self.log_error("code %d, message %s", code, text)
        self.close_connection = True  # what follows on this connection cannot be trusted
        payload = {"error": {"message": text.rstrip(".") + ".", "type": "invalid_request_error",
                             "param": None, "code": HTTP_ERROR_CODES.get(code, "invalid_request")}}
        data = json.dumps(payload).encode()
        self.send_response(code, short)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        if code == 405:
            self.send_header("Allow", "GET, POST, DELETE")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


class ChatHandler(JsonHandler):
    server_version = "TeachingModel/1"
    timeout = SOCKET_TIMEOUT_S
    model: TeachingModel  # set on the subclass made per server
    serves = "the teaching model"  # who answers, in error messages (the local model's handler differs)

    def post_routes(self) -> dict:
        """POST paths (after an optional /v1) and their routes: route(model, body, raw bytes)."""
        return POST_ROUTES

    def _error(self, error: RequestError) -> None:
        self._send(error.status, error.body())

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        stored = _stored_response_id(path)
        if path in ("/v1/models", "/models"):
            self._send(200, model_listing())
        elif path in ("", "/health"):
            self._send(200, {"status": "ok", "model": MODEL_NAME})
        elif stored is not None:
            try:
                self._send(200, self.model.responses.get(stored)[0])
            except RequestError as exc:
                self._error(exc)
        else:
            self._error(RequestError(f"Unknown path {self.path!r}.", status=404,
                                     code="unknown_url"))

    def do_DELETE(self):
        stored = _stored_response_id(self.path.split("?")[0].rstrip("/"))
        length = self.headers.get("Content-Length", "0")
        if length.isdigit() and 0 < int(length) <= MAX_BODY_BYTES:
            self.rfile.read(int(length))  # a body DELETE does not need: read, so the connection stays usable
        elif length != "0":
            self.close_connection = True
        try:
            if stored is None:
                raise RequestError(f"Method 'DELETE' is not allowed on {self.path!r}: the teaching "
                                   f"model deletes /v1/responses/{{id}} only.", status=405,
                                   code="method_not_allowed")
            self._send(200, self.model.responses.delete(stored))
        except RequestError as exc:
            self._error(exc)

    def do_POST(self):
        try:
            body, raw = self._read_json()
        except RequestError as exc:
            self.close_connection = True  # the rest of the stream may be unread garbage
            self._error(exc)
            return
        path = self.path.split("?")[0].rstrip("/")
        routes = self.post_routes()
        route = routes.get(path.removeprefix("/v1"))
        if route is None:
            self._error(RequestError(f"Unknown path {self.path!r}: {self.serves} serves "
                                     f"POST {', '.join('/v1' + p for p in routes)}.",
                                     status=404, code="unknown_url"))
            return
        try:
            result = route(self.model, body, raw)
            if isinstance(result, EventStream):
                self.send_events(result.events)
            else:
                self._send(200, result)
        except RequestError as exc:
            self._error(exc)
        except Exception as exc:  # a bug in the model must not take the server down
            traceback.print_exc(file=sys.stderr)
            self._error(RequestError(f"{self.serves[0].upper()}{self.serves[1:]} failed on this request: "
                                     f"{type(exc).__name__}: {exc}", status=500,
                                     error_type="server_error", code="internal_error"))

    def _read_json(self):
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError("A Content-Length header is required.", status=411,
                               code="length_required")
        try:
            size = int(length)
        except ValueError:
            raise RequestError("Invalid Content-Length header.", code="invalid_header") from None
        if size < 0 or size > MAX_BODY_BYTES:
            raise RequestError(f"Request body of {size} bytes is larger than {self.serves} "
                               f"accepts ({MAX_BODY_BYTES} bytes).", status=413,
                               code="request_too_large")
        raw = self.rfile.read(size)
        try:
            body = json.loads(raw.decode("utf-8"))
            if SURROGATE_ESCAPE.search(raw):  # rare: only then look for a lone one
                json.dumps(body, ensure_ascii=False).encode("utf-8")
            return body, raw
        except UnicodeEncodeError:
            raise RequestError(
                "We could not parse the JSON body of your request: it escapes a lone surrogate "
                "(such as \\ud800), which is not a Unicode character. Send text as UTF-8, and a "
                "character beyond U+FFFF escaped as a pair (\\ud83d\\ude00), never half of one.",
                code="invalid_json") from None
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise RequestError(
                "We could not parse the JSON body of your request. (HINT: This likely means you "
                "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
                f"but what was sent was not valid JSON: {type(exc).__name__}: {exc})",
                code="invalid_json") from None


class EventStream:
    """What a route returns to be sent as Server-Sent Events instead of one JSON body."""

    def __init__(self, events: list[dict]):
        self.events = events


def _chat(model: TeachingModel, body, raw: bytes):
    """POST /v1/chat/completions: the completion, or its chunks when `stream` is true."""
    payload = model.complete_raw(body, raw)
    return EventStream(chat_chunks(payload, body)) if body.get("stream") else payload


# POST paths (after an optional /v1) and what answers them: route(model, body, raw bytes)
POST_ROUTES = {"/chat/completions": _chat,
               "/responses": lambda model, body, raw: responses.create(model, body),
               "/responses/compact": lambda model, body, raw: responses.compact(model, body),
               "/responses/input_tokens": lambda model, body, raw: responses.count_input_tokens(model, body)}
STORED_RESPONSE = re.compile(r"(?:/v1)?/responses/([^/]{1,200})")


def _stored_response_id(path: str) -> str | None:
    """The id in GET or DELETE /v1/responses/{id}, or None for another path."""
    found = STORED_RESPONSE.fullmatch(path)
    return found.group(1) if found else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that drops its keep-alive connection is not a server fault: no traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ServerHandle:
    """A running teaching model. Use as a context manager, or call stop().
    (course/local_model/server.py serves the local model with its own handler class.)"""

    handler_class = ChatHandler
    thread_name = "teaching-model"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: TeachingModel | None = None,
                 workers: int | None = None):
        self.model = model or TeachingModel(workers=workers)
        handler = type("Handler", (self.handler_class,), {"model": self.model})
        self._httpd = _Server((host, port), handler)
        self.host, self.port = self._httpd.server_address[:2]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name=self.thread_name,
                                        daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def client(self, **kwargs):
        """An `openai.OpenAI` client for this server (no key needed; no retries, so errors show)."""
        import openai

        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(base_url=self.base_url, api_key="not-needed-for-the-teaching-model",
                             **kwargs)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
