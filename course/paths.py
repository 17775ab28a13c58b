"""Where the course's folders are, from any working directory (a clone or an editable install)."""
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
LABS_DIR = REPO_ROOT / "labs"
LESSONS_DIR = REPO_ROOT / "notebooks"
CHINESE_EDITION = "zh-CN"  # the Chinese edition's folder (course.editions) and language (course.i18n)
