"""Notes browser (Chapter 06): filter notes by type and tag, search them, open one.

The logic is in plain functions (tested in tests/lesson_support/test_notes_widget.py) built on
`solutions.notes`; `notes_browser()` only wires controls to them.
"""
from __future__ import annotations

import html
import shutil
import tempfile
from pathlib import Path

from solutions.notes import NOTE_TYPES, Note, NoteError, NoteTool
from course.i18n import _
from course.paths import DATA_DIR

ALL = "(all)"
SAMPLE_FOLDER = DATA_DIR / "notes" / "libpng-aarch64"
TYPE_COLOURS = {"task_state": "#2563eb", "conclusion": "#059669", "blocker": "#dc2626",
                "action": "#d97706", "reference": "#6b7280", "general": "#111827"}


def browse(tool: NoteTool, note_type: str = ALL, tag: str = ALL, query: str = "",
           limit: int = 50) -> list[Note]:
    """The notes to list: a search when there is a query (best match first), otherwise the
    newest first; either way only the type and tag chosen ((all) means no filter)."""
    kind = None if note_type == ALL else note_type
    tags = None if tag == ALL else [tag]
    if query.strip():
        return tool.search(query, limit=limit, type=kind, tags=tags)
    return tool.list(type=kind, tags=tags, limit=limit)


def tag_options(tool: NoteTool) -> list[str]:
    """(all), then every tag in use, most used first."""
    return [ALL, *tool.summary()["tags"]]


def note_label(note: Note, width: int = 60) -> str:
    title = note.title.strip().splitlines()[0]
    if len(title) > width:
        title = title[: width - 1] + "…"
    return f"{note.id} · {note.type} · {title}"


def note_html(note: Note) -> str:
    """One note: its front matter as a small table, then its content as written."""
    colour = TYPE_COLOURS.get(note.type, "#111827")
    tags = ", ".join(html.escape(t) for t in note.tags) or "—"
    dates = _("tags: {tags} · created {created} · updated {updated}").format(
        tags=tags, created=note.created_at.isoformat(), updated=note.updated_at.isoformat())
    return (f"<div style='border-left:4px solid {colour};padding:4px 8px'>"
            f"<b>{html.escape(note.title)}</b><br>"
            f"<small>{note.id} · <span style='color:{colour}'>{note.type}</span> · {dates}</small>"
            f"<pre style='white-space:pre-wrap;font-size:12px'>{html.escape(note.content)}</pre></div>")


def summary_html(tool: NoteTool) -> str:
    s = tool.summary()
    counts = ", ".join(f"{n} {t}" for t, n in s["by_type"].items() if n)
    blockers = "; ".join(f"{b['id']} {html.escape(b['title'])}" for b in s["blockers"]) or _("none")
    damaged = "".join("<div style='color:#b00'>" + _("damaged, left as it is: {problem}").format(
        problem=html.escape(d["problem"])) + "</div>" for d in s["damaged"])
    line = _("{total} notes ({counts}). Open blockers: {blockers}.").format(
        total=s["total"], counts=counts or _("none"), blockers=blockers)
    return f"<div>{line}</div>{damaged}"


def sample_tool() -> NoteTool:
    """A NoteTool on a private copy of the sample notes (the committed folder is never written:
    opening a folder builds its index there)."""
    folder = Path(tempfile.mkdtemp(prefix="notes-sample-")) / SAMPLE_FOLDER.name
    shutil.copytree(SAMPLE_FOLDER, folder)
    return NoteTool(folder)


def notes_browser(tool: NoteTool | str | Path | None = None):
    """Type and tag filters and a search box -> a list of notes -> the note picked.
    Without a tool or folder, it browses a copy of the sample notes."""
    import ipywidgets as widgets

    if tool is None:
        tool = sample_tool()
    tool = tool if isinstance(tool, NoteTool) else NoteTool(tool)
    label = {"style": {"description_width": "5em"}}
    kind = widgets.Dropdown(options=[ALL, *NOTE_TYPES], description=_("type"), **label)
    tag = widgets.Dropdown(options=tag_options(tool), description=_("tag"), **label)
    query = widgets.Text(placeholder=_("search, e.g. 找不到 zlib"), description=_("search"),
                         continuous_update=False, **label)
    listing = widgets.Select(options=[], rows=10, layout=widgets.Layout(width="44em"))
    viewer, summary = widgets.HTML(), widgets.HTML(summary_html(tool))

    def refresh(change=None):
        try:
            notes = browse(tool, kind.value, tag.value, query.value)
        except NoteError as exc:
            listing.options = []
            viewer.value = f"<div style='color:#b00'>{html.escape(str(exc))}</div>"
            return
        listing.options = [(note_label(n), n.id) for n in notes]
        listing.value = notes[0].id if notes else None
        if not notes:
            viewer.value = "<i>" + _("No note matches.") + "</i>"

    def show(change=None):
        if listing.value:
            try:
                viewer.value = note_html(tool.read(listing.value))
            except NoteError as exc:
                viewer.value = f"<div style='color:#b00'>{html.escape(str(exc))}</div>"

    for control in (kind, tag, query):
        control.observe(refresh, names="value")
    listing.observe(show, names="value")
    refresh()
    show()
    return widgets.VBox([summary, widgets.HBox([kind, tag, query]), listing, viewer])
