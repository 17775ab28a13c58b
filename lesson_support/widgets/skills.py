"""Skill router (Chapter 09): type a request; see which skill's description it matches (and by
how many shared words), the layers that would load, their tokens, and what the placement you
pick does to the prompt cache.

The match uses the teaching model's documented rule (`course/llm/skills.py`: the best skill
sharing at least two content words with the request, counted by `course.llm.planning.terms`).
The cache effect is predicted offline from the token ids of the scripted placement session
(`lesson_support.skills.placement_requests`) with OpenAI's rules (1,024-token minimum, 128-token
steps); the lesson checks the prediction against the teaching model's own `cached_tokens`.
The logic is in plain functions (tested in tests/lesson_support/test_skills_widget.py);
`skill_router()` only wires controls to them.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

from course.i18n import _
from lesson_support.skills import (CATALOG_BUDGET, PLACEMENTS, SKILLS_DIR, core_tools,
                                   course_skills, placement_requests, predicted_cached,
                                   skill_files, skill_result_text)
from solutions.skills import Skill, build_catalog, read_skill_file
from solutions.tokens import count_tokens, request_token_ids

MIN_SHARED_WORDS = 2      # the teaching model's threshold (course/llm/skills.py)
LATER_REQUEST = "Why did the CI build fail? The failed job is job-4711."


def _terms(text: str) -> set[str]:
    from course.llm.planning import terms

    return terms(text)


@dataclass(frozen=True)
class Match:
    skill: str
    shared: int
    words: tuple[str, ...]


def match_scores(request: str, skills: list[Skill]) -> list[Match]:
    """Every skill with the content words it shares with the request, best first (ties in
    catalogue order, as the model breaks them)."""
    wanted = _terms(request)
    ordered = sorted(skills, key=lambda s: s.name)
    scored = [Match(s.name, len(wanted & (_terms(s.name) | _terms(s.description))),
                    tuple(sorted(wanted & (_terms(s.name) | _terms(s.description)))))
              for s in ordered]
    return sorted(scored, key=lambda m: -m.shared)


def chosen(matches: list[Match]) -> str | None:
    """The skill the model would load, or None below the threshold."""
    return matches[0].skill if matches and matches[0].shared >= MIN_SHARED_WORDS else None


def referenced_files(skill: Skill, folder=SKILLS_DIR) -> list[str]:
    """Layer 3 a run would read: the skill's files its steps name with read_skill_file."""
    files = skill_files(skill.name, folder)
    wanted = []
    for line in skill.body.splitlines():
        if re.match(r"\s*\d+[.)]\s", line) and "read_skill_file" in line:
            wanted += [f for f in files if re.search(rf"(?<![\w/.-]){re.escape(f)}(?![\w-])", line)]
    return wanted


def layers(request: str, skills: list[Skill], folder=SKILLS_DIR) -> list[tuple[str, str, int]]:
    """(layer, what, tokens) of the skill text a request brings into the context."""
    catalog = build_catalog(skills, CATALOG_BUDGET)
    rows = [(_("1 catalogue"), _("{count} skills, always there").format(count=len(catalog.included)),
             catalog.tokens)]
    name = chosen(match_scores(request, skills))
    if name is None:
        return rows
    skill = next(s for s in skills if s.name == name)
    rows.append((_("2 body"), _("{skill}, loaded by load_skill").format(skill=name),
                 count_tokens(skill_result_text(skill))))
    for f in referenced_files(skill, folder):
        rows.append((_("3 file"), _("{skill}/{file}, read when its step runs").format(skill=name, file=f),
                     count_tokens(read_skill_file(folder, name, f))))
    return rows


def placement_effect(placement: str, request: str, skills: list[Skill]) -> list[dict]:
    """The scripted placement session with the request's skill loaded and another installed
    mid-session: prompt tokens and predicted cached tokens of each request."""
    name = chosen(match_scores(request, skills))
    if name is None:
        return []
    loaded = next(s for s in skills if s.name == name)
    installed = next(s for s in sorted(skills, key=lambda s: s.name) if s.name != name)
    tools = core_tools()
    earlier, rows = [], []
    for label, messages in placement_requests(placement, skills, loaded, installed,
                                              (request, LATER_REQUEST)):
        ids = request_token_ids(messages, tools)
        rows.append({"request": label, "prompt_tokens": len(ids),
                     "cached_tokens": predicted_cached(earlier, ids)})
        earlier.append(ids)
    return rows


def _table(headers: list[str], rows: list[list], left: int, bold_row: int | None = None) -> str:
    """An HTML table: the first `left` columns left-aligned, the others right-aligned."""
    def cell(tag, i, value, bold=False):
        align = "left" if i < left else "right"
        weight = ";font-weight:bold" if bold else ""
        return f"<{tag} style='padding:2px 10px;text-align:{align}{weight}'>{value}</{tag}>"
    head = "<tr>" + "".join(cell("th", i, html.escape(h)) for i, h in enumerate(headers)) + "</tr>"
    body = "".join("<tr>" + "".join(cell("td", i, v, n == bold_row) for i, v in enumerate(row)) + "</tr>"
                   for n, row in enumerate(rows))
    return f"<table style='border-collapse:collapse;margin:2px 0 10px 0'>{head}{body}</table>"


def view_html(request: str, placement: str, skills: list[Skill]) -> str:
    matches = match_scores(request, skills)
    name = chosen(matches)
    verdict = (_("The model loads {skill}.").format(skill=f"<b>{html.escape(name)}</b>") if name else
               _("The model loads no skill (no description shares {count} words with the "
                 "request).").format(count=MIN_SHARED_WORDS))
    scores = _table([_("skill"), _("which words"), _("shared")],
                    [[html.escape(m.skill), html.escape(", ".join(m.words)) or "—", m.shared]
                     for m in matches], left=2, bold_row=0 if name else None)
    layer_table = _table([_("layer"), _("what"), _("tokens")],
                         [[html.escape(a), html.escape(b), f"{t:,}"] for a, b, t in layers(request, skills)],
                         left=2)
    effect = placement_effect(placement, request, skills)
    cache = (_table([_("request"), _("prompt tokens"), _("cached tokens")],
                    [[html.escape(r["request"]), f"{r['prompt_tokens']:,}", f"{r['cached_tokens']:,}"]
                     for r in effect], left=1) if effect else "<div><i>" + _("no skill to load") + "</i></div>")
    cache_title = _("Cache, {placement}").format(placement=html.escape(placement))
    return (f"<div>{verdict}</div>{scores}"
            "<div><b>" + _("Layers in the context") + f"</b></div>{layer_table}"
            f"<div><b>{cache_title}</b> ({html.escape(PLACEMENTS[placement])})</div>"
            f"{cache}")


def skill_router(request: str = "Make a slide deck from the paper inbox/paper.pdf."):
    """A request box and a placement picker -> scores, layers, tokens and cache effect."""
    import ipywidgets as widgets

    skills = course_skills()
    box = widgets.Text(value=request, description=_("request"), continuous_update=False,
                       layout=widgets.Layout(width="44em"))
    where = widgets.Dropdown(options=list(PLACEMENTS), value="catalogue at the end",
                             description=_("placement"))
    out = widgets.HTML()

    def refresh(change=None):
        out.value = view_html(box.value, where.value, skills)

    box.observe(refresh, names="value")
    where.observe(refresh, names="value")
    refresh()
    return widgets.VBox([box, where, out])
