"""Chapter 13's self-test: the reference answers (the lab's last exercise)."""


def self_test() -> dict:
    """The answers to lab 13's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "c", "q2": "b", "q3": "a", "q4": "b"}
