"""Layer 2: rules for each command's options, and every path kept inside the workspace.

Dropping the shell is not enough: several "read-only" programs on the whitelist can run other
programs or write files through their own options (`find -exec`, `find -delete`, `sed -i`,
`sed 'e ...'`, `awk 'BEGIN { system(...) }'`, `sort -o`, even `uniq IN OUT`), and any path
argument can point outside the workspace (`/etc/...`, `../..`, a symbolic link).

So each allowed program gets a rule: which options it may take (an allow-list: an option we
have not thought about is refused, not waved through), which option values and operands are
paths, and how many paths it may name. Every path is resolved the way the kernel will resolve
it (`..` and symbolic links followed, with `os.path.realpath`) and must land inside the
workspace. Where a program has its own safe mode we use it (`sed --sandbox`).

Limits of this layer, on purpose: the rules only know the options written here, the program
text of awk is checked by patterns rather than parsed, and a path checked now could be swapped
for a link before the program opens it. Layers 3 and 4 cover what rules cannot.
"""
from __future__ import annotations

import os

from course.givens.sandbox.refusal import Refusal, quote
from course.givens.sandbox.rules import (RULES, CommandRule, check_find, check_tail_operand,
                                         refuse_option)


def resolve_inside(path: str, workspace, cwd=None) -> str:
    """The real location of `path` (relative to `cwd`), refused unless it is inside `workspace`.

    `..` and symbolic links are followed first, so `logs/../../x` and a link that points out
    of the workspace are both caught. A path that does not exist yet is resolved as far as it
    goes; the program will report it missing.
    """
    root = os.path.realpath(workspace)
    base = os.path.realpath(cwd) if cwd is not None else root
    target = os.path.realpath(os.path.join(base, path))
    if target != root and not target.startswith(root.rstrip(os.sep) + os.sep):
        raise Refusal(f"the path {quote(path)} leads outside the workspace (after following "
                      "'..' and symbolic links). Use a path inside the workspace.")
    return target


def _split_option(program: str, rule: CommandRule, argv: list[str], i: int):
    """Read the option at argv[i]: return (list of (option, value or None), next index)."""
    arg = argv[i]
    if arg.startswith("--"):
        name, has_value, value = arg.partition("=")
        if name in rule.flags and not has_value:
            return [(name, None)], i + 1
        if name not in rule.options:
            raise refuse_option(program, name)
        if has_value:
            return [(name, value)], i + 1
        if i + 1 >= len(argv):
            raise Refusal(f"{program} {name} needs a value after it.")
        return [(name, argv[i + 1])], i + 2
    found = []
    for position in range(1, len(arg)):  # a cluster of short options: -nE, -n5, -vF,
        option = "-" + arg[position]
        if option in rule.flags:
            found.append((option, None))
            continue
        if option not in rule.options:
            raise refuse_option(program, option)
        rest = arg[position + 1:]
        if rest:
            return found + [(option, rest)], i + 1
        if i + 1 >= len(argv):
            raise Refusal(f"{program} {option} needs a value after it.")
        return found + [(option, argv[i + 1])], i + 2
    return found, i + 1


def check_arguments(argv: list[str], workspace, cwd=None) -> list[str]:
    """Check argv against the rule of its program; return the argv to run.

    Raises `Refusal` for a program without a rule, an option not on its allow-list, a path
    outside the workspace, too many paths, or awk program text that could run commands or
    write files. The argv returned may carry extra safety options (sed --sandbox).
    """
    if not argv:
        raise Refusal("the command is empty. Send a command such as: ls")
    program = argv[0]
    if program == "find":
        return check_find(argv, workspace, cwd, resolve=resolve_inside)
    rule = RULES.get(program)
    if rule is None:
        raise Refusal(f"there are no argument rules for {quote(program)}, so it cannot run. "
                      f"Allowed: {', '.join(sorted(RULES) + ['find'])}.")
    if rule.text_only:
        return list(argv)
    operands: list[str] = []
    first_given = False  # the pattern/program/script came from an option (grep -e ...)
    options_done = False
    i = 1
    while i < len(argv):
        arg = argv[i]
        if options_done or arg == "-" or not arg.startswith("-"):
            operands.append(arg)  # GNU programs accept options after operands too
            i += 1
            continue
        if arg == "--":
            options_done = True
            i += 1
            continue
        pairs, i = _split_option(program, rule, argv, i)
        for option, value in pairs:
            if option in rule.first_from:
                first_given = True
            if value is not None and rule.options.get(option) == "path":
                resolve_inside(value, workspace, cwd)
    if rule.first and not first_given:
        if not operands:
            raise Refusal(f"{program} needs a {rule.first} first.")
        first, operands = operands[0], operands[1:]
        if rule.check_first is not None:
            rule.check_first(first)
    if rule.max_paths is not None and len(operands) > rule.max_paths:
        raise Refusal(f"{program} takes at most {rule.max_paths} file argument(s) here"
                      + (" (a second one would be an output file it writes)."
                         if program == "uniq" else "."))
    for path in operands:
        if program == "tail":
            check_tail_operand(path)
        if path != "-":  # "-" is standard input, which is closed
            resolve_inside(path, workspace, cwd)
    return [program, *rule.forced, *argv[1:]]
