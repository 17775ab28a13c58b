"""Widgets for the lessons: each wires ipywidgets controls to plain, tested functions."""
