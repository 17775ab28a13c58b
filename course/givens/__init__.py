"""What the labs give: the data types, constants and reference data a lab hands the student,
shared with its answers and its lessons, one module per chapter topic. Nothing here answers
an exercise, so a graded submission's worker (which can read course/ but not solutions/) has
them and still has no answer to copy.

    gssc                    packets, the budget's config, the constants, term matching,
                            the sample candidates and tasks (03)
    compaction              the summary message's format and the study guide's rule-based
                            summary (04)
    notes                   the Note type, its errors, the sample notes, the simulated
                            crashes of write_atomic's checks (06)
    sandbox                 Refusal, the allowed programs' rules, RunResult and the
                            resource limits (07)
    status_bar              the status dict, its block's tags, StatusMessage (08)
    skills                  a parsed skill, the catalogue's tags, the skills on disk (09)
    injection               the types the defences and the attack table exchange (10)
    production_compaction   the replayed run and its probes, ResultStore, CircuitBreaker (11)
    task_world              Kestrel Air's desk: its database, tools, tasks and expected end
                            states, the prompt's sections, the desk as an agent (12)
    reasoning_stream        the streamed request's tools and schemas, the policies, reasoning's
                            token count, the decision-record format, the replayed loop (13)
    provider_context        the conversation's tools and turns, token counts, the placeholder,
                            a tool-heavy history, the strategies and requirements (14)
"""
