"""The attack table and the legitimate-command table, judged by canaries.

- the canaries themselves: each one trips on the thing it watches, and only on it;
- the naive tool is breached by the attacks the table says, in the way it says;
- with layers switched on (cumulatively, and alone), exactly the declared attacks are blocked;
- with every layer on, every attack is blocked and every legitimate command still works.
"""
import os
import subprocess
import socket

import pytest

from solutions.sandbox import LAYERS, bubblewrap_problem
from lesson_support import redteam as rt

PROBLEM = bubblewrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None and not os.environ.get("CI"),
                                 reason=f"bubblewrap cannot run here: {PROBLEM}")
TIMEOUT = 0.5  # the attacks that hit the timeout cost this much each; legit commands take ms
CONFIGS = {**{title: layers for title, layers in rt.CUMULATIVE.items()},
           "hygiene alone": ("hygiene",), "confine alone": ("confine",)}
SHELL = rt.system_shell()


def confined(layers):
    return "confine" in layers


@pytest.fixture(scope="module")
def tables():
    """Every attack against every configuration, computed once."""
    return {title: rt.run_attacks(rt.tool_for(layers, timeout=TIMEOUT))
            for title, layers in CONFIGS.items()
            if not (confined(layers) and PROBLEM and not os.environ.get("CI"))}


# -- the canaries -----------------------------------------------------------------------------

class EvilTool:
    """A tool that does one forbidden thing directly, to prove each canary can see it."""

    def __init__(self, action, scene):
        self.action, self.scene = action, scene

    def run(self, command):
        scene = self.scene
        if self.action == "secret":
            return scene.secret_file.read_text()
        if self.action == "secret_copied_in":
            (scene.workspace / "copy.txt").write_text(scene.secret_file.read_text())
            return "done"
        if self.action == "api_key":
            return scene.env["OPENAI_API_KEY"]
        if self.action == "protected":
            scene.protected_file.write_text("changed")
            return "done"
        if self.action == "protected_deleted":
            scene.protected_file.unlink()
            return "done"
        if self.action == "outbox":
            (scene.outbox / "x").write_text("x")
            return "done"
        if self.action == "survivor":
            subprocess.Popen(["sleep", "30"], start_new_session=True)
            return "done"
        if self.action == "memory":
            held = bytearray(8 * 1024 * 1024)
            return f"held {len(held)} bytes"
        if self.action == "network":
            socket.create_connection(("127.0.0.1", scene.port)).close()
            return "done"
        if self.action == "crash":
            raise RuntimeError("boom")
        return "nothing happened"


@pytest.mark.parametrize("action, canary", [
    ("secret", "secret"), ("secret_copied_in", "secret"), ("api_key", "api_key"),
    ("protected", "protected"), ("protected_deleted", "protected"), ("outbox", "outbox"),
    ("survivor", "survivor"), ("memory", "memory"), ("network", "network"),
])
def test_each_canary_trips_on_what_it_watches_and_nothing_else(action, canary):
    with rt.open_scene() as scene:
        outcome = rt.judge(scene, EvilTool(action, scene), "anything")
    assert outcome.breaches == (canary,)


def test_a_harmless_tool_trips_nothing_and_a_crash_is_reported():
    with rt.open_scene() as scene:
        assert rt.judge(scene, EvilTool("none", scene), "ls").breaches == ()
        crashed = rt.judge(scene, EvilTool("crash", scene), "ls")
    assert crashed.blocked and "RuntimeError: boom" in crashed.reply


def test_a_secret_link_set_up_in_the_workspace_is_not_itself_a_leak():
    with rt.open_scene(setup="secret_link") as scene:
        assert (scene.workspace / "latest-notes.txt").resolve() == scene.secret_file
        assert rt.judge(scene, EvilTool("none", scene), "ls").breaches == ()


def test_scene_layout_placeholders_and_cleanup():
    with rt.open_scene() as scene:
        root = scene.root
        assert scene.secret_file.parent == scene.home and scene.home.parent == root
        assert not scene.secret_file.is_relative_to(scene.workspace)
        assert scene.protected_file.read_text() == rt.PROTECTED_TEXT
        assert (scene.workspace / "README.md").is_file() and list(scene.outbox.iterdir()) == []
        assert scene.expand("cat @SECRET@") == f"cat {scene.secret_file}"
        assert scene.mask(f"{scene.secret_file} {scene.workspace}/x {root}") == \
            "@SECRET@ @WORKSPACE@/x @ROOT@"
    assert not root.exists()


