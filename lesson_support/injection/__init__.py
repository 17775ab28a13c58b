"""Chapter 10's red-team harness: an agent attacked through its context, judged by canaries.

Each row of `data/injection/attacks.json` is run as one small session with the agent loop of
Chapter 01 (`solutions.agent_loop.run_agent`) on `course.llm.client()`: a system prompt, the
user's task, and fake tools that serve the row's world and *record* every call that actually
runs. Nothing leaves the machine. `solutions.injection.run_attack_table` judges the record,
never the agent's reply about it.

The defences are layers, each switched on by name:

    fence            tool output from outside sources is wrapped by fence() and the system
                     prompt says such text is data (the textbook's source tagging)
    separate         untrusted text pasted into a privileged message (here: an attachment in
                     the user's message) is moved into a tool result by separate_roles()
    sanitise         lines with well-known injection phrases are cut out of outside text
                     (deliberately naive, as the textbook warns: rewording walks past it)
    least_privilege  only the tools the task needs are offered, and guard_call refuses others
    confirm          irreversible tools (send_email, write_file, http_post) run only if the
                     simulated user confirms that exact call (they confirm what the task asked)
    provenance       text that came from outside keeps that mark when it is stored: a note or
                     compaction summary built from outside text is fenced when it is recalled,
                     and a status-bar field filled from a tool result is not copied into the bar

Earlier sessions (the notes, the compaction summary) ran before any of this: what they left
behind is what the current session must cope with. Their sources are recorded as note tags,
and only the provenance layer reads them.

The package, one concern per module (this module re-exports what is used through it):

    data      the table and the tools, read from data/injection/
    layers    the layers by name, the naive sanitiser and a fence that does not escape
    world     Scene: the row's fake tools, where outside text enters and calls are guarded
    context   build_messages: the context a session starts from, earlier sessions included
    session   run_row and make_agent: one row as one recorded agent session (RowRun)
    tables    the configurations compared, run_configs, and their verdicts as text
    describe  canaries in words, and the parts of a run the lesson shows
"""
from __future__ import annotations

from lesson_support.injection.data import (DOMAIN, POLICY, SYSTEM_PROMPT, TABLE, load_rows,
                                           load_tools, row_named)
from lesson_support.injection.describe import completion_calling, row_line, tool_result_texts
from lesson_support.injection.layers import (LAYER_NOTES, LAYERS, REMOVED, WARNING, naive_fence,
                                             normalize_layers, sanitise)
from lesson_support.injection.session import (DefenceFailed, RecordingClient, RowRun, make_agent,
                                              run_row)
from lesson_support.injection.tables import (blocked_counts, counts_table, cumulative_configs,
                                             run_configs, single_configs, textbook_configs,
                                             verdict_grid)

__all__ = [
    "DOMAIN", "DefenceFailed", "LAYERS", "LAYER_NOTES", "POLICY", "REMOVED", "RecordingClient",
    "RowRun", "SYSTEM_PROMPT", "TABLE", "WARNING", "blocked_counts", "completion_calling",
    "counts_table", "cumulative_configs", "load_rows", "load_tools", "make_agent", "naive_fence",
    "normalize_layers", "row_line", "row_named", "run_configs", "run_row", "sanitise",
    "single_configs", "textbook_configs", "tool_result_texts", "verdict_grid",
]
