"""Every model request as an OpenTelemetry span (GenAI semantic conventions), and what the
context was made of: on by default, offline, one OTLP JSON file per kernel under .traces/.

    install()            start tracing in this process (course.llm does it when it first builds
                         a client or a server); None when COURSE_TRACE=off
    tag(part, message)   say which part of the context a message is ("notes", "summary" …)
    compaction(policy, layer=None)  with-block: the requests inside were shaped by that policy
    agent_run(name)      with-block: a parent span for an agent's run
    tool_call(name, call_id=None, context=None)  with-block: a child span for one tool execution
    context()            the current trace context, for a tool run in another thread
    requests()           the session's requests as plain records (records.py)
    inspect()            the context inspector widget over them (inspector.py)

setup.py says how to turn it off, send it to a collector, or record message contents.
"""
from __future__ import annotations

from course.tracing.annotate import agent_run, compaction, context, tool_call
from course.tracing.composition import tag
from course.tracing.records import requests
from course.tracing.setup import current, install, shutdown


def inspect():
    """The context inspector over this session's trace (an ipywidgets view)."""
    from course.tracing.inspector import inspector

    return inspector()


__all__ = ["agent_run", "compaction", "context", "current", "inspect", "install", "requests",
           "shutdown", "tag", "tool_call"]
