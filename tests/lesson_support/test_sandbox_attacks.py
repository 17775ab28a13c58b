"""The attack table and the legitimate-command table, judged by canaries.

- the canaries themselves: each one trips on the thing it watches, and only on it;
- the tables are data (data/sandbox/*.json), loaded with every row checked;
- the naive tool is breached by the attacks the table says, in the way it says (the rows that
  need bash or gawk: where the machine has it, and under each explicitly);
- with layers switched on (cumulatively, and alone), exactly the declared attacks are blocked;
- with every layer on, every attack is blocked and every legitimate command still works;
- the printed table reads the same whatever the machine's shell and awk.
"""
import json
import os
import subprocess
import socket
import time

import pytest

from solutions.sandbox import LAYERS, bubblewrap_problem
from lesson_support import sandbox_attacks as rt

PROBLEM = bubblewrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None and not os.environ.get("CI"),
                                 reason=f"bubblewrap cannot run here: {PROBLEM}")
# The attacks that hit the timeout cost this much each; every other command takes milliseconds,
# well below it, so the "stalled" canary (the call lasted the whole timeout) cannot misfire.
TIMEOUT = rt.TOOL_TIMEOUT
CONFIGS = rt.CONFIGURATIONS
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

    timeout = 0.2

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
        if self.action == "stall":
            time.sleep(self.timeout)
            return "[stopped after the timeout]"
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
    ("survivor", "survivor"), ("stall", "stalled"), ("memory", "memory"), ("network", "network"),
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
    with rt.open_scene(setup="secret_hardlink") as scene:
        assert (scene.workspace / "notes-copy.txt").samefile(scene.secret_file)
        assert rt.judge(scene, EvilTool("none", scene), "ls").breaches == ()
        assert rt.judge(scene, EvilTool("secret_copied_in", scene), "x").breaches == ("secret",)


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

def test_the_table_covers_every_category_of_the_reference_and_the_doors_found_since():
    categories = {attack.category for attack in rt.ATTACKS}
    assert categories == {"chaining", "substitution", "redirection", "paths", "symlinks",
                          "hard links", "programs", "environment", "globbing", "survivors",
                          "stalls", "memory", "network"}
    assert {a.name for a in rt.ATTACKS if a.needs == "bash"} == \
        {"subst_process", "redirect_herestring", "glob_brace", "network_dev_tcp"}
    assert {a.name for a in rt.ATTACKS if a.needs == "gawk"} == \
        {"awk_indirect_call", "awk_include", "awk_load"}
    assert {"hardlink_existing", "tail_follow", "tail_follow_old"} <= set(rt.ATTACKS_BY_NAME)
    assert len(rt.ATTACKS_BY_NAME) == len(rt.ATTACKS)
    for attack in rt.ATTACKS:
        assert attack.breaches <= set(rt.CANARIES) and attack.stopped_by <= set(LAYERS)


def test_the_tables_are_data_files():
    rows = json.loads(rt.ATTACKS_FILE.read_text(encoding="utf-8"))["attacks"]
    assert [r["name"] for r in rows] == [a.name for a in rt.ATTACKS]
    commands = json.loads(rt.LEGIT_FILE.read_text(encoding="utf-8"))["commands"]
    assert [c["command"] for c in commands] == [c.command for c in rt.LEGIT_COMMANDS]


GOOD_ROW = {"name": "x", "category": "c", "command": "ls", "goal": "g", "breaches": ["secret"],
            "stopped_by": ["parse"]}


@pytest.mark.parametrize("rows, message", [
    ([dict(GOOD_ROW, breaches=["fire"])], "breaches \\['fire'\\] are not among"),
    ([dict(GOOD_ROW, stopped_by=["firewall"])], "stopped_by \\['firewall'\\]"),
    ([dict(GOOD_ROW, needs="zsh")], "needs must be one of"),
    ([dict(GOOD_ROW, setup="flood")], "setup must be one of"),
    ([{k: v for k, v in GOOD_ROW.items() if k != "goal"}], "missing \\['goal'\\]"),
    ([dict(GOOD_ROW, colour="red")], "unknown \\['colour'\\]"),
    ([dict(GOOD_ROW, command="")], "command must be non-empty text"),
    ([dict(GOOD_ROW, breaches="secret")], "breaches must be a list"),
    ([GOOD_ROW, GOOD_ROW], "names must be unique"),
    ("not a list", "must be a list of objects"),
])
def test_a_bad_table_row_is_refused_with_where_and_why(tmp_path, rows, message):
    path = tmp_path / "attacks.json"
    path.write_text(json.dumps({"attacks": rows}))
    with pytest.raises(ValueError, match=message):
        rt.load_attacks(path)
    path.write_text("{ not json")
    with pytest.raises(ValueError, match="cannot read the table"):
        rt.load_attacks(path)


@pytest.mark.parametrize("attack", rt.ATTACKS, ids=lambda attack: attack.name)
def test_naive_tool_is_breached_as_declared(tables, attack):
    outcome = tables["naive"][attack.name]
    if not rt.has(attack.needs):
        assert outcome.blocked, f"{attack.needs}-only syntax should fail here"
    else:
        assert set(outcome.breaches) == attack.breaches, outcome.reply


