"""The KV cache measured on a real model beside the teaching model's simulation (Chapter 16).

Pick a prompt length and a request of the cache experiment (cold, the same again, a new
question, a line changed at the end, a line changed at the top) and see what was measured on
SmolLM2 (data/real_model/cache.json: time to first token as a median with its range, tokens
evaluated and taken from the cache) next to what the teaching model's `teaching_timing`
simulates for the same request, and whether the two agree.

The logic is plain functions (`scenario_view`, `scenario_line`, `bars_html`), tested in
tests/lesson_support/test_real_model_widget.py; `cache_explorer()` only wires controls to them.
"""
from __future__ import annotations

import html

from course.i18n import N_, _
from lesson_support.real_model.prefix_cache import SCENARIOS

SCENARIO_LABELS = {"cold": N_("cold"), "again": N_("again"), "new_question": N_("new question"),
                   "end_change": N_("end changed"), "top_change": N_("top changed")}
# prefix_cache.comparison's reasons, stored in cache.json in English, shown in the reader's language
REASONS = (N_("both reuse the prefix"), N_("both recompute the prompt"),
           N_("llama.cpp reuses any shared prefix; the simulated provider caches nothing under 1,024 tokens"),
           N_("the simulated provider reuses only whole 128-token blocks"),
           N_("the real model recomputed more than the simulation expects"))
REAL, SIMULATED = "#1976d2", "#ffa000"


def scenario_view(results: dict, length: int, scenario: str) -> dict:
    """The measured summary row and the comparison row of one (length, scenario) of cache.json's
    results; ValueError naming what exists when there is no such row."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}: choose one of {', '.join(SCENARIOS)}")
    measured = [r for r in results["summary"] if r["length"] == length and r["scenario"] == scenario]
    if not measured:
        lengths = sorted({r["length"] for r in results["summary"]})
        raise ValueError(f"no measurement at length {length}: measured lengths are {lengths}")
    compared = [r for r in results["comparison"] if r["length"] == length and r["scenario"] == scenario]
    row, versus = measured[0], (compared[0] if compared else None)
    return {"length": length, "scenario": scenario, "n": row["n"], "prompt_tokens": row["prompt_tokens"],
            "ttft_median_s": row["ttft_median_s"], "ttft_min_s": row["ttft_min_s"],
            "ttft_max_s": row["ttft_max_s"], "evaluated": row["evaluated_median"],
            "cached": row["cached_median"], "of_cold": row["of_cold"],
            "sim_of_cold": versus["sim_of_cold"] if versus else None,
            "sim_cached": versus["sim_cached"] if versus else None,
            "sim_ttft_s": versus["sim_ttft_s"] if versus else None,
            "verdict": versus["verdict"] if versus else None, "why": versus["why"] if versus else None}


def scenario_line(view: dict) -> str:
    """One sentence: what the real model did and what the simulation says."""
    label = _(SCENARIO_LABELS[view["scenario"]])
    real = _("{scenario} at {length} tokens: SmolLM2 evaluated {evaluated} of {prompt} prompt tokens "
             "({cached} from its cache); time to first token {median} s, median of {n} "
             "[{low}–{high}], {share} of cold.").format(
        scenario=label, length=f"{view['length']:,}", evaluated=_count(view["evaluated"]),
        prompt=_count(view["prompt_tokens"]), cached=_count(view["cached"]),
        median=f"{view['ttft_median_s']:.2f}", n=view["n"], low=f"{view['ttft_min_s']:.2f}",
        high=f"{view['ttft_max_s']:.2f}", share=_share(view["of_cold"]))
    if view["sim_of_cold"] is None:
        return real
    simulated = _("The teaching model simulates {share} of cold with {cached} cached tokens: "
                  "{verdict} ({why}).").format(
        share=_share(view["sim_of_cold"]), cached=_count(view["sim_cached"]),
        verdict=_("they agree") if view["verdict"] == "agree" else _("they disagree"), why=_(view["why"]))
    return f"{real} {simulated}"


def _count(value) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _share(value) -> str:
    return "—" if value is None else f"{value:.0%}"


def bars_html(view: dict, width: int = 320) -> str:
    """Two bars, measured and simulated time to first token as a fraction of cold (a bar longer
    than cold is drawn to the edge, its figure says how much)."""
    def bar(name: str, share, colour: str) -> str:
        filled = 0 if share is None else min(share, 1.0) * width
        return (f"<div style='display:flex;align-items:center;font-size:12px;margin:2px 0'>"
                f"<span style='width:16em'>{html.escape(name)}</span>"
                f"<span style='display:inline-block;width:{width}px;background:#eee'>"
                f"<span style='display:block;background:{colour};height:12px;width:{filled:.0f}px'>"
                f"</span></span><span style='margin-left:6px'>{_share(share)}</span></div>")

    title = _("time to first token, as a share of a cold request")
    measured = bar(_("SmolLM2, measured"), view["of_cold"], REAL)
    simulated = bar(_("teaching model, simulated"), view["sim_of_cold"], SIMULATED)
    return f"<div><b style='font-size:12px'>{html.escape(title)}</b>{measured}{simulated}</div>"


def cache_explorer(results: dict):
    """A length dropdown and the five requests as toggle buttons; the read-out below."""
    import ipywidgets as w

    lengths = sorted({r["length"] for r in results["summary"]})
    length = w.Dropdown(options=[(f"{n:,}", n) for n in lengths], value=lengths[0],
                        description=_("prompt"), layout=w.Layout(width="14em"))
    scenario = w.ToggleButtons(options=[(_(SCENARIO_LABELS[s]), s) for s in SCENARIOS],
                               value="top_change", style={"button_width": "8.5em"})
    out = w.HTML()

    def show(*changes):
        view = scenario_view(results, length.value, scenario.value)
        out.value = f"<p style='max-width:60em'>{html.escape(scenario_line(view))}</p>{bars_html(view)}"

    length.observe(show, "value")
    scenario.observe(show, "value")
    show()
    return w.VBox([length, scenario, out])
