"""A synchronous MCP connection over the official SDK's `mcp.Client`, for notebooks and loops.

The SDK's client is asynchronous and must be entered and left in one task. `connect(target)`
runs it in a task of its own, on an event loop in a thread of its own, and hands each call to
that task: `conn.list_tools()` is then an ordinary call, in a notebook cell (which already runs
an event loop) or in chapter 01's agent loop alike.

    target   an SDK server object (served in-process, no transport)
             a list of strings: a command that speaks MCP over stdio (started here, and ended
             when the connection closes)
             "http://127.0.0.1:PORT/mcp": Streamable HTTP

Results come back as plain dicts in the protocol's own field names (camelCase: `inputSchema`,
`isError`, `structuredContent`), the JSON a server sent, so nothing downstream depends on the
SDK's classes.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import threading

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client


def _plain(model) -> dict:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class McpConnection:
    """One open connection to one MCP server. Use as a context manager, or call `close()`."""

    def __init__(self, target):
        self.target = target
        self._devnull = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-connection",
                                        daemon=True)
        self._thread.start()
        self._ready = concurrent.futures.Future()
        self._queue: asyncio.Queue | None = None
        self._task = asyncio.run_coroutine_threadsafe(self._serve(), self._loop)
        try:
            self.server_name = self._ready.result()
        except BaseException:
            self._stop_loop()
            raise

    def _client(self) -> Client:
        target = self.target
        if isinstance(target, (list, tuple)):
            if not target or not all(isinstance(part, str) for part in target):
                raise ValueError(f"a stdio server is a command, a list of strings: got {target!r}")
            env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH",
                                                                "COURSE_NO_BWRAP", "TMPDIR",
                                                                "TIKTOKEN_CACHE_DIR", "COURSE_TRACE")}
            # the server's stderr goes to ours when ours is a real file; a notebook under nbval
            # gives sys.stderr no file descriptor, which a subprocess cannot write to
            target = stdio_client(StdioServerParameters(command=target[0], args=list(target[1:]),
                                                        env=env), errlog=self._errlog())
        elif isinstance(target, str) and not target.startswith(("http://127.0.0.1:", "http://localhost:")):
            raise ValueError(f"an HTTP server is reached on this machine only (http://127.0.0.1:PORT/mcp), "
                             f"not {target!r}")
        return Client(target)

    def _errlog(self):
        for stream in (sys.stderr, sys.__stderr__):
            try:
                stream.fileno()
                return stream
            except (AttributeError, OSError, ValueError):
                continue
        self._devnull = open(os.devnull, "w")
        return self._devnull

    async def _serve(self):
        self._queue = asyncio.Queue()
        try:
            client = self._client()
            async with client:
                info = client.server_info
                self._ready.set_result(info.name if info else "")
                while (item := await self._queue.get()) is not None:
                    call, future = item
                    try:
                        future.set_result(await call(client))
                    except BaseException as exc:  # handed to the caller's thread
                        future.set_exception(exc)
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise

    def _call(self, call):
        if self._queue is None or self._task.done():
            raise RuntimeError("this MCP connection is closed")
        future = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (call, future))
        return future.result()

    # ------------------------------------------------------------------ the protocol
    def list_tools(self) -> list[dict]:
        """tools/list: every tool's definition (name, description, inputSchema, ...)."""
        return [_plain(t) for t in self._call(lambda c: c.list_tools()).tools]

    def call_tool(self, name: str, arguments: dict | None = None) -> dict:
        """tools/call: the result as sent ({"content": [...], "isError": ..., ...})."""
        return _plain(self._call(lambda c: c.call_tool(name, arguments or {})))

    def list_resources(self) -> list[dict]:
        return [_plain(r) for r in self._call(lambda c: c.list_resources()).resources]

    def read_resource(self, uri: str) -> dict:
        return _plain(self._call(lambda c: c.read_resource(uri)))

    def list_prompts(self) -> list[dict]:
        return [_plain(p) for p in self._call(lambda c: c.list_prompts()).prompts]

    def get_prompt(self, name: str, arguments: dict | None = None) -> dict:
        return _plain(self._call(lambda c: c.get_prompt(name, arguments or {})))

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """End the session (a stdio server's process ends with it) and the loop's thread."""
        if self._queue is not None and not self._task.done():
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            try:
                self._task.result()
            except Exception:
                pass
        self._stop_loop()

    def _stop_loop(self) -> None:
        if self._devnull is not None:
            self._devnull.close()
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        if not self._loop.is_closed():
            self._loop.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(target) -> McpConnection:
    """An open `McpConnection` to `target` (see the module's docstring)."""
    return McpConnection(target)


def course_server_command(*args: str) -> list[str]:
    """The command that serves the course's tools over stdio (`python -m course.mcp`)."""
    return [sys.executable, "-m", "course.mcp", *args]