def test_most_attacks_breach_the_naive_tool(tables):
    breached = [name for name, outcome in tables["naive"].items() if not outcome.blocked]
    assert len(breached) > 0.8 * len(rt.ATTACKS)


@pytest.mark.parametrize("attack", [a for a in rt.ATTACKS if a.needs == "bash"],
                         ids=lambda attack: attack.name)
def test_bash_only_attacks_work_where_sh_is_bash(attack):
    outcome = rt.run_attack(rt.naive_tool(timeout=TIMEOUT, shell="/bin/bash"), attack)
    assert set(outcome.breaches) == attack.breaches, outcome.reply
    if os.path.exists("/bin/dash"):
        assert rt.run_attack(rt.naive_tool(timeout=TIMEOUT, shell="/bin/dash"), attack).blocked


GAWK_ROWS = [a for a in rt.ATTACKS if a.needs == "gawk"]


@pytest.mark.parametrize("awk", ["/usr/bin/gawk", "/usr/bin/mawk"])
@pytest.mark.parametrize("attack", GAWK_ROWS, ids=lambda attack: attack.name)
def test_gawk_only_attacks_breach_under_gawk_and_fail_under_mawk(attack, awk):
    if not os.path.exists(awk):
        pytest.skip(f"{awk} is not installed (CI installs gawk; Debian ships mawk)")
    outcome = rt.run_attack(rt.naive_tool(timeout=TIMEOUT, awk=awk), attack)
    if awk.endswith("gawk"):
        assert set(outcome.breaches) == attack.breaches, outcome.reply
    else:
        assert outcome.blocked and "unexpected character '@'" in outcome.reply


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
    assert len(lines) == len(rt.ATTACKS) + 3 and lines[-1].startswith("* where /bin/sh is bash")
    assert lines[-2].split()[1:] == [f"0/{len(rt.ATTACKS)}", f"21/{len(rt.ATTACKS)}"]
    assert "chain_semicolon" in text and "UNEXPECTED" not in text
    row = {line.split()[0]: line.split()[1:] for line in lines[1:-2]}
    assert row["awk_indirect_call"] == ["(gawk)", "programs", "secret*", "secret*"]
    assert row["glob_brace"] == ["(bash)", "globbing", "secret*", "blocked"]


def fake_outcomes(blocked_names=(), breached=None):
    """Outcomes as a tool would give: the declared breaches, except the rows named blocked."""
    return {a.name: rt.Outcome(a.command, "", () if a.name in blocked_names else
                               tuple(n for n in rt.CANARIES if n in (breached or a.breaches)))
            for a in rt.ATTACKS}


def test_the_printed_table_is_the_same_with_mawk_and_gawk(monkeypatch):
    gawk_rows = {a.name for a in GAWK_ROWS}
    monkeypatch.setattr(rt, "system_awk", lambda: "gawk")
    under_gawk = rt.format_table({"naive": fake_outcomes(rt.ATTACKS_BY_NAME.keys() - {
        a.name for a in rt.ATTACKS if a.needs != "bash" or SHELL == "bash"} - gawk_rows)})
    monkeypatch.setattr(rt, "system_awk", lambda: "mawk")
    bash_blocked = {a.name for a in rt.ATTACKS if a.needs == "bash" and SHELL != "bash"}
    under_mawk = rt.format_table({"naive": fake_outcomes(gawk_rows | bash_blocked)})
    assert under_gawk == under_mawk and "UNEXPECTED" not in under_mawk
    # ...but a cell that is wrong for this machine still shows: gawk syntax breaching under mawk
    wrong = rt.format_table({"naive": fake_outcomes(bash_blocked)})
    assert wrong.count("UNEXPECTED:secret") == len(gawk_rows)


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


# -- the workers that run a table's attacks side by side ------------------------------------------

def echo_attacks(count):
    return [rt.Attack(f"echo{i}", "test", "echo $PPID", "the pid of the tool's process",
                      frozenset(), frozenset()) for i in range(count)]


def test_a_table_is_judged_in_worker_processes_not_here():
    outcomes = rt.run_attacks(rt.naive_tool(), echo_attacks(3))
    pids = {int(o.reply.strip()) for o in outcomes.values()}
    assert os.getpid() not in pids and all(o.blocked for o in outcomes.values())


def test_a_factory_with_functions_passed_in_runs_here():
    """A lab passes the student's functions, defined in the kernel: no worker could import them."""
    outcomes = rt.run_attacks(lambda workspace, env: rt.naive_tool()(workspace, env),
                              echo_attacks(2))
    assert {int(o.reply.strip()) for o in outcomes.values()} == {os.getpid()}
    assert not rt.runs._sendable(rt.hardened_tool(("parse",), parse=lambda c: c.split()))


def test_an_error_in_a_worker_is_raised_here_and_a_dead_worker_is_replaced():
    with pytest.raises(ValueError, match="unknown layer"):
        rt.run_attacks(rt.hardened_tool(("no-such-layer",)), echo_attacks(2))
    with pytest.raises(rt.WorkerDied, match="ended unexpectedly"):
        rt.map_in_workers(os._exit, [(3,)])
    assert len(rt.run_attacks(rt.naive_tool(), echo_attacks(2))) == 2
