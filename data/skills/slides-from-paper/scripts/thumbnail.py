"""Contact sheet of a rendered deck: one line per slide with its title and word count.

Bundled with the slides-from-paper skill (layer 3): the agent runs it instead of reading every
slide back into its context. Usage: python thumbnail.py DECK.html
"""
import re
import sys
from pathlib import Path


def contact_sheet(html: str) -> list[str]:
    lines = []
    for number, section in enumerate(re.findall(r"<section>(.*?)</section>", html, re.S), 1):
        title = re.search(r"<h2>(.*?)</h2>", section, re.S)
        words = len(re.sub(r"<[^>]+>", " ", section).split())
        lines.append(f"{number:2d}  {title.group(1).strip() if title else '(no title)'}  ({words} words)")
    return lines


if __name__ == "__main__":
    print("\n".join(contact_sheet(Path(sys.argv[1]).read_text(encoding="utf-8"))))
