"""Chapter 14's self-test: the reference answers (the lab's last exercise)."""


def self_test() -> dict:
    """The answers to lab 14's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "b", "q2": "c", "q3": "a", "q4": "b"}
