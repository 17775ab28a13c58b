"""Layer 1: parse_command splits like a POSIX shell and refuses every piece of shell syntax."""
import shlex

import pytest
from hypothesis import given, settings, strategies as st

from solutions.sandbox import Refusal, parse_command
from solutions.sandbox.parse import MAX_COMMAND_CHARS
from lesson_support.sandbox_attacks import LEGIT_COMMANDS

FUZZ = settings(max_examples=150, derandomize=True, deadline=None)


@pytest.mark.parametrize("legit", LEGIT_COMMANDS, ids=lambda legit: legit.name)
def test_legitimate_commands_split_like_a_shell(legit):
    # shlex in POSIX mode splits quoted words the way sh does for these commands
    assert parse_command(legit.command) == shlex.split(legit.command)


@pytest.mark.parametrize("command, argv", [
    ("grep -E 'WARN|ERROR' app.log", ["grep", "-E", "WARN|ERROR", "app.log"]),
    ("awk '{ print $1 }' f", ["awk", "{ print $1 }", "f"]),
    ('echo "a b"  c', ["echo", "a b", "c"]),
    ('echo "say \\"hi\\" \\$5"', ["echo", 'say "hi" $5']),
    ('echo "back\\slash"', ["echo", "back\\slash"]),     # \s is not an escape inside "..."
    (r"find . -name x -exec cat {} \;", None),             # braces are refused, see below
    (r"grep \; file", ["grep", ";", "file"]),             # an escaped operator is plain text
    ("grep '' file", ["grep", "", "file"]),               # an empty quoted word is kept
    ("grep -c ''", ["grep", "-c", ""]),
    ("a'b'\"c\"d", ["abcd"]),                              # quotes join within one word
    ("echo it's", None),
    ("awk 'BEGIN {\n print 1\n}'", ["awk", "BEGIN {\n print 1\n}"]),  # newlines inside quotes
    ("  ls\t-a  ", ["ls", "-a"]),
    ("grep a#b f", ["grep", "a#b", "f"]),                  # # only comments at a word start
    ("ls dir~", ["ls", "dir~"]),                           # ~ only expands at a word start
    ("find . ! -name x", ["find", ".", "!", "-name", "x"]),
])
def test_splitting(command, argv):
    if argv is None:
        with pytest.raises(Refusal):
            parse_command(command)
    else:
        assert parse_command(command) == argv


@pytest.mark.parametrize("command, named", [
    ("ls; cat x", "';'"),
    ("ls && cat x", "'&'"),
    ("ls || cat x", "'|'"),
    ("ls & cat x", "'&'"),
    ("echo x | sh", "'|'"),
    ("ls\ncat x", "line break"),
    ("ls \\\ncat x", "line break"),
    ("echo $(cat x)", "'$'"),
    ("echo `cat x`", "backquote"),
    ('echo "$(cat x)"', "'$'"),
    ('echo "`id`"', "'`'"),
    ("echo $HOME", "'$'"),
    ("echo ${HOME}", "'$'"),
    ("echo x > out", "'>'"),
    ("echo x >> out", "'>'"),
    ("head < secret", "'<'"),
    ("cat <(ls)", "'<'"),
    ("cat <<< x", "'<'"),
    ("(ls)", "'('"),
    ("cat *", "'*'"),
    ("cat ?.txt", "'?'"),
    ("cat [ab].txt", "'['"),
    ("cat {a,b}", "'{'"),
    ("cat ~/x", "'~'"),
    ("ls # comment", "'#'"),
])
def test_shell_syntax_is_refused_with_a_reason(command, named):
    with pytest.raises(Refusal) as caught:
        parse_command(command)
    message = str(caught.value)
    assert message.startswith("Refused: ") and "\n" not in message
    assert named in message
    assert "without a shell" in message


@pytest.mark.parametrize("command, words", [
    ("echo 'unterminated", "single quote"),
    ('echo "unterminated', "double quote"),
    ("echo trailing\\", "backslash"),
    ("", "empty"),
    ("   \t ", "empty"),
    ("ls \x00", "NUL"),
    ("ls \x1b[31m", "control character"),
    ("ls \r", "control character"),
    ("ls \ud800", "surrogate"),
    ("x" * (MAX_COMMAND_CHARS + 1), "limit"),
])
def test_malformed_input_is_refused(command, words):
    with pytest.raises(Refusal) as caught:
        parse_command(command)
    assert words in str(caught.value)


@pytest.mark.parametrize("value", [None, 42, b"ls", ["ls"]])
def test_non_text_is_refused(value):
    with pytest.raises(Refusal, match="must be text"):
        parse_command(value)


def test_a_refusal_is_always_one_line():
    assert str(Refusal("two\nlines   and\tspaces")) == "Refused: two lines and spaces"


@FUZZ
@given(st.text(max_size=300))
def test_fuzz_any_text_gives_argv_or_one_line_refusal(text):
    try:
        argv = parse_command(text)
    except Refusal as refusal:
        assert "\n" not in str(refusal) and str(refusal).startswith("Refused: ")
        return
    assert argv and all(isinstance(word, str) for word in argv)
    assert all("\x00" not in word for word in argv)


# Words made only of characters no shell treats specially, joined with random quoting.
SAFE = st.text(alphabet="abcXYZ019-_.,:=/+%@^ ", min_size=1, max_size=12)


@FUZZ
@given(st.lists(SAFE, min_size=1, max_size=6),
       st.lists(st.sampled_from(["plain", "single", "double"]), min_size=6, max_size=6))
def test_fuzz_quoted_safe_words_split_like_shlex(words, styles):
    pieces = []
    for word, style in zip(words, styles):
        if style == "single":
            pieces.append(f"'{word}'")
        elif style == "double":
            pieces.append(f'"{word}"')
        else:
            pieces.append(word.replace(" ", "\\ "))
    command = " ".join(pieces)
    assert parse_command(command) == shlex.split(command)
