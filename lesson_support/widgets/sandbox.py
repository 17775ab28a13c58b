"""Red-team console (Chapter 07): type a command, or pick one from the attack table, and see
what the naive tool and the hardened tool each did with it, judged by the canaries.

Each tool gets its own fresh scene (a copy of the sample workspace, a secret outside it, a
fake API key in the environment, a protected file, an outbox that must stay empty, a listening
port), so what one tool did cannot affect the other. Commands may use the placeholders
@SECRET@, @HOME@, @OUTBOX@, @WORKSPACE@, @PORT@ and @PYTHON@.

The logic is in plain functions (tested in tests/lesson_support/test_sandbox_widget.py); `red_team_console()`
only wires controls to them.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

from course.i18n import N_, _

from solutions.sandbox.hardened import LAYERS
from lesson_support.sandbox_attacks import (ATTACKS, ATTACKS_BY_NAME, CANARIES, TOOL_TIMEOUT,
                                       Outcome, hardened_tool, naive_tool, run_command)

MAX_SHOWN_CHARS = 3000  # a reply can be 64 kB; the console shows its start
OWN_COMMAND = ""        # the dropdown value for "type your own"


@dataclass(frozen=True)
class ConsoleReport:
    command: str
    layers: tuple[str, ...]
    naive: Outcome
    hardened: Outcome


def normalize_layers(selected) -> tuple[tuple[str, ...], str]:
    """The layers to use, in order, and a note when a choice had to be completed.

    'arguments' checks an argv, so choosing it without 'parse' switches 'parse' on too.
    """
    chosen = [layer for layer in LAYERS if layer in set(selected)]
    unknown = sorted(set(selected) - set(LAYERS))
    if unknown:
        raise ValueError(f"unknown layer(s) {unknown}: choose from {list(LAYERS)}")
    if "arguments" in chosen and "parse" not in chosen:
        return tuple(layer for layer in LAYERS if layer in set(chosen) | {"parse"}), \
            _("'arguments' works on an argv, so 'parse' was switched on as well.")
    return tuple(chosen), ""


def console_run(command: str, layers=LAYERS, *, setup: str | None = None,
                timeout: float = TOOL_TIMEOUT) -> ConsoleReport:
    """Run `command` through the naive tool and the hardened tool (with `layers`)."""
    layers, _completed = normalize_layers(layers)
    naive = run_command(naive_tool(timeout=timeout), command, setup=setup)
    if layers:
        hardened = run_command(hardened_tool(layers, timeout=timeout), command, setup=setup)
    else:  # no layer at all: the hardened tool would be the naive one
        hardened = run_command(naive_tool(timeout=timeout), command, setup=setup)
    return ConsoleReport(command, layers, naive, hardened)


def verdict(outcome: Outcome) -> str:
    """One line: what the canaries saw."""
    if outcome.blocked:
        return _("blocked: no canary tripped")
    return _("BREACHED: ") + "; ".join(CANARIES[name] for name in outcome.breaches)


def attack_options() -> list[tuple[str, str]]:
    """(label, attack name) pairs for the dropdown, own command first."""
    options = [(_("type your own command"), OWN_COMMAND)]
    for attack in ATTACKS:
        needs = _(", needs {tool}").format(tool=attack.needs) if attack.needs else ""
        options.append((f"{attack.category}: {attack.name}{needs}", attack.name))
    return options


NEEDS_NOTE = {"bash": N_(" (needs bash as /bin/sh; Debian's /bin/sh is dash)"),
              "gawk": N_(" (needs gawk as awk; Debian's default awk is mawk)")}


def attack_preset(name: str) -> tuple[str, str | None, str]:
    """(command, setup, description) for an attack of the table."""
    attack = ATTACKS_BY_NAME[name]
    description = attack.goal + (_(NEEDS_NOTE[attack.needs]) if attack.needs in NEEDS_NOTE else "")
    if attack.setup:
        description += " " + _("[scene prepared with: {setup}]").format(setup=attack.setup.replace("_", " "))
    return attack.command, attack.setup, description


def _shown(reply: str) -> str:
    if len(reply) <= MAX_SHOWN_CHARS:
        return reply
    return reply[:MAX_SHOWN_CHARS] + "\n... " + _("({count} more characters)").format(
        count=f"{len(reply) - MAX_SHOWN_CHARS:,}")


def _pane(title: str, outcome: Outcome) -> str:
    colour = "#15803d" if outcome.blocked else "#b91c1c"
    return (f'<div style="flex:1;min-width:0;margin:4px">'
            f"<b>{html.escape(title)}</b>"
            f'<div style="color:{colour};font-weight:bold;margin:4px 0">'
            f"{html.escape(verdict(outcome))}</div>"
            f'<pre style="white-space:pre-wrap;background:#f3f4f6;padding:6px;'
            f'max-height:320px;overflow:auto">{html.escape(_shown(outcome.reply))}</pre></div>')


def report_html(report: ConsoleReport) -> str:
    layers = ", ".join(report.layers) if report.layers else _("none")
    naive = _pane(_("naive TerminalTool"), report.naive)
    hardened = _pane(_("hardened tool (layers: {layers})").format(layers=layers), report.hardened)
    return (f"<div><code>{html.escape(report.command)}</code></div>"
            f'<div style="display:flex;gap:8px">{naive}{hardened}</div>')


def red_team_console(layers=LAYERS, timeout: float = TOOL_TIMEOUT):
    """The ipywidgets console: attack picker, command box, layer toggles, Run, verdicts."""
    import ipywidgets as w

    picker = w.Dropdown(options=attack_options(), value=OWN_COMMAND, description=_("attack"),
                        layout=w.Layout(width="60%"))
    command = w.Text(value="cat README.md; cat @SECRET@", description=_("command"),
                     layout=w.Layout(width="95%"))
    toggles = {layer: w.ToggleButton(value=layer in layers, description=layer)
               for layer in LAYERS}
    run = w.Button(description=_("Run"), button_style="danger")
    note, result = w.HTML(), w.HTML()
    state = {"setup": None}

    def pick(change=None):
        if picker.value == OWN_COMMAND:
            state["setup"] = None
            note.value = ""
            return
        command.value, state["setup"], description = attack_preset(picker.value)
        note.value = f"<i>{html.escape(description)}</i>"

    def edited(change=None):
        # a typed command runs in a plain scene unless it is still the picked attack's
        if picker.value != OWN_COMMAND and command.value != ATTACKS_BY_NAME[picker.value].command:
            picker.value = OWN_COMMAND

    def go(change=None):
        chosen, completed = normalize_layers([k for k, t in toggles.items() if t.value])
        if completed:
            toggles["parse"].value = True
        result.value = "<i>" + _("running...") + "</i>"
        report = console_run(command.value, chosen, setup=state["setup"], timeout=timeout)
        extra = f"<div><i>{html.escape(completed)}</i></div>" if completed else ""
        result.value = extra + report_html(report)

    picker.observe(pick, names="value")
    command.observe(edited, names="value")
    run.on_click(go)
    hint = w.HTML("<small>" + _("Placeholders: @SECRET@ (a file outside the workspace), @HOME@, "
                                "@OUTBOX@ (must stay empty), @WORKSPACE@, @PORT@ (a listening "
                                "socket), @PYTHON@. Each tool runs in its own fresh scene.")
                  + "</small>")
    return w.VBox([picker, note, command, w.HBox([*toggles.values(), run]), hint, result])