# -- the attack table ---------------------------------------------------------------------------

def test_the_table_covers_every_category_of_the_reference():
    categories = {attack.category for attack in rt.ATTACKS}
    assert categories == {"chaining", "substitution", "redirection", "paths", "symlinks",
                          "programs", "environment", "globbing", "survivors", "memory",
                          "network"}
    assert {a.name for a in rt.ATTACKS if a.needs_bash} == \
        {"subst_process", "redirect_herestring", "glob_brace", "network_dev_tcp"}
    assert len(rt.ATTACKS_BY_NAME) == len(rt.ATTACKS)
    for attack in rt.ATTACKS:
        assert attack.breaches <= set(rt.CANARIES) and attack.stopped_by <= set(LAYERS)


@pytest.mark.parametrize("attack", rt.ATTACKS, ids=lambda attack: attack.name)
def test_naive_tool_is_breached_as_declared(tables, attack):
    outcome = tables["naive"][attack.name]
    if attack.needs_bash and SHELL != "bash":
        assert outcome.blocked, "bash-only syntax should fail under dash"
    else:
        assert set(outcome.breaches) == attack.breaches, outcome.reply


def test_most_attacks_breach_the_naive_tool(tables):
    breached = [name for name, outcome in tables["naive"].items() if not outcome.blocked]
    assert len(breached) > 0.8 * len(rt.ATTACKS)


@pytest.mark.parametrize("attack", [a for a in rt.ATTACKS if a.needs_bash],
                         ids=lambda attack: attack.name)
def test_bash_only_attacks_work_where_sh_is_bash(attack):
    outcome = rt.run_attack(rt.naive_tool(timeout=TIMEOUT, shell="/bin/bash"), attack)
    assert set(outcome.breaches) == attack.breaches, outcome.reply


@pytest.mark.parametrize("title", list(CONFIGS))
def test_each_configuration_blocks_exactly_what_its_layers_should(tables, title):
    layers = CONFIGS[title]
    if title not in tables:
        pytest.skip(f"bubblewrap cannot run here: {PROBLEM}")
    wrong = {name: outcome.breaches for name, outcome in tables[title].items()
             if outcome.blocked != rt.expected_blocked(rt.ATTACKS_BY_NAME[name], layers)}
    assert wrong == {}


@needs_bwrap
def test_all_layers_block_every_attack_and_refuse_in_one_line(tables):
    outcomes = tables["+confine"]
    assert [name for name, outcome in outcomes.items() if not outcome.blocked] == []
    for outcome in outcomes.values():
        if outcome.reply.startswith("Refused:"):
            assert "\n" not in outcome.reply


def test_layers_add_up(tables):
    """Blocked counts never go down as layers are added, and each layer adds something."""
    counts = [sum(o.blocked for o in tables[t].values()) for t in rt.CUMULATIVE if t in tables]
    assert counts == sorted(counts)
    assert len(set(counts[:4])) == 4  # parse, arguments and hygiene each block more


def test_format_table(tables):
    text = rt.format_table({"naive": tables["naive"], "+parse": tables["+parse"]})
    lines = text.splitlines()
    assert lines[0].split() == ["attack", "category", "naive", "+parse"]
    assert len(lines) == len(rt.ATTACKS) + 2
    naive_blocked = sum(o.blocked for o in tables["naive"].values())
    assert lines[-1].split()[1] == f"{naive_blocked}/{len(rt.ATTACKS)}"
    assert "chain_semicolon" in text and "secret" in text


# -- the legitimate commands --------------------------------------------------------------------

@pytest.mark.parametrize("title", list(CONFIGS))
def test_every_legitimate_command_still_works(title):
    layers = CONFIGS[title]
    if confined(layers) and PROBLEM and not os.environ.get("CI"):
        pytest.skip(f"bubblewrap cannot run here: {PROBLEM}")
    outcomes = rt.run_legits(rt.tool_for(layers))
    broken = {name: (o.reply[:120], o.expected[:120]) for name, o in outcomes.items()
              if not o.works}
    assert broken == {}


def test_a_broken_legitimate_command_is_reported():
    with rt.open_scene() as scene:
        with pytest.raises(ValueError, match="fails even in a plain shell"):
            rt.reference_output(scene, "cat no-such-file")
        outcome = rt.check_legit(scene, rt.hardened_tool(("parse",))(scene.workspace, scene.env),
                                 "head -n 1 README.md")
    assert outcome.works and outcome.reply == outcome.expected == "# inventory-service\n"
