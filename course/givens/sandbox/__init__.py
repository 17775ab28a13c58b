"""Chapter 07's givens: what lab 07 hands the student and the answers build on, no answer among
them (lab 07 asks for `parse_command`, `resolve_inside`, `check_arguments` and
`run_with_hygiene`; they are in `solutions.sandbox`).

    refusal  Refusal, the one error every layer raises, and quote for its messages
    rules    RULES (a CommandRule per allowed program), check_awk_program, check_find and
             check_tail_operand
    limits   RunResult, ResourceLimits and DEFAULT_LIMITS, TRUSTED_PATH
"""
from course.givens.sandbox.limits import DEFAULT_LIMITS, TRUSTED_PATH, ResourceLimits, RunResult
from course.givens.sandbox.refusal import Refusal, quote
from course.givens.sandbox.rules import RULES, CommandRule, check_awk_program, check_find

__all__ = [
    "CommandRule", "DEFAULT_LIMITS", "RULES", "Refusal", "ResourceLimits", "RunResult",
    "TRUSTED_PATH", "check_awk_program", "check_find", "quote",
]
