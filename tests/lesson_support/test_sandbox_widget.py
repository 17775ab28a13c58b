"""The red-team console's logic (lesson_support/widgets/sandbox.py), and that the widget builds."""
import pytest

from lesson_support.widgets import sandbox as console
from solutions.sandbox import LAYERS, bubblewrap_problem
from lesson_support.sandbox_attacks import ATTACKS, ATTACKS_BY_NAME

LAYERS_HERE = LAYERS if bubblewrap_problem() is None else LAYERS[:3]


def test_a_chained_read_breaches_the_naive_tool_only():
    report = console.console_run("cat README.md; cat @SECRET@", LAYERS_HERE, timeout=2.0)
    assert report.naive.breaches == ("secret",)
    assert report.hardened.blocked and report.hardened.reply.startswith("Refused: ")
    assert console.verdict(report.naive) == \
        "BREACHED: the secret file outside the workspace was read"
    assert console.verdict(report.hardened) == "blocked: no canary tripped"


def test_an_attack_preset_runs_with_its_scene_setup():
    command, setup, description = console.attack_preset("symlink_existing")
    assert setup == "secret_link" and "link" in description
    report = console.console_run(command, ("parse",), setup=setup, timeout=2.0)
    assert report.naive.breaches == ("secret",)
    assert report.hardened.breaches == ("secret",)  # parsing alone does not stop a link


def test_a_legitimate_command_works_in_both():
    report = console.console_run("grep -c ERROR logs/app.log", LAYERS_HERE, timeout=2.0)
    assert report.naive.reply == report.hardened.reply == "22\n"
    assert report.naive.blocked and report.hardened.blocked


def test_no_layer_means_the_naive_behaviour():
    report = console.console_run("echo $OPENAI_API_KEY", (), timeout=2.0)
    assert report.naive.breaches == report.hardened.breaches == ("api_key",)


@pytest.mark.parametrize("selected, layers, note", [
    (["confine", "parse"], ("parse", "confine"), ""),
    (["arguments"], ("parse", "arguments"), "'parse' was switched on"),
    ([], (), ""),
])
def test_layer_choices_are_normalized(selected, layers, note):
    got, said = console.normalize_layers(selected)
    assert got == layers and (note in said if note else said == "")


def test_unknown_layers_are_refused():
    with pytest.raises(ValueError, match="unknown layer"):
        console.normalize_layers(["firewall"])


def test_attack_options_list_every_attack_once():
    options = console.attack_options()
    assert options[0][1] == console.OWN_COMMAND
    assert [value for _, value in options[1:]] == [a.name for a in ATTACKS]
    for label, value in options[1:]:
        needs = ATTACKS_BY_NAME[value].needs
        assert (f"needs {needs}" in label) == (needs is not None)


@pytest.mark.parametrize("name, note", [("glob_brace", "needs bash as /bin/sh"),
                                        ("awk_include", "needs gawk as awk"),
                                        ("hardlink_existing", "scene prepared with: secret hardlink")])
def test_presets_say_what_an_attack_needs(name, note):
    command, setup, description = console.attack_preset(name)
    assert command == ATTACKS_BY_NAME[name].command and note in description


def test_report_html_escapes_and_shortens():
    report = console.console_run("echo '<b>' && head -c 9000 README.md", (), timeout=2.0)
    page = console.report_html(report)
    assert "&lt;b&gt;" in page and "<b>naive TerminalTool</b>" in page
    long = console.ConsoleReport("x", (), report.naive.__class__("x", "y" * 5000, ()),
                                 report.naive)
    assert "2,000 more characters" in console.report_html(long)


def test_the_widget_builds_and_runs():
    widget = console.red_team_console(layers=LAYERS_HERE, timeout=2.0)
    picker, note, command, controls, hint, result = widget.children
    picker.value = "path_dotdot"
    assert command.value == ATTACKS_BY_NAME["path_dotdot"].command and note.value
    run = controls.children[-1]
    run.click()
    assert "BREACHED" in result.value and "blocked: no canary tripped" in result.value
    command.value = "ls"
    assert picker.value == console.OWN_COMMAND
