"""Chapter 06's committed data: the lesson's notes folder and the three-day scenario."""
from __future__ import annotations

from course.paths import DATA_DIR

SAMPLE_FOLDER = DATA_DIR / "notes" / "libpng-aarch64"    # note files, as NoteTool writes them
SCENARIO = DATA_DIR / "notes" / "libpng_scenario.json"   # the steps: create, update, delete
