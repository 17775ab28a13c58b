"""Chapter 18's lesson support: what the lesson measures and takes apart about MCP.

    generated       servers shaped like popular ones (seeded, written for the course)
    cost            the schemas' tokens, the bill cached and uncached, a change mid-session
    strategies      all schemas / on demand / code execution on the same tasks
    code_execution  a program run in chapter 07's sandbox; code_api, what it may call
    primitives      resources and prompts, and when a resource beats a tool
    risks           poisoned description, rug pull, name collision, injected result; defences
"""
