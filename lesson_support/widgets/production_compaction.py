"""Production compaction explorer (Chapter 11): layer toggles, the saw-tooth with cache hits, the
probe panel and the breaker's state.

The measurements come from `lesson_support.production_compaction.replay_config` (one per
configuration, each on a private teaching model); the widget picks the one whose layers match
the toggles and shows it up to the chosen request. The logic is in plain functions (tested in
tests/lesson_support/test_production_compaction_widget.py); the widget only wires controls.
"""
from __future__ import annotations

import html

from course.i18n import N_, _
from lesson_support.production_compaction import CONFIGS

BREAKER_STATES = (N_("open"), N_("closed"))  # the breaker's states, translated where shown
HIT = 0.5  # a sent request counts as a cache hit when at least this share was cached


def config_for(layers) -> str | None:
    """The configuration name whose layers are exactly `layers` (order ignored), or None."""
    wanted = frozenset(layers)
    return next((name for name, ls in CONFIGS.items() if frozenset(ls) == wanted), None)


def sawtooth_points(measurement, upto: int | None = None):
    """(xs, ys, hits, misses): request numbers and sizes up to `upto`; the sent requests split
    into cache hits and misses as (x, y) pairs."""
    n = len(measurement.sizes) if upto is None else max(0, min(upto, len(measurement.sizes)))
    xs = list(range(1, n + 1))
    ys = measurement.sizes[:n]
    hits, misses = [], []
    for j, prompt, cached in measurement.sent:
        if j > n:
            continue
        (hits if prompt and cached / prompt >= HIT else misses).append((j, measurement.sizes[j - 1]))
    return xs, ys, hits, misses


def probe_rows(measurement, run) -> list[tuple[str, str, str]]:
    """(probe id, kind, verdict) with verdict 'answered', 'called again' or 'lost'."""
    rows = []
    for probe, result in zip(run.probes, measurement.probes):
        verdict = N_("answered") if result.answered else (N_("called again") if result.called_again
                                                           else N_("lost"))
        rows.append((probe["id"], probe["kind"], verdict))
    return rows


def breaker_state(measurement, upto: int | None = None) -> str:
    """The breaker and layer-5 events up to request `upto`, in one line."""
    events = [e for e in measurement.events if upto is None or e.request <= upto]
    full = [e for e in events if e.layer == "full"]
    failed = sum("failed" in e.detail for e in full)
    compactor = getattr(measurement, "compactor", None)
    state = compactor.breaker.state if compactor is not None and upto is None else \
        ("open" if compactor is not None and failed >= compactor.breaker.max_failures else "closed")
    return _("breaker {state}; layer 5 ran {ran} times, failed {failed} times; {drops} drops").format(
        state=_(state), ran=len(full) - failed, failed=failed,
        drops=sum(e.layer == "drop" for e in events))


def sawtooth_figure(results: dict, names, window: int, upto: int | None = None):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.6))
    for name in names:
        xs, ys, hits, misses = sawtooth_points(results[name], upto)
        line, = ax.plot(xs, ys, label=name, linewidth=1)
        if hits:
            ax.scatter(*zip(*hits), color=line.get_color(), s=14)
        if misses:
            ax.scatter(*zip(*misses), facecolors="none", edgecolors=line.get_color(), s=14)
    ax.axhline(window, color="grey", linestyle="--", linewidth=0.8, label=_("window"))
    ax.set_xlabel(_("request"))
    ax.set_ylabel(_("tokens"))
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def production_compaction_explorer(results: dict, run=None):
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from course.givens.production_compaction import load_run
    from solutions.production_compaction import LAYERS, Settings

    run = run or load_run()
    toggles = [w.ToggleButton(value=True, description=layer) for layer in LAYERS]
    step = w.IntSlider(value=len(run.steps), min=1, max=len(run.steps), description=_("request"))
    out = w.Output()

    def show(*changes):
        layers = [t.description for t in toggles if t.value]
        name = config_for(layers)
        with out:
            out.clear_output(wait=True)
            if name is None:
                none = _("none")
                print(_("not measured: choose"), " | ".join(f"{n}: {', '.join(ls) or none}"
                                                            for n, ls in CONFIGS.items()))
                return
            m = results[name]
            sawtooth_figure(results, [name], Settings().window, step.value)
            plt.show()
            rows = "".join(f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td><td>{shown}</td></tr>"
                           for a, b, c in probe_rows(m, run) for shown in [_(c)])
            from IPython.display import HTML, display
            display(HTML(f"<b>{html.escape(name)}</b>: {html.escape(breaker_state(m, step.value))}"
                         f"<table>{rows}</table>"))

    for t in toggles:
        t.observe(show, "value")
    step.observe(show, "value")
    show()
    return w.VBox([w.HBox(toggles), step, out])
