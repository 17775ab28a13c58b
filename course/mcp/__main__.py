"""`python -m course.mcp`: the course's tools as an MCP server (stdio by default).

    python -m course.mcp                      stdio: an MCP client starts this as its subprocess
    python -m course.mcp --http 8765          Streamable HTTP on http://127.0.0.1:8765/mcp
    python -m course.mcp --notes FOLDER       keep the notes in FOLDER (default: a temporary one)
    python -m course.mcp --help               what it serves (this text and the tool list)
"""
from __future__ import annotations

import argparse
import sys
import tempfile

from course.mcp.course_tools import PROMPTS, RESOURCES, TERMINAL_WORKSPACE, course_server, course_tools


def _tool_list(notes_folder, workspace) -> str:
    tools, missing = course_tools(notes_folder, workspace)
    lines = ["tools served:"] + [f"  {t.name:16} {t.description.split('. ')[0].rstrip('.')}"
                                 for t in tools]
    lines += ["not served:"] + [f"  {m}" for m in missing] if missing else []
    lines += ["resources:"] + [f"  {r.uri:24} {r.description}" for r in RESOURCES]
    lines += ["prompts:"] + [f"  {p.name}({', '.join(p.arguments)})  {p.description}" for p in PROMPTS]
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m course.mcp", add_help=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="The course's tools as an MCP server (stdio by default).")
    p.add_argument("--http", type=int, metavar="PORT",
                   help="serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio")
    p.add_argument("--notes", metavar="FOLDER",
                   help="keep chapter 06's notes in this folder (default: a new temporary folder, "
                        "removed when the server ends)")
    p.add_argument("--workspace", metavar="FOLDER", default=str(TERMINAL_WORKSPACE),
                   help="the terminal's workspace (default: data/sandbox_workspace)")
    p.add_argument("--help", "-h", action="store_true", help="say what is served, and exit")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="course-mcp-notes-") as scratch:
        return _run(args, args.notes or scratch)


def _run(args, notes_folder) -> int:
    args.notes = notes_folder
    if args.help:
        print(parser().format_help())
        print(_tool_list(args.notes, args.workspace))
        return 0
    if args.http is not None and not 0 < args.http < 65536:
        print(f"--http takes a port from 1 to 65535, not {args.http}", file=sys.stderr)
        return 2
    server = course_server(args.notes, args.workspace)
    from course.mcp.transports import serve_http, serve_stdio

    if args.http is None:
        serve_stdio(server)
    else:
        serve_http(server, args.http)
    return 0


if __name__ == "__main__":
    sys.exit(main())
