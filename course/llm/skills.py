"""Rule `skills`: load a skill from the catalogue, then follow its steps.

A catalogue is a block in any message, one skill per line:

    <available_skills>
    - fix-flaky-test: Diagnose and fix a flaky unit test by rerunning it and reading its log
    - release-notes: Write release notes from the commits since the last tag
    </available_skills>

With a catalogue in the context and a tool named `load_skill` offered, a request that shares at
least two content words with a skill's name and description (the best such skill) makes the
model call `load_skill(name=...)` (at a temperature above 0 the skill, or none, is drawn by
those counts: course/llm/sampling.py). The tool's result is the skill's body, a SKILL.md: YAML front
matter between `---` lines, then numbered steps that name tools in backticks:

    ---
    name: fix-flaky-test
    description: Diagnose and fix a flaky unit test
    ---
    1. Run `run_tests` with target=tests/test_io.py to reproduce the failure.
    2. Read the log with `read_file` path=build/test.log.
    3. Answer with the cause.

Once the body is visible (loaded in this turn, or earlier for a request the same skill fits),
the model follows the steps in order, one call per step: the first backticked name that is an
offered tool, with the step's `key=value` arguments (others filled from the request). A step
that names no offered tool is skipped. When every step has its call, it answers from the
results. A catalogue with a line that is not `- name: description` is ignored, with a trace
step saying which line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from course.llm.answers import describe_result
from course.llm.context import Context, Decision, show_call
from course.llm.planning import fill_arguments, key_values, terms, typed_arguments
from course.llm.sampling import Sampler, choose

OPEN_TAG, CLOSE_TAG = "<available_skills>", "</available_skills>"
SKILL_LINE = re.compile(r"^\s*[-*]\s*([A-Za-z0-9][\w.-]*)\s*:\s*(\S.*?)\s*$")
STEP = re.compile(r"^\s*(\d+)[.)]\s+(.+?)\s*$", re.M)
BACKTICKED = re.compile(r"`([A-Za-z0-9_-]+)`")
MIN_SHARED_TERMS = 2


@dataclass
class Step:
    number: int
    text: str
    tool: str | None


def catalogue(ctx: Context) -> tuple[int, dict[str, str]] | None:
    """(message index, {name: description}) of the latest well-formed catalogue."""
    for i in range(len(ctx.messages) - 1, -1, -1):
        text = ctx.text(i)
        start = text.rfind(OPEN_TAG)
        if start < 0:
            continue
        end = text.find(CLOSE_TAG, start)
        if end < 0:
            ctx.note("skills", f"malformed <available_skills> in messages[{i}] ignored: no "
                               f"closing {CLOSE_TAG}", [i])
            continue
        skills, problem = {}, None
        for n, line in enumerate(text[start + len(OPEN_TAG):end].splitlines()):
            if not line.strip():
                continue
            match = SKILL_LINE.match(line)
            if not match:
                problem = f"line {n} ({line.strip()[:60]!r}) is not '- name: description'"
                break
            skills[match.group(1)] = match.group(2)
        if problem or not skills:
            ctx.note("skills", f"malformed <available_skills> in messages[{i}] ignored: "
                               f"{problem or 'it lists no skills'}", [i])
            continue
        return i, skills
    return None


def parse_skill(body: str, offered) -> tuple[str | None, list[Step]]:
    """(name from the front matter, steps) of a SKILL.md."""
    name = None
    text = body
    if text.lstrip().startswith("---"):
        parts = text.lstrip().split("---", 2)
        if len(parts) == 3:
            for line in parts[1].splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "name":
                    name = value.strip().strip("\"'")
            text = parts[2]
    steps = []
    for match in STEP.finditer(text):
        named = [t for t in BACKTICKED.findall(match.group(2)) if t in offered]
        steps.append(Step(int(match.group(1)), match.group(2), named[0] if named else None))
    return name, steps


def _matching_skill(request: str, skills: dict[str, str],
                    sampler: Sampler | None = None) -> tuple[str, int] | None:
    """The skill the request matches best, with the words they share, if at least
    MIN_SHARED_TERMS; sampling, drawn with "no skill" as one more candidate (sampling.py)."""
    wanted = terms(request)
    scored = [(name, len(wanted & (terms(name) | terms(desc)))) for name, desc in skills.items()]
    pick = choose(sampler, "which skill the request matches, if any",
                  scored + [("no skill", MIN_SHARED_TERMS - 0.5)])
    return scored[pick] if pick < len(scored) else None


def _loaded(ctx: Context, name: str | None = None):
    """The latest successful load_skill call (of `name`, if given) and its result."""
    for call in reversed(ctx.calls):
        result = ctx.results.get(call.id)
        if call.name == "load_skill" and result and not result.error and (
                name is None or str(call.args.get("name", "")).lower() == name.lower()):
            return call, result
    return None


def _follow(ctx: Context, call, result, start: int) -> Decision | None:
    name, steps = parse_skill(result.content, ctx.by_name)
    name = name or str(call.args.get("name", "skill"))
    if not steps:
        ctx.note("skills", f"the body of skill {name} (messages[{result.index}]) has no numbered "
                           f"steps: nothing to follow", [result.index])
        return None
    made = [c for c in ctx.calls if c.index > start and c.name != "load_skill"]
    done, j = [], 0
    for step in steps:
        if step.tool is None:
            ctx.note("skills", f"step {step.number} of {name} names no offered tool: skipped",
                     [result.index])
            continue
        k = next((k for k in range(j, len(made)) if made[k].name == step.tool), None)
        if k is not None:  # this step's call was made (later calls of other tools are retries)
            done.append((step, made[k]))
            j = k + 1
            continue
        raw = key_values(step.text)
        args = typed_arguments(ctx.by_name[step.tool], raw) if raw else {}
        for key, value in fill_arguments(ctx.by_name[step.tool], step.text, ctx.request,
                                         ctx.sampler).items():
            args.setdefault(key, value)
        return ctx.call("skills", f"skill {name} (messages[{result.index}]) step {step.number}: "
                                  f"\"{step.text[:80]}\"", [(step.tool, args)], [result.index])
    parts = []
    for step, made_call in done:
        step_result = ctx.results.get(made_call.id)
        if step_result:
            parts.append(f"Step {step.number} ({show_call(made_call.name, made_call.args)}): "
                         + describe_result(made_call.name, made_call.args, step_result.content))
    text = f"I followed the skill {name}.\n\n" + "\n\n".join(parts)
    return ctx.answer("skills", f"every step of skill {name} (messages[{result.index}]) has its "
                                f"call: answer from the results",
                      text, [result.index] + [c.index for _, c in done])


def rule_skills(ctx: Context) -> Decision | None:
    """Load a skill the request matches; follow a loaded skill's steps, one call per step."""
    found = catalogue(ctx) if any(OPEN_TAG in ctx.text(i) for i in range(len(ctx.messages))) else None
    loaded_now = _loaded(ctx)
    if loaded_now and loaded_now[0].index > ctx.last_user:
        return _follow(ctx, *loaded_now, start=loaded_now[1].index)
    if found is None or ctx.last_user < 0:
        return None
    index, skills = found
    if "load_skill" not in ctx.by_name:
        ctx.note("skills", f"a skill catalogue is in messages[{index}] but no load_skill tool is "
                           f"offered: skills cannot be loaded", [index])
        return None
    match = _matching_skill(ctx.request, skills, ctx.sampler)
    if match is None:
        return None
    name, shared = match
    earlier = _loaded(ctx, name)
    if earlier:  # its body is still in the window: no need to load it again
        ctx.note("skills", f"skill {name} fits the request and its body is still visible in "
                           f"messages[{earlier[1].index}]: not loaded again", [earlier[1].index])
        return _follow(ctx, *earlier, start=max(earlier[1].index, ctx.last_user))
    return ctx.call("skills", f"the request shares {shared} words with skill {name} in the "
                              f"catalogue (messages[{index}])", [("load_skill", {"name": name})],
                    [ctx.last_user, index])
