"""Writes catalogue.json: about a hundred tool definitions, written for Chapter 09.

The tools are realistic in shape (OpenAI Chat Completions `tools` entries: a name, a
description that says when to use the tool, a JSON Schema for the arguments) and cover the
areas a general agent meets: files, git, builds, CI, the web, documents, data, issues, mail,
calendars, cloud and databases. Nothing here runs: the lesson needs their *size* and their
*words* (for tool search), and a few stand-in results. Regenerate with
`python data/tools/make_catalogue.py`; the output is byte-stable.
"""
import json
from pathlib import Path

S, I, B, A = "string", "integer", "boolean", "array"  # noqa: E741 (short: the table below is dense)


def p(name, kind, description, required=True, enum=None, items=None):
    spec = {"type": kind, "description": description}
    if enum:
        spec["enum"] = enum
    if kind == A:
        spec["items"] = {"type": items or S}
    return name, spec, required


PATH = p("path", S, "File path relative to the workspace, e.g. src/main.c")
REPO = p("repo", S, "Repository as owner/name, e.g. glennrp/libpng")

TOOLS = [
    # files
    ("read_file", "Read a text file from the workspace and return its contents with line numbers. "
     "Use before editing a file. Large files are returned in pages.",
     [PATH, p("offset", I, "First line to return (1-based)", False), p("limit", I, "Maximum number of lines", False)]),
    ("write_file", "Create or overwrite a text file in the workspace with the given content.",
     [PATH, p("content", S, "The complete new content of the file")]),
    ("edit_file", "Replace one exact occurrence of a string in a file. Fails if the string is absent or appears more than once.",
     [PATH, p("old_text", S, "Text to replace, copied exactly"), p("new_text", S, "Replacement text")]),
    ("list_directory", "List the files and folders in a workspace directory, with sizes.",
     [p("path", S, "Directory path relative to the workspace, e.g. src"), p("recursive", B, "Include subfolders", False)]),
    ("search_files", "Search file contents in the workspace with a regular expression and return matching lines with file names.",
     [p("pattern", S, "Regular expression to search for"), p("glob", S, "Limit to files matching this glob, e.g. *.c", False)]),
    ("find_files", "Find files in the workspace whose names match a glob pattern.",
     [p("glob", S, "Glob pattern, e.g. **/CMakeLists.txt")]),
    ("file_info", "Show a file's type, size, permissions and, for binaries, the CPU architecture it was built for.",
     [PATH]),
    ("move_file", "Move or rename a file inside the workspace.",
     [p("source", S, "Current path"), p("destination", S, "New path")]),
    ("delete_file", "Delete a file from the workspace. Asks for confirmation on files outside the build folder.",
     [PATH]),
    ("diff_files", "Show a unified diff between two files in the workspace.",
     [p("left", S, "First file"), p("right", S, "Second file")]),
    ("read_skill_file", "Read a sub-document or script of an installed skill, e.g. a layout guide the skill's steps point to.",
     [p("skill", S, "Skill name, e.g. slides-from-paper"), p("file", S, "File inside the skill folder, e.g. reference.md")]),
    ("run_skill_script", "Run a script bundled with an installed skill and return its output.",
     [p("skill", S, "Skill name"), p("script", S, "Script path inside the skill folder, e.g. scripts/thumbnail.py"),
      p("args", A, "Arguments for the script", False)]),
    # shell and builds
    ("run_command", "Run a shell command in the workspace sandbox and return its exit code, stdout and stderr. Prefer a dedicated tool when one exists.",
     [p("command", S, "The command line to run"), p("timeout_s", I, "Seconds before the command is stopped", False)]),
    ("run_cmake", "Configure a CMake project into a build folder. Pass -D options for toolchain files and cache variables.",
     [p("source_dir", S, "Folder holding CMakeLists.txt"), p("build_dir", S, "Build folder to create"),
      p("options", A, "Extra arguments such as -DCMAKE_TOOLCHAIN_FILE=toolchain.cmake", False)]),
    ("run_make", "Build a configured project with make or ninja and return the compiler output.",
     [p("build_dir", S, "Build folder"), p("target", S, "Target to build, e.g. all or install", False),
      p("jobs", I, "Parallel jobs", False)]),
    ("run_tests", "Run the project's test suite (pytest, ctest or npm test, detected from the project) and return failures.",
     [p("path", S, "Test file or folder; the whole suite when omitted", False), p("filter", S, "Only tests whose name matches", False)]),
    ("install_package", "Install a system or language package into the sandbox (apt, pip or npm).",
     [p("manager", S, "Package manager", enum=["apt", "pip", "npm"]), p("name", S, "Package name")]),
    ("list_toolchains", "List the cross-compilers and sysroots installed in the sandbox, with their target triples.", []),
    ("lint_code", "Run the project's linter on files and return the warnings.",
     [p("paths", A, "Files or folders to lint")]),
    ("format_code", "Format source files with the project's formatter (black, clang-format, prettier).",
     [p("paths", A, "Files to format")]),
    ("profile_command", "Run a command under a profiler and return the ten slowest functions.",
     [p("command", S, "Command to profile")]),
    # git
    ("git_status", "Show the working tree status: staged, modified and untracked files.", []),
    ("git_diff", "Show changes between the working tree, the index or two commits.",
     [p("target", S, "Commit, branch or range, e.g. HEAD~1..HEAD", False), p("path", S, "Limit to a path", False)]),
    ("git_log", "List commits with hash, author, date and subject, newest first.",
     [p("range", S, "Revision range, e.g. v1.6.43..HEAD", False), p("max_count", I, "Maximum commits", False)]),
    ("git_show", "Show one commit's message and diff.", [p("commit", S, "Commit hash or reference")]),
    ("git_tags", "List release tags, newest first, with their dates.", []),
    ("git_commit", "Commit the staged changes with a message.", [p("message", S, "Commit message")]),
    ("git_add", "Stage files for the next commit.", [p("paths", A, "Paths to stage")]),
    ("git_branch", "List branches or create one.", [p("name", S, "Branch to create; lists branches when omitted", False)]),
    ("git_checkout", "Switch to a branch or commit.", [p("ref", S, "Branch, tag or commit")]),
    ("git_blame", "Show which commit last changed each line of a file.", [PATH]),
    # code hosting and CI
    ("list_pull_requests", "List a repository's pull requests with number, title, author and state.",
     [REPO, p("state", S, "Which pull requests", enum=["open", "closed", "merged", "all"])]),
    ("get_pull_request", "Get one pull request's description, files changed and review comments.",
     [REPO, p("number", I, "Pull request number")]),
    ("create_pull_request", "Open a pull request from a branch.",
     [REPO, p("head", S, "Branch with the changes"), p("base", S, "Branch to merge into"), p("title", S, "Title"), p("body", S, "Description", False)]),
    ("review_pull_request", "Post a review on a pull request: approve, comment or request changes.",
     [REPO, p("number", I, "Pull request number"), p("event", S, "Review verdict", enum=["APPROVE", "COMMENT", "REQUEST_CHANGES"]), p("body", S, "Review text")]),
    ("list_issues", "List a repository's issues, filtered by label or state.",
     [REPO, p("state", S, "Issue state", False, enum=["open", "closed", "all"]), p("label", S, "Only issues with this label", False)]),
    ("get_issue", "Get an issue's text and comments.", [REPO, p("number", I, "Issue number")]),
    ("create_issue", "File a new issue with a title, body and labels.",
     [REPO, p("title", S, "Issue title"), p("body", S, "Issue text"), p("labels", A, "Labels", False)]),
    ("comment_issue", "Add a comment to an issue or pull request.", [REPO, p("number", I, "Issue number"), p("body", S, "Comment text")]),
    ("close_issue", "Close an issue, optionally with a closing comment.", [REPO, p("number", I, "Issue number"), p("comment", S, "Closing comment", False)]),
    ("list_ci_runs", "List recent CI pipeline runs with status, branch and duration.",
     [REPO, p("branch", S, "Only runs on this branch", False)]),
    ("fetch_ci_log", "Download the full log of a CI job, e.g. a failed build or test job.",
     [REPO, p("job_id", S, "CI job identifier")]),
    ("search_log", "Search a downloaded log for a regular expression and return matching lines with line numbers and context.",
     [p("log_id", S, "Log identifier returned by fetch_ci_log"), p("pattern", S, "Regular expression, e.g. error|FAILED")]),
    ("rerun_ci_job", "Re-run a failed CI job.", [REPO, p("job_id", S, "CI job identifier")]),
    # web and research
    ("web_search", "Search the web and return titles, URLs and snippets.",
     [p("query", S, "Search query"), p("max_results", I, "Number of results", False)]),
    ("fetch_url", "Fetch a web page and return its main text as Markdown.", [p("url", S, "Absolute http(s) URL")]),
    ("http_post", "Send an HTTP POST request with a JSON body to a URL and return the response.",
     [p("url", S, "Absolute http(s) URL"), p("body", S, "JSON body")]),
    ("search_papers", "Search scholarly papers by keywords; returns titles, authors, years and PDF links.",
     [p("query", S, "Keywords"), p("year_from", I, "Earliest year", False)]),
    ("read_pdf", "Extract the text of a PDF page by page, with the captions of its figures and tables.",
     [PATH, p("pages", S, "Page range, e.g. 1-5", False)]),
    ("extract_pdf_figures", "Save the figures of a PDF as PNG files and return their paths and captions.", [PATH]),
    ("translate_text", "Translate text between languages.",
     [p("text", S, "Text to translate"), p("target_language", S, "Language code, e.g. en or zh")]),
    ("summarize_text", "Summarise a long text into a few sentences.", [p("text", S, "Text to summarise"), p("max_sentences", I, "Length limit", False)]),
    ("check_links", "Check every link in a Markdown or HTML file and report broken ones.", [PATH]),
    # documents
    ("render_slides", "Render HTML sections into a slide deck (PPTX), one section per slide.",
     [p("html", S, "HTML with one <section> per slide"), p("output_path", S, "Where to save the .pptx"),
      p("number_slides", B, "Add slide numbers in the footer", False)]),
    ("convert_document", "Convert a document between formats (docx, pdf, md, html, pptx).",
     [PATH, p("to_format", S, "Target format", enum=["docx", "pdf", "md", "html", "pptx"])]),
    ("markdown_to_pdf", "Render a Markdown file to PDF.", [PATH, p("output_path", S, "Where to save the PDF")]),
    ("spell_check", "Check the spelling of a text file and list suspected mistakes.", [PATH, p("language", S, "Language code", False)]),
    ("word_count", "Count words, sentences and reading time of a document.", [PATH]),
    ("create_diagram", "Draw a diagram from Mermaid or Graphviz source and save it as SVG.",
     [p("source", S, "Diagram source"), p("output_path", S, "Where to save the SVG")]),
    # data
    ("describe_csv", "Read a CSV file and report its columns, inferred types, row count and a sample of rows.", [PATH]),
    ("query_csv", "Run an SQL query over one or more CSV files (as tables named after the files).",
     [p("sql", S, "SQL query, e.g. SELECT region, SUM(amount) FROM sales GROUP BY region"), p("paths", A, "CSV files")]),
    ("plot_chart", "Plot a line, bar or scatter chart from a CSV file and save it as PNG.",
     [PATH, p("x", S, "Column on the x axis"), p("y", S, "Column on the y axis"),
      p("kind", S, "Chart type", enum=["line", "bar", "scatter"]), p("output_path", S, "Where to save the PNG")]),
    ("clean_csv", "Normalise a CSV file: trim spaces, unify dates, drop empty rows.", [PATH]),
    ("join_csv", "Join two CSV files on a key column.", [p("left", S, "First CSV"), p("right", S, "Second CSV"), p("key", S, "Key column")]),
    ("excel_to_csv", "Convert one sheet of an Excel workbook to CSV.", [PATH, p("sheet", S, "Sheet name", False)]),
    ("run_python", "Run a short Python snippet in a sandbox with pandas and numpy and return what it prints.",
     [p("code", S, "Python source")]),
    ("compute_statistics", "Compute mean, median, quartiles and outliers of a numeric column.",
     [PATH, p("column", S, "Numeric column")]),
    # databases
    ("sql_query", "Run a read-only SQL query on the project database and return at most 200 rows.",
     [p("sql", S, "SQL query"), p("database", S, "Database name", False)]),
    ("list_tables", "List the tables of the project database with row counts.", [p("database", S, "Database name", False)]),
    ("describe_table", "Show a table's columns, types and indexes.", [p("table", S, "Table name")]),
    ("explain_query", "Show the query plan of an SQL query.", [p("sql", S, "SQL query")]),
    ("backup_database", "Dump the project database to a file.", [p("output_path", S, "Where to save the dump")]),
    # communication
    ("send_email", "Send an email. Asks the user to confirm recipients outside the organisation.",
     [p("to", A, "Recipient addresses"), p("subject", S, "Subject line"), p("body", S, "Plain-text body")]),
    ("search_email", "Search the user's mailbox and return matching messages' senders, subjects and dates.",
     [p("query", S, "Search terms, e.g. from:alice invoice")]),
    ("read_email", "Read one email message with its attachments listed.", [p("message_id", S, "Message identifier")]),
    ("send_chat_message", "Post a message to a team chat channel.",
     [p("channel", S, "Channel name, e.g. #builds"), p("text", S, "Message text")]),
    ("list_chat_messages", "Read the latest messages of a team chat channel.", [p("channel", S, "Channel name"), p("limit", I, "How many", False)]),
    # calendar and time
    ("get_current_time", "Get the current date and time in a timezone.",
     [p("timezone", S, "Timezone name, e.g. America/Vancouver")]),
    ("convert_timezone", "Convert a time from one timezone to another.",
     [p("time", S, "ISO time, e.g. 2026-03-01T09:00"), p("from_timezone", S, "Source timezone"), p("to_timezone", S, "Target timezone")]),
    ("list_events", "List calendar events between two dates.", [p("start", S, "ISO date"), p("end", S, "ISO date")]),
    ("create_event", "Create a calendar event and invite attendees.",
     [p("title", S, "Event title"), p("start", S, "ISO date-time"), p("duration_minutes", I, "Length"), p("attendees", A, "Email addresses", False)]),
    ("find_free_slot", "Find the first free slot of a given length shared by several people's calendars.",
     [p("attendees", A, "Email addresses"), p("duration_minutes", I, "Length")]),
    ("set_reminder", "Set a reminder at a time.", [p("text", S, "Reminder text"), p("at", S, "ISO date-time")]),
    # weather and places
    ("get_weather", "Get the current weather (temperature, conditions, humidity) for a city.",
     [p("location", S, "City name, e.g. Vancouver"), p("unit", S, "Temperature unit", False, enum=["celsius", "fahrenheit"])]),
    ("get_forecast", "Get a daily weather forecast for the next days.",
     [p("location", S, "City name"), p("days", I, "Number of days, at most 10", False)]),
    ("geocode", "Turn an address or place name into latitude and longitude.", [p("address", S, "Address or place name")]),
    ("route_directions", "Directions and travel time between two places.",
     [p("origin", S, "Start"), p("destination", S, "End"), p("mode", S, "Travel mode", False, enum=["driving", "walking", "transit"])]),
    # cloud and operations
    ("list_instances", "List cloud virtual machines with state, size and region.", [p("region", S, "Region, e.g. eu-west-1", False)]),
    ("start_instance", "Start a stopped virtual machine.", [p("instance_id", S, "Instance identifier")]),
    ("stop_instance", "Stop a running virtual machine.", [p("instance_id", S, "Instance identifier")]),
    ("get_metrics", "Fetch a service metric (latency, error rate, CPU) over a time window.",
     [p("service", S, "Service name"), p("metric", S, "Metric", enum=["latency_p95", "error_rate", "cpu"]), p("window", S, "Window, e.g. 1h", False)]),
    ("query_logs", "Search production logs of a service for a pattern within a time window.",
     [p("service", S, "Service name"), p("pattern", S, "Search pattern"), p("window", S, "Window, e.g. 30m", False)]),
    ("list_alerts", "List firing monitoring alerts with severity and since when.", []),
    ("deploy_service", "Deploy a service version to an environment. Requires the user's confirmation for production.",
     [p("service", S, "Service name"), p("version", S, "Version or image tag"), p("environment", S, "Target", enum=["staging", "production"])]),
    ("rollback_service", "Roll a service back to its previous version.", [p("service", S, "Service name"), p("environment", S, "Target", enum=["staging", "production"])]),
    ("list_containers", "List running containers with image, status and ports.", []),
    ("container_logs", "Show the last lines of a container's log.", [p("container", S, "Container name or id"), p("lines", I, "How many lines", False)]),
    ("dns_lookup", "Resolve a host name and show its DNS records.", [p("host", S, "Host name")]),
    ("check_certificate", "Show a TLS certificate's issuer and expiry date for a host.", [p("host", S, "Host name")]),
    # tasks and notes
    ("create_todo", "Add an item to the agent's todo list.", [p("text", S, "What to do")]),
    ("list_todos", "Show the agent's todo list with done and open items.", []),
    ("complete_todo", "Mark a todo item as done.", [p("todo_id", I, "Item number")]),
    ("save_note", "Save a durable note (Markdown with YAML front matter) for later sessions.",
     [p("title", S, "Note title"), p("content", S, "Note body"), p("tags", A, "Tags", False)]),
    ("search_notes", "Search saved notes by keywords.", [p("query", S, "Keywords")]),
    # packages and security
    ("search_packages", "Search a package registry (PyPI, npm, crates.io) by name or keywords.",
     [p("registry", S, "Registry", enum=["pypi", "npm", "crates"]), p("query", S, "Search terms")]),
    ("audit_dependencies", "List known vulnerabilities in the project's locked dependencies.", []),
    ("scan_secrets", "Scan files for committed secrets such as API keys and private keys.", [p("path", S, "File or folder", False)]),
]


def tool(name, description, params):
    properties = {pname: spec for pname, spec, _ in params}
    required = [pname for pname, _, needed in params if needed]
    schema = {"type": "object", "properties": properties, "required": required,
              "additionalProperties": False}
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": schema}}


def main() -> None:
    names = [name for name, _, _ in TOOLS]
    assert len(names) == len(set(names)), "duplicate tool names"
    catalogue = [tool(*entry) for entry in TOOLS]
    out = Path(__file__).with_name("catalogue.json")
    out.write_text(json.dumps(catalogue, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(catalogue)} tools to {out.name}")


if __name__ == "__main__":
    main()
