"""Layer 3, what the lessons show with: widgets, specimens (the flawed designs a lesson takes
apart), scripted experiments and fixture loaders. Each module belongs to one chapter
(`course.chapters`); lessons and labs import from here, the answers never do (tests/test_layers.py)."""
