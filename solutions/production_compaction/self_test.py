"""Chapter 11's self-test: the reference answers (the lab's last exercise)."""


def self_test() -> dict:
    """The answers to lab 11's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "b", "q2": "a", "q3": "c", "q4": "b"}
