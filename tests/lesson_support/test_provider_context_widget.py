"""Chapter 14's widget logic and lesson support: rows at a request, the three strategies on a
short run (pairing, the server's edit equal to the client's, what the client can check), the
memory folder's path hygiene and saving before clearing."""
import dataclasses
from datetime import datetime, timezone

import pytest

import course.llm
from course.givens.production_compaction import load_run, visible
from lesson_support.provider_context import (STRATEGY_NAMES, client_view, clearing_sweep, items_of,
                                             model_view, replay_strategy, sweep_table)
from lesson_support.provider_memory import MemoryTool, editing_with_memory, note_id_of
from lesson_support.widgets.provider_context import row_at, rows_at, table_html
from solutions.compaction import check_pairing
from solutions.notes import InvalidNoteId
from solutions.production_compaction import Settings

SHORT = 60


@pytest.fixture(scope="module")
def run():
    return dataclasses.replace(load_run(), steps=load_run().steps[:SHORT])


@pytest.fixture(scope="module")
def results(run):
    small = Settings(window=8_000)
    out = {}
    for name in STRATEGY_NAMES:
        with course.llm.serve() as server:
            out[name] = replay_strategy(run, name, server.client(), course.llm.MODEL_NAME, stride=10,
                                        settings=small, trigger=6_000)
    return out


def test_every_strategy_measures_every_request(results):
    for m in results.values():
        assert len(m.sizes) == len(m.visible) == len(m.lost) == SHORT
        assert [j for j, _, _ in m.sent] == list(range(10, SHORT + 1, 10))


def test_the_server_compacts_and_the_client_cannot_read_it(run, results):
    m = results["server compaction"]
    assert m.compactions and all(after < before for _, before, after in m.compactions)
    assert m.client_visible < sum(visible(p, m.final) for p in run.probes if p["how"] == "visible")
    sealed = [i for i in m.window if i.get("type") == "compaction"]
    assert len(sealed) == 1
    assert len(model_view(run.system, m.window)) == len(client_view(run.system, m.window))
    # what was sent is what the client counted
    assert all(prompt == m.sizes[j - 1] for j, prompt, _ in m.sent)


def test_context_editing_on_the_server_is_the_clients(results):
    m = results["context editing"]
    assert m.mismatches == 0 and any(m.cleared)
    assert check_pairing(m.final)


def test_own_layers_keep_pairing_and_probes(run, results):
    m = results["own layers (chapter 11)"]
    assert check_pairing(m.final) and max(m.sizes) <= 8_000


def test_rows_at_a_request(results):
    m = results["context editing"]
    first = row_at(m, 1)
    assert first["sent_prompt"] is None and first["request"] == 1
    assert row_at(m, 10)["sent_prompt"] == m.sent[0][1]
    assert row_at(m, 10_000) == row_at(m, SHORT)  # clamped
    assert row_at(m, SHORT)["breaks"] == sum(x > 0 for x in m.lost)
    rows = rows_at(results, 25)
    assert [r["strategy"] for r in rows] == list(STRATEGY_NAMES)
    assert all(r["sent_prompt"] == dict((j, p) for j, p, _ in results[r["strategy"]].sent)[20] for r in rows)
    page = table_html(rows, 13)
    assert page.count("<tr>") == 4 and "/13" in page


def test_the_sweep_waits_for_clear_at_least(run):
    rows = clearing_sweep(run, (0, 10**9), trigger=6_000)
    assert rows[0]["first"] is not None and rows[0]["freed_first"] > 0
    assert rows[1]["first"] is None and rows[1]["breaks"] < rows[0]["breaks"] or rows[1]["lost"] == 0
    assert "clear_at_least" in sweep_table(rows)


def test_items_of_keeps_pairing_in_the_responses_shape(run):
    items = items_of(run.history(5)[1:])
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs)


# ------------------------------------------------------------------ memory
@pytest.fixture
def memory(tmp_path):
    return MemoryTool(tmp_path / "memories", clock=lambda: datetime(2026, 3, 14, tzinfo=timezone.utc))


@pytest.mark.parametrize("path", ["/memories/../etc/passwd", "/etc/passwd", "/memories/note-1.md",
                                  "/memories/sub/note-0001.md", "memories/note-0001.md", None, 3,
                                  "/memories/note-0001.md/../../x"])
def test_no_path_reaches_outside_the_folder(memory, path):
    with pytest.raises(InvalidNoteId):
        note_id_of(path)
    assert memory.run({"command": "view", "path": path}).startswith("Error")
    created = memory.run({"command": "create", "path": path, "file_text": "x"})
    # create takes any /memories/<name>.md as a title and answers with the note's own path
    assert created.startswith("Error") or created == "created /memories/note-0001.md"
    assert sorted(p.name for p in memory.notes.folder.parent.rglob("*.md")) in ([], ["note-0001.md"])


def test_memory_commands(memory):
    created = memory.run({"command": "create", "path": "/memories/decision.md", "file_text": "use protobuf 4"})
    path = created.split(" ", 1)[1]
    assert path == "/memories/note-0001.md"
    assert "decision" in memory.run({"command": "view", "path": "/memories"})
    assert memory.run({"command": "str_replace", "path": path, "old_str": "4", "new_str": "5"}) == f"edited {path}"
    assert memory.run({"command": "view", "path": path}) == "use protobuf 5"
    assert memory.run({"command": "str_replace", "path": path, "old_str": "zz", "new_str": ""}).startswith("Error")
    assert memory.run({"command": "delete", "path": path}) == f"deleted {path}"
    assert memory.run({"command": "view", "path": path}).startswith("Error")
    assert memory.run({"command": "rename"}).startswith("Error")


def test_saving_before_clearing_keeps_what_the_edit_took(run, memory):
    context, saved = editing_with_memory(run, memory, 6_000, 3)
    assert saved > 0
    lost = [p for p in run.probes if p["how"] == "visible" and visible(p, run.history())
            and not visible(p, context)]
    text = memory.everything()
    assert lost, "the short run's edits must take some probe's facts"
    assert all(all(e in text for e in p["expect"]) for p in lost)


def test_the_explorer_builds_and_follows_its_slider(run, results):
    import matplotlib
    matplotlib.use("Agg")
    from lesson_support.widgets.provider_context import provider_context_explorer
    box = provider_context_explorer(results, run, 8_000)
    slider = box.children[0]
    assert slider.max == SHORT and slider.value == SHORT
    slider.value = 12  # redraws for request 12 without an error
