"""What the labs give: the data types, constants and reference data a lab hands the student,
shared with its answers and its lessons, one module per chapter topic. Nothing here answers
an exercise, so a graded submission's worker (which can read course/ but not solutions/) has
them and still has no answer to copy.

    compaction   the summary message's format and the study guide's rule-based summary (04)
    injection    the types the defences and the attack table exchange (10)
"""
