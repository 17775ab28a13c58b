"""Serving an SDK server over stdio or Streamable HTTP (127.0.0.1 only), and starting one in a
subprocess that ends with its handle.

`start_http(argv)` runs a server command with `--http PORT` and waits until the port answers:
it waits for the server, not for a time, so a slow machine only waits longer. The handle's
`close()` ends the process (terminate, then kill) and is idempotent.
"""
from __future__ import annotations

import socket
import subprocess
import sys

import anyio


def serve_stdio(server) -> None:
    """Serve `server` on this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    async def run():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def serve_http(server, port: int, host: str = "127.0.0.1") -> None:
    """Serve `server` as Streamable HTTP on http://HOST:PORT/mcp (this machine only)."""
    import uvicorn

    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"the course serves MCP on this machine only, not on {host!r}")
    app = server.streamable_http_app(host=host)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """A server command run with --http PORT in a subprocess. `url` is its MCP endpoint."""

    def __init__(self, argv: list[str], port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen([*argv, "--http", str(self.port)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            self._wait_until_listening()
        except BaseException:
            self.close()
            raise

    def _wait_until_listening(self) -> None:
        while True:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"the MCP server stopped before it listened "
                                   f"(exit {self.process.returncode}): {error}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                try:
                    self.process.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    pass

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr and not self.process.stderr.closed:
            self.process.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def start_http(argv: list[str] | None = None, port: int | None = None) -> HttpServer:
    """The course's server (or the command `argv`) on Streamable HTTP, in a subprocess."""
    return HttpServer(argv or [sys.executable, "-m", "course.mcp"], port)
