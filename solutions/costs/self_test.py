"""Chapter 05's self-test: the reference answers (the lab's last exercise)."""


def self_test() -> dict:
    """The answers to lab 05's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "b", "q2": "acd", "q3": 1290000, "q4": "b"}
