"""Chapter 07's argument rules, given: what each allowed program may be given (`RULES`, one
`CommandRule` each), the awk program check, find's own allow-list (`check_find`) and tail's
old-style operands. Lab 07's `check_arguments` walks an argv against them; the walk and
`resolve_inside`, which keeps every path inside the workspace, are the lab's exercises (in
`solutions.sandbox.arguments`), so `check_find` takes the resolver it should use.

Limits of these rules, on purpose: they only know the options written here, and the program
text of awk is checked by patterns rather than parsed. Layers 3 and 4 cover what rules cannot.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from course.givens.sandbox.refusal import Refusal, quote


@dataclass(frozen=True)
class CommandRule:
    """What one program may be given.

    flags        options without a value (`-n`, `--count`)
    options      options with a value, mapped to the kind of value: "path" or "text"
    first        what the first operand is when it is not a path ("pattern", "program",
                 "script"), or None when every operand is a path
    first_from   options that provide that first operand instead (grep -e PATTERN, sed -e ...)
    max_paths    how many path operands are allowed (None: any number)
    text_only    every argument is plain text and nothing is checked (echo)
    check_first  an extra check for the first operand (awk's program text)
    forced       options always added right after the program name (sed --sandbox)
    """
    flags: frozenset = frozenset()
    options: dict = field(default_factory=dict)
    first: str | None = None
    first_from: frozenset = frozenset()
    max_paths: int | None = None
    text_only: bool = False
    check_first: object = None
    forced: tuple = ()


def _words(text: str) -> frozenset:
    return frozenset(text.split())

# Options that make a whitelisted program run a program, write a file, or follow links out of
# the workspace. They are refused anyway (they are not on any allow-list); naming them here
# only makes the refusal say why.
DANGEROUS_OPTIONS = {
    "find": {"-exec": "runs another program", "-execdir": "runs another program",
             "-ok": "runs another program", "-okdir": "runs another program",
             "-delete": "deletes files", "-fprint": "writes a file", "-fprint0": "writes a file",
             "-fprintf": "writes a file", "-fls": "writes a file",
             "-L": "follows symbolic links out of the workspace",
             "-H": "follows symbolic links out of the workspace",
             "-follow": "follows symbolic links out of the workspace",
             "-files0-from": "reads its file list from another file"},
    "sed": {"-i": "edits files in place", "--in-place": "edits files in place",
            "--follow-symlinks": "follows symbolic links"},
    "sort": {"-o": "writes its output to a file", "--output": "writes its output to a file",
             "--compress-program": "runs another program",
             "-T": "writes temporary files elsewhere",
             "--temporary-directory": "writes temporary files elsewhere"},
    "grep": {"-R": "follows symbolic links out of the workspace",
             "--dereference-recursive": "follows symbolic links out of the workspace"},
    "tail": {"-f": "follows the file and never ends", "-F": "follows the file and never ends",
             "--follow": "follows the file and never ends",
             "--retry": "keeps trying to open a file (with -F, for ever)",
             "-s": "sets how often a followed file is read", "--sleep-interval": "sets how "
             "often a followed file is read", "--pid": "follows a file until a process ends",
             "--max-unchanged-stats": "tunes how a followed file is re-opened"},
    "awk": {"-f": "runs a program file this check cannot read",
            "-W": "sets implementation options (mawk -W exec runs a program file)",
            # gawk's own options; mawk refuses them anyway, this says why
            "-e": "adds program text this check does not see (gawk)",
            "--source": "adds program text this check does not see (gawk)",
            "-E": "runs a program file this check cannot read (gawk)",
            "--exec": "runs a program file this check cannot read (gawk)",
            "-i": "includes a program file this check cannot read (gawk)",
            "--include": "includes a program file this check cannot read (gawk)",
            "-l": "loads a compiled extension, which can do anything (gawk)",
            "--load": "loads a compiled extension, which can do anything (gawk)",
            "-d": "writes a file (gawk --dump-variables)",
            "--dump-variables": "writes a file (gawk)",
            "-p": "writes a file (gawk --profile)", "--profile": "writes a file (gawk)",
            "-o": "writes a file (gawk --pretty-print)", "--pretty-print": "writes a file (gawk)",
            "-D": "starts gawk's interactive debugger", "--debug": "starts gawk's debugger"},
}

AWK_FORBIDDEN = (
    # gawk, not mawk: '@name(...)' calls the function whose name is in a variable (so
    # f = "sys" "tem"; @f("id") is system("id") without the word), @include reads another
    # program file, @load loads a compiled extension (readfile, filefuncs, fork...). Refused
    # whichever awk this machine has: the same command must be safe on every machine.
    (re.compile(r"@"), "'@' starts gawk's indirect function calls (@name(...)) and its "
                       "@include and @load directives, which run functions, read files or load "
                       "code this check cannot see (to match a literal @, write \"\\100\")"),
    (re.compile(r"\bsystem\s*\("), "system() runs a shell command"),
    (re.compile(r"\bgetline\b"), "getline reads other files or the output of commands"),
    (re.compile(r"(?<!\|)\|(?!\|)"), "'|' pipes to or from a shell command"),
    # A print statement can go on over lines (after a comma), so a line break does not end
    # the search for its '>'; only ';', '{' and '}' do.
    (re.compile(r"\bprintf?\b[^;{}]*>"), "print or printf with '>' writes to a file"),
    # awk reads the files listed in ARGV when the program starts, so a program that edits
    # ARGV or ARGC reads files the arguments never named (and this check never saw).
    (re.compile(r"\bARG[VC]\b"), "ARGV and ARGC decide which files awk reads"),
)


def check_awk_program(program: str) -> None:
    """Refuse awk program text that could run commands or touch files other than its input.

    Pattern-based and deliberately strict: `print (a > b)` is refused too (compute the
    comparison into a variable first). ENVIRON is not checked here; layer 3 removes the
    secrets from the environment instead of hiding the variable's name.
    """
    text = re.sub(r"\\\r?\n", " ", program)  # a backslash before a line break joins the lines
    for pattern, why in AWK_FORBIDDEN:
        if pattern.search(text):
            raise Refusal(f"this awk program is not allowed: {why}. Use awk only to read "
                          "its input files and print to the output.")


_HEAD_TAIL = CommandRule(
    flags=_words("-q -v -z --quiet --silent --verbose --zero-terminated"),
    options={"-n": "text", "-c": "text", "--lines": "text", "--bytes": "text"})
# GNU tail reads its first argument as an old-style option when it looks like one: `tail +1f
# file` means "from line 1, then follow the file for ever", `tail -3f file` the same from the
# third line from the end. Refused below with a reason; and tail always starts with -n 10 (its
# default, overridden by any -n or -c given later), so its first argument is never read that way.
_TAIL = CommandRule(flags=_HEAD_TAIL.flags, options=_HEAD_TAIL.options, forced=("-n", "10"))
_OLD_STYLE_TAIL = re.compile(r"[+-][0-9]*[bcl]?f?")

RULES = {
    "ls": CommandRule(
        flags=_words("-a -A -l -h -R -1 -r -t -S -d -F -p -s -i -n -x -C -m -Q -U -v -X "
                     "--all --almost-all --human-readable --recursive --reverse --directory "
                     "--classify --size --inode"),
        options={"--sort": "text", "-w": "text", "--width": "text", "-I": "text",
                 "--ignore": "text"}),
    "cat": CommandRule(flags=_words("-n -b -A -E -T -s -v -e -t --number --number-nonblank "
                                    "--show-all --show-ends --show-tabs --squeeze-blank "
                                    "--show-nonprinting")),
    "head": _HEAD_TAIL,
    "tail": _TAIL,
    "wc": CommandRule(flags=_words("-l -w -c -m -L --lines --words --bytes --chars "
                                   "--max-line-length")),
    "sort": CommandRule(
        flags=_words("-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z "
                     "--ignore-leading-blanks --dictionary-order --ignore-case "
                     "--general-numeric-sort --human-numeric-sort --ignore-nonprinting "
                     "--month-sort --numeric-sort --random-sort --reverse --version-sort "
                     "--check --merge --stable --unique --zero-terminated"),
        options={"-k": "text", "--key": "text", "-t": "text", "--field-separator": "text"}),
    # uniq's second operand is an OUTPUT file: one path only.
    "uniq": CommandRule(
        flags=_words("-c -d -D -u -i -z --count --repeated --unique --ignore-case "
                     "--zero-terminated"),
        options={"-f": "text", "-s": "text", "-w": "text", "--skip-fields": "text",
                 "--skip-chars": "text", "--check-chars": "text"},
        max_paths=1),
    "cut": CommandRule(
        flags=_words("-s -n -z --complement --only-delimited --zero-terminated"),
        options={"-b": "text", "-c": "text", "-f": "text", "-d": "text", "--bytes": "text",
                 "--characters": "text", "--fields": "text", "--delimiter": "text",
                 "--output-delimiter": "text"}),
    "grep": CommandRule(
        flags=_words("-r --recursive -i -y --ignore-case --no-ignore-case -n --line-number "
                     "-c --count -l --files-with-matches -L --files-without-match "
                     "-v --invert-match -w --word-regexp -x --line-regexp -E -F -G -P "
                     "--extended-regexp --fixed-strings --basic-regexp --perl-regexp "
                     "-o --only-matching -h --no-filename -H --with-filename -s --no-messages "
                     "-q --quiet --silent -I -a --text -b --byte-offset -T --initial-tab "
                     "-Z --null -z --null-data"),
        options={"-e": "text", "--regexp": "text", "-f": "path", "--file": "path",
                 "-m": "text", "--max-count": "text", "-A": "text", "-B": "text", "-C": "text",
                 "--after-context": "text", "--before-context": "text", "--context": "text",
                 "--include": "text", "--exclude": "text", "--exclude-dir": "text"},
        first="pattern", first_from=_words("-e --regexp -f --file")),
    "sed": CommandRule(
        flags=_words("-n --quiet --silent -E -r --regexp-extended -s --separate "
                     "-z --null-data -u --unbuffered --posix"),
        options={"-e": "text", "--expression": "text", "-f": "path", "--file": "path",
                 "-l": "text", "--line-length": "text"},
        first="script", first_from=_words("-e --expression -f --file"),
        forced=("--sandbox",)),  # GNU sed's own switch: refuses the e, r and w commands
    "awk": CommandRule(
        options={"-F": "text", "-v": "text"},
        first="program", check_first=check_awk_program),
    "echo": CommandRule(text_only=True),
    "pwd": CommandRule(flags=_words("-L -P"), max_paths=0),
}

# find has an expression language instead of options: its own allow-list.
FIND_NO_VALUE = _words("-print -print0 -prune -empty -true -false -depth -mount -xdev -not "
                       "-a -and -o -or ! ( ) , -readable -writable -executable -ls -quit "
                       "-nouser -nogroup")
FIND_TEXT_VALUE = _words("-name -iname -path -ipath -wholename -iwholename -regex -iregex "
                         "-regextype -type -xtype -size -mtime -mmin -atime -amin -ctime "
                         "-cmin -perm -user -group -uid -gid -links -inum -maxdepth "
                         "-mindepth -printf")
FIND_PATH_VALUE = _words("-newer -anewer -cnewer -samefile")


def refuse_option(program: str, option: str) -> Refusal:
    if program == "tail" and option[1:].isdigit():
        return Refusal(f"tail {option} is the old spelling of tail -n {option[1:]} (with an f, "
                       f"as in {option}f, it follows the file and never ends). Use tail -n N.")
    dangerous = DANGEROUS_OPTIONS.get(program, {})
    why = dangerous.get(option)
    if why is None and option.startswith("--") and len(option) > 3:
        # GNU programs accept any unambiguous start of a long option: --fo is --follow
        whole = [name for name in dangerous if name.startswith(option)]
        if whole:
            option, why = f"{option} (short for {whole[0]})", dangerous[whole[0]]
    if why:
        return Refusal(f"{program} {option} {why}, and this tool only reads files inside the "
                       "workspace. Use a read-only form of the command.")
    return Refusal(f"the option {quote(option)} is not on the allow-list for {program}. Use "
                   f"the common read-only options (see the rules for {program}).")



def check_find(argv: list[str], workspace, cwd=None, *, resolve) -> list[str]:
    """find: starting points are paths; the expression may only use read-only primaries.
    Every path goes through `resolve(path, workspace, cwd)` (your resolve_inside), which
    raises Refusal for a path outside the workspace."""
    i = 1
    while i < len(argv) and argv[i] in ("-P", "-H", "-L"):
        if argv[i] != "-P":
            raise refuse_option("find", argv[i])
        i += 1
    while i < len(argv) and not argv[i].startswith("-") and argv[i] not in ("!", "(", ")", ","):
        resolve(argv[i], workspace, cwd)
        i += 1
    while i < len(argv):
        token = argv[i]
        if token in FIND_NO_VALUE:
            i += 1
            continue
        if token not in FIND_TEXT_VALUE and token not in FIND_PATH_VALUE:
            raise refuse_option("find", token)
        if i + 1 >= len(argv):
            raise Refusal(f"find {token} needs a value after it.")
        if token in FIND_PATH_VALUE:
            resolve(argv[i + 1], workspace, cwd)
        i += 2
    return list(argv)


def check_tail_operand(operand: str) -> None:
    """Refuse a tail operand that GNU tail could read as an old-style option (+1f, +5)."""
    if not operand.startswith("+"):
        return
    if _OLD_STYLE_TAIL.fullmatch(operand) and operand.endswith("f"):
        raise Refusal(f"tail {quote(operand)} is the old spelling of tail -f: it follows the "
                      "file and never ends. Use tail -n N (or -n +N to start at line N).")
    raise Refusal(f"tail can read {quote(operand)} as an old-style option rather than a file "
                  "name. Use tail -n +N to start at line N; name a file that starts with + "
                  f"as ./{operand[:40]}.")

