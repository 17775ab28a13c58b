"""The GSSC explorer's logic (lesson_support/widgets/gssc.py) and its wiring."""
import matplotlib

matplotlib.use("Agg")

from course.givens.gssc import sample_candidates, sample_tasks
from lesson_support.widgets import gssc as widget
from solutions.gssc import SECTIONS, ContextConfig, count_tokens


def test_the_view_accounts_for_every_candidate_and_the_whole_budget():
    packets, tasks = sample_candidates(), sample_tasks()
    assert len(tasks) == 3
    config = ContextConfig(budget=1500, reserve=300)
    view = widget.explorer_view(tasks[1], packets, config)
    assert view["error"] is None and len(view["rows"]) == len(packets)
    assert sum(view["bars"].values()) == config.budget
    assert list(view["bars"])[:6] == list(SECTIONS)
    assert view["bars"]["unused"] == config.limit - count_tokens(view["built"].text)
    statuses = [r["status"] for r in view["rows"]]
    assert statuses[0] == "pinned" and "did not fit" in statuses
    selected = [r for r in view["rows"] if r["status"] == "selected"]
    assert [r["score"] for r in selected] == sorted((r["score"] for r in selected), reverse=True)


def test_moving_a_slider_changes_the_selection():
    packets, task = sample_candidates(), sample_tasks()[1]
    small = widget.explorer_view(task, packets, ContextConfig(budget=400, reserve=100))
    large = widget.explorer_view(task, packets, ContextConfig(budget=5000, reserve=100))

    def count(view):
        return sum(r["status"] == "selected" for r in view["rows"])

    assert count(small) < count(large)
    assert any(r["status"] == "selected" and r["tokens"] > 2000 for r in large["rows"])


def test_a_budget_error_is_shown_not_raised():
    view = widget.explorer_view("task", sample_candidates(), ContextConfig(budget=60, reserve=10))
    assert view["built"] is None and "raise the budget" in view["error"]
    assert "Budget error" in widget.summary_line(view, ContextConfig(budget=60, reserve=10))


def test_html_escapes_content_and_the_chart_has_a_bar_per_part():
    rows = [{"source": "docs", "section": "Evidence", "tokens": 3, "relevance": None,
             "recency": 0.5, "score": 0.25, "status": "selected", "preview": "<script>x</script>"}]
    table = widget.table_html(rows)
    assert "&lt;script&gt;" in table and "<script>" not in table and "—" in table
    assert "&lt;b&gt;" in widget.context_html("<b>")
    bars = {"Task": 10, "unused": 5, "reserve (answer)": 7}
    fig = widget.budget_figure(bars)
    assert len(fig.axes[0].patches) == 3


def test_the_widget_updates_when_a_control_moves():
    box = widget.gssc_explorer()
    controls = box.children[0].children
    summary, table = box.children[1], box.children[3]
    task, budget = controls[0], controls[1]
    task.value = sample_tasks()[1]  # the English task: its best packet is a huge log
    assert "did not fit" in table.value
    budget.value = 6000
    assert "did not fit" not in table.value and "budget 6,000" in summary.value
    reserve = next(c for c in controls if getattr(c, "description", "") == "answer reserve")
    reserve.value = 2000
    budget.value = 1000  # reserve >= budget: an error message, not an exception
    assert "reserve" in summary.value and table.value == ""
