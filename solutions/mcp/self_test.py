def self_test() -> dict:
    """The answers to lab 18's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "c", "q2": "b", "q3": "a", "q4": "d"}
