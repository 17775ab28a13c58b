"""Layer 1: no shell. Split a command into an argv list and refuse everything a shell would do.

The naive tool hands the whole string to `/bin/sh`, so every character with a meaning to the
shell (`;` `&` `|` `<` `>` `$` backquotes, wildcards, `~`...) is a way around its whitelist.
Here the command is split into words the way a POSIX shell splits them (single quotes, double
quotes, backslash escapes), and any of those characters *outside quotes* is refused with one
line that says what it would have done and what to do instead. Inside quotes they are plain
text: `grep -E 'WARN|ERROR' app.log` and `awk '{ print $1 }' f` are fine.

The resulting list goes to the operating system as is (`subprocess` with a list, no shell),
so nothing in it is ever interpreted again.
"""
from __future__ import annotations

from course.givens.sandbox.refusal import Refusal, quote

MAX_COMMAND_CHARS = 4096  # a real retrieval command is a line; a megabyte is an attack or a bug

# One reason per kind of shell syntax: what it would do, then what to do instead.
_CHAINING = "Send one command per call."
SHELL_SYNTAX = {
    ";": ("';' would run a second command", _CHAINING),
    "&": ("'&' would chain commands or run one in the background", _CHAINING),
    "|": ("'|' would pipe into another program",
          "Run one program per call (sort -u, uniq -c or awk can count without a pipe)."),
    "<": ("'<' would redirect input from a file", "Name the file as an argument instead."),
    ">": ("'>' would redirect output into a file", "This tool only reads; it cannot write files."),
    "(": ("'(' would start a subshell", _CHAINING + " Quote it if it is text."),
    ")": ("')' would end a subshell", _CHAINING + " Quote it if it is text."),
    "$": ("'$' would expand a variable or run a command substitution",
          "Write the value itself; put a literal $ in single quotes."),
    "`": ("a backquote would run a command substitution", "Write the value itself."),
    "*": ("'*' is a wildcard the shell would expand",
          "Name the files, or use find -name or grep --include with a quoted pattern."),
    "?": ("'?' is a wildcard the shell would expand",
          "Name the files, or use find -name with a quoted pattern."),
    "[": ("'[' starts a wildcard the shell would expand", "Quote it if it is text."),
    "{": ("'{' starts a brace expansion in bash", "Quote it, or list the names one by one."),
    "}": ("'}' ends a brace expansion in bash", "Quote it, or list the names one by one."),
}
# Special only at the start of a word.
WORD_START_SYNTAX = {
    "~": ("'~' would expand to a home directory outside the workspace",
          "Use a path inside the workspace."),
    "#": ("'#' would start a comment and drop the rest of the line", "Quote it if it is text."),
}
NEWLINE = ("a line break would run a second command", _CHAINING)


def check_text(command) -> str:
    """Refuse what no command line can be: not text, too long, or unprintable control bytes."""
    if not isinstance(command, str):
        raise Refusal(f"the command must be text, not {type(command).__name__}.")
    if len(command) > MAX_COMMAND_CHARS:
        raise Refusal(f"the command is {len(command):,} characters long; the limit is "
                      f"{MAX_COMMAND_CHARS:,}. Send a shorter command.")
    for char in command:
        if char == "\x00":
            raise Refusal("the command contains a NUL byte, which no program argument can hold.")
        if (char < " " and char not in "\t\n") or char == "\x7f":
            raise Refusal(f"the command contains the control character U+{ord(char):04X}; "
                          "send plain text.")
        if "\ud800" <= char <= "\udfff":
            raise Refusal("the command is not valid text (it contains a lone surrogate).")
    return command


def _refuse_syntax(reason: tuple[str, str]) -> Refusal:
    what, hint = reason
    return Refusal(f"{what}, and this tool runs one program without a shell. {hint}")


def _read_double_quoted(command: str, start: int, word: list[str]) -> int:
    """Append the body of a "..." string to `word`; return the index after the closing quote."""
    i = start
    while i < len(command):
        char = command[i]
        if char == '"':
            return i + 1
        if char in "$`":
            raise Refusal(f"{quote(char)} would still be expanded inside double quotes, and "
                          "this tool runs one program without a shell. Use single quotes for "
                          "literal text.")
        if char == "\\" and i + 1 < len(command) and command[i + 1] in '$`"\\':
            word.append(command[i + 1])  # inside "...", a backslash escapes only these
            i += 2
            continue
        word.append(char)
        i += 1
    raise Refusal('the command has an unbalanced double quote ("). Close it or remove it.')


def parse_command(command: str) -> list[str]:
    """Split `command` into argv like a POSIX shell would, refusing every piece of shell syntax.

    Raises `Refusal` (one line) for unquoted operators, expansions, wildcards, line breaks,
    unbalanced quotes, an empty command, and text no program could receive.
    """
    check_text(command)
    words: list[str] = []
    word: list[str] = []
    in_word = False  # distinguishes an empty quoted word ('') from no word at all
    i = 0
    while i < len(command):
        char = command[i]
        if char in " \t":
            if in_word:
                words.append("".join(word))
                word, in_word = [], False
            i += 1
        elif char == "'":
            end = command.find("'", i + 1)
            if end < 0:
                raise Refusal("the command has an unbalanced single quote ('). Close it or "
                              "remove it.")
            word.append(command[i + 1:end])
            in_word, i = True, end + 1
        elif char == '"':
            i = _read_double_quoted(command, i + 1, word)
            in_word = True
        elif char == "\\":
            if i + 1 >= len(command):
                raise Refusal("the command ends with a backslash that escapes nothing. Remove it.")
            if command[i + 1] == "\n":
                raise _refuse_syntax(NEWLINE)
            word.append(command[i + 1])
            in_word, i = True, i + 2
        elif char == "\n":
            raise _refuse_syntax(NEWLINE)
        elif char in SHELL_SYNTAX:
            raise _refuse_syntax(SHELL_SYNTAX[char])
        elif not in_word and char in WORD_START_SYNTAX:
            raise _refuse_syntax(WORD_START_SYNTAX[char])
        else:
            word.append(char)
            in_word, i = True, i + 1
    if in_word:
        words.append("".join(word))
    if not words:
        raise Refusal("the command is empty. Send a command such as: ls")
    return words
