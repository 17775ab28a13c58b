"""Interop: neither side of the course's MCP code only agrees with itself.

    the SDK's own client (mcp.Client)  ->  the course's server, over stdio and Streamable HTTP
    the course's client (course.mcp)   ->  the official reference time server (mcp-server-time,
                                           written by others), over stdio
    the course's client                ->  the course's server, in-process, stdio and HTTP

Everything runs on this machine (stdio pipes, 127.0.0.1); every subprocess is ended by the
test that started it, which checks that it is gone.
"""
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from course.mcp import connect, course_server, course_server_command, start_http

TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
DESK_TOOLS = {"verify_identity", "lookup", "seat_count", "reschedule", "cancel", "card_refund",
              "voucher_refund", "add_bag", "upgrade_cabin"}


def children() -> set[int]:
    """This process's live child processes (Linux /proc)."""
    found = set()
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with open(f"/proc/{os.getpid()}/task/{task}/children") as f:
            found.update(int(pid) for pid in f.read().split())
    alive = set()
    for pid in found:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ")[1][0] != "Z":
                    alive.add(pid)
        except FileNotFoundError:
            pass
    return alive


async def sdk_session(server):
    """The SDK's own client: list the tools, call one that works and one that fails."""
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
        ok = await client.call_tool("lookup", {"booking_ref": "HPLNDG"})
        bad = await client.call_tool("lookup", {"booking_ref": "ZZZZZZ"})
        try:
            await client.call_tool("no_such_tool", {})
            unknown = None
        except MCPError as exc:
            unknown = exc.error.code
        return client.server_info.name, tools, ok, bad, unknown


def check_sdk_view(name, tools, ok, bad, unknown):
    assert name == "course"
    by_name = {t.name: t for t in tools}
    assert DESK_TOOLS | {"terminal", "notes"} <= set(by_name)
    assert by_name["lookup"].input_schema["required"] == ["booking_ref"]
    assert not ok.is_error and "Mei Chen" in ok.content[0].text
    assert bad.is_error and "no trip with reference 'ZZZZZZ'" in bad.content[0].text
    assert unknown == -32602  # the specification's error for an unknown tool


def test_the_sdk_client_talks_to_our_server_over_stdio():
    before = children()
    command = course_server_command()
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"PATH": os.environ.get("PATH", "")})
    check_sdk_view(*anyio.run(sdk_session, params))
    assert children() == before, "the stdio server outlived its session"


def test_the_sdk_client_talks_to_our_server_over_streamable_http():
    with start_http() as server:
        assert server.url.startswith("http://127.0.0.1:")
        check_sdk_view(*anyio.run(sdk_session, server.url))
    assert server.process.poll() is not None, "the HTTP server outlived its handle"


def test_our_client_talks_to_the_reference_time_server():
    before = children()
    with connect(TIME_SERVER) as conn:
        assert conn.server_name == "mcp-time"
        tools = {t["name"]: t for t in conn.list_tools()}
        assert set(tools) == {"get_current_time", "convert_time"}
        assert set(tools["convert_time"]["inputSchema"]["required"]) == {
            "source_timezone", "time", "target_timezone"}
        # Tokyo keeps no summer time: 12:00 UTC is 21:00 there on any date
        result = conn.call_tool("convert_time", {"source_timezone": "UTC", "time": "12:00",
                                                 "target_timezone": "Asia/Tokyo"})
        assert result["isError"] is False
        assert result["structuredContent"]["target"]["datetime"][11:16] == "21:00"
        assert result["structuredContent"]["time_difference"] == "+9.0h"
        wrong = conn.call_tool("convert_time", {"source_timezone": "Mars/Olympus", "time": "12:00",
                                                "target_timezone": "UTC"})
        assert wrong["isError"] is True
    assert children() == before, "the time server outlived the connection"


@pytest.mark.parametrize("transport", ["in-process", "stdio", "http"])
def test_our_client_and_server_agree_on_every_transport(transport, tmp_path):
    before = children()
    if transport == "http":
        handle = start_http()
        target = handle.url
    else:
        handle = None
        target = course_server(tmp_path) if transport == "in-process" else course_server_command()
    try:
        with connect(target) as conn:
            names = [t["name"] for t in conn.list_tools()]
            booked = conn.call_tool("reschedule", {"booking_ref": "TRVWXE", "new_day": "friday"})
            seats = conn.call_tool("seat_count", {"day": "friday"})
    finally:
        if handle:
            handle.close()
    assert DESK_TOOLS <= set(names)
    assert booked["content"][0]["text"] == "Trip TRVWXE now flies friday"
    # one server, one database: the move took one of friday's three places
    assert seats["content"][0]["text"] == "2 places free on friday"
    assert children() == before


def test_a_closed_connection_says_so():
    conn = connect(course_server())
    conn.close()
    with pytest.raises(RuntimeError, match="closed"):
        conn.list_tools()


def test_a_server_that_is_not_local_is_refused():
    with pytest.raises(ValueError, match="127.0.0.1"):
        connect("http://example.org/mcp")


async def sdk_primitives(server):
    async with Client(server) as client:
        resources = (await client.list_resources()).resources
        rules = await client.read_resource("course://desk/rules")
        prompt = await client.get_prompt("move_trip", {"booking_ref": "TRVWXE", "pin": "1937",
                                                       "new_day": "friday"})
        return resources, rules, prompt


def test_the_sdk_client_reads_our_resources_and_prompts():
    command = course_server_command()
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"PATH": os.environ.get("PATH", "")})
    resources, rules, prompt = anyio.run(sdk_primitives, params)
    assert {str(r.uri) for r in resources} == {"course://desk/rules", "course://desk/bookings"}
    assert "verify_identity" in rules.contents[0].text
    assert prompt.messages[0].content.text == "Please move trip TRVWXE to friday. My PIN is 1937."


def test_a_stdio_server_starts_when_our_stderr_has_no_file_descriptor():
    """In a notebook under nbval, sys.stderr has no fileno(), so a subprocess cannot inherit it;
    the server's stderr then goes to the real one (the SDK's default read sys.stderr at import)."""
    program = ("import io, sys\n"
               "class NoFileno(io.StringIO):\n"
               "    def fileno(self):\n"
               "        raise io.UnsupportedOperation('fileno')\n"
               "sys.stderr = NoFileno()\n"
               "from course.mcp import connect, course_server_command\n"
               "with connect(course_server_command()) as conn:\n"
               "    print(len(conn.list_tools()))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["11"]


def test_help_says_what_the_course_server_serves():
    done = subprocess.run([*course_server_command(), "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    served = done.stdout.split("tools served:")[1].split("resources:")[0]
    assert {line.split()[0] for line in served.strip().splitlines()} == DESK_TOOLS | {"notes", "terminal"}
    assert "course://desk/rules" in done.stdout and "move_trip(booking_ref, pin, new_day)" in done.stdout
    bad = subprocess.run([*course_server_command(), "--http", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--http takes a port from 1 to 65535" in bad.stderr
