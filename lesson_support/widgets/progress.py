"""A progress bar for a lesson cell that works for several seconds, so the student sees it
advance instead of a bare [*] (lessons 11, 12 and 15).

The cell showing it is tagged nbval-ignore-output (a widget view carries a random id), so it
prints nothing else: what it computes is printed by the next cell, which nbval compares.
"""
from __future__ import annotations

from course.i18n import _


class Progress:
    """`Progress(total, description).show()`, then `step(label)` after each of the `total`
    pieces of work."""

    def __init__(self, total: int, description: str):
        import ipywidgets

        self.bar = ipywidgets.IntProgress(value=0, min=0, max=total, description=description,
                                          style={"description_width": "initial"})
        self.label = ipywidgets.Label(_("{done} of {total}").format(done=0, total=total))
        self.view = ipywidgets.HBox([self.bar, self.label])

    def show(self) -> "Progress":
        from IPython.display import display

        display(self.view)
        return self

    def step(self, label: str) -> None:
        self.bar.value += 1
        self.label.value = _("{done} of {total}: {label}").format(done=self.bar.value, total=self.bar.max,
                                                                  label=label)
