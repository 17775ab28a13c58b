"""Chapter 03's fixed vocabulary: the sections of a context, where packets go, the default
output instructions, and the words relevance leaves out.

No answers here, only data: lab 03 imports these instead of copying them.
"""
from __future__ import annotations

SECTIONS = ("Role & Policies", "Task", "State", "Evidence", "Context", "Output")
PINNED = "Role & Policies"  # packets in this section are always kept, never scored or cut
PACKET_SECTIONS = ("Role & Policies", "State", "Evidence", "Context")  # Task/Output are not packets

# Where a packet goes when its maker does not say.
SECTION_FOR_SOURCE = {
    "system": "Role & Policies",
    "notes": "State",
    "docs": "Evidence",
    "tools": "Evidence",
    "history": "Context",
}

DEFAULT_OUTPUT = (
    "Answer the task using the sections above. Name the entries you rely on by their source "
    "and time. If something you need is missing or looks out of date, say so."
)

# Function words that match almost anything; "not" stays (as in "Could NOT find ZLIB").
STOPWORDS = frozenset(
    "a an and are as at be by can do does did for from had has have how i in is it its me my "
    "of on or our so that the their them then there these this to was we were what when where "
    "which who why will with you your".split()
)

# Chinese question and filler words: a query's CJK run is split at them. Longer words come
# before the words they contain (为什么 before 什么), so a regular expression joining them with
# "|" removes the longest.
CJK_QUESTION_WORDS = ("为什么", "怎么办", "怎么", "什么", "如何", "我们", "你们", "这个", "那个", "一个")
