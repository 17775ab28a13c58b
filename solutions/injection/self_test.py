"""Chapter 10's self-test: the reference answers (the lab's last exercise)."""


def self_test() -> dict:
    """The answers to lab 10's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "a", "q2": "c", "q3": 0, "q4": "a"}
