"""Chapter 15's self-test: the reference answers (the lab's last exercise)."""


def self_test() -> dict:
    """The answers to lab 15's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "b", "q2": 8, "q3": "c", "q4": "a"}
