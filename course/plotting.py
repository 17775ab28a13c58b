"""Chinese (CJK) text in matplotlib plots.

Matplotlib's default font, DejaVu Sans, has no Chinese characters: a label like 上下文工程 draws
as empty boxes, with a "Glyph ... missing" warning. `use_cjk_font()` adds Noto Sans CJK (Debian
and Ubuntu package `fonts-noto-cjk`, installed by `.ci/run` and by repo2docker from `apt.txt`)
to matplotlib's font fallback list: Latin text still uses DejaVu Sans (plots look as before),
and a character DejaVu Sans lacks comes from Noto Sans CJK. Where the font is not installed it
does nothing and returns None; it never raises.

It applies itself: `import course` arranges for it to run right after matplotlib loads its
fonts (`matplotlib.font_manager`), or at once when matplotlib already has. So a lesson, lab or
widget that imports anything from `course` (or `solutions`, `lesson_support`, which import it)
needs nothing more. A notebook that plots without importing `course` calls it itself, once,
before its first plot:

    from course.plotting import use_cjk_font
    use_cjk_font()

Nothing here imports matplotlib until the function runs, so `import course` stays fast.
"""
from __future__ import annotations

import glob
import importlib.abc
import os
import sys

# Preferred first: Simplified Chinese forms, since the course's Chinese text is Simplified.
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "Noto Sans CJK KR",
                "Noto Sans CJK HK")
# Where distributions put the font files (Debian/Ubuntu, Fedora, Arch, Homebrew, a user's own).
CJK_FONT_FILES = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-*.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-*.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-*.ttc",
    "/usr/local/share/fonts/**/NotoSansCJK*.tt[cf]",
    "~/.local/share/fonts/**/NotoSansCJK*.tt[cf]",
)


def _known_families(font_manager) -> set[str]:
    return {entry.name for entry in font_manager.fontManager.ttflist}


def find_cjk_family(patterns=CJK_FONT_FILES) -> str | None:
    """The name of an installed Noto Sans CJK family that matplotlib can use, or None.

    Matplotlib keeps a cache of the system's fonts; a font installed after that cache was
    built is added from its file here.
    """
    from matplotlib import font_manager

    known = _known_families(font_manager)
    if not any(family in known for family in CJK_FAMILIES):
        for pattern in patterns:
            for path in sorted(glob.glob(os.path.expanduser(pattern), recursive=True)):
                try:
                    font_manager.fontManager.addfont(path)
                except Exception:  # an unreadable font file is not our problem to report
                    continue
        known = _known_families(font_manager)
    return next((family for family in CJK_FAMILIES if family in known), None)


def use_cjk_font(patterns=CJK_FONT_FILES) -> str | None:
    """Let matplotlib draw Chinese, Japanese and Korean text if Noto Sans CJK is installed.

    Appends the font to `rcParams["font.family"]`, matplotlib's fallback list, so it is used
    only for characters the fonts before it lack. Returns the family used, or None (nothing
    changed) when no CJK font is installed. Safe to call more than once.
    """
    try:
        family = find_cjk_family(patterns)
        if family is None:
            return None
        import matplotlib

        families = matplotlib.rcParams["font.family"]
        families = [families] if isinstance(families, str) else list(families)
        if family not in families:
            matplotlib.rcParams["font.family"] = families + [family]
        return family
    except Exception:  # a plot without Chinese glyphs beats a lesson that cannot import
        return None


# --- applying it automatically -----------------------------------------------------------------

_TRIGGER = "matplotlib.font_manager"


class _AfterFontManager(importlib.abc.MetaPathFinder):
    """Runs use_cjk_font() once, right after matplotlib.font_manager has been imported.

    It finds nothing itself: it asks the other finders for the module's spec and wraps the
    loader's exec_module, so the module is loaded exactly as it would have been.
    """

    def find_spec(self, name, path=None, target=None):
        if name != _TRIGGER:
            return None
        uninstall()  # once is enough, and the finders asked below must not include this one
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_use_cjk_font(module):
            exec_module(module)
            use_cjk_font()

        spec.loader.exec_module = exec_then_use_cjk_font
        return spec


_hook = _AfterFontManager()


def uninstall() -> None:
    while _hook in sys.meta_path:
        sys.meta_path.remove(_hook)


def install() -> None:
    """Apply use_cjk_font() now if matplotlib has loaded its fonts, else when it does."""
    if _TRIGGER in sys.modules:
        use_cjk_font()
    elif _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
