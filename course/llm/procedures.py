"""Rule `instructions`: procedures and rules written in the system prompt.

What experiment 2-4 measured on real models (removing a prompt's structure cut task success by
more than 30%) is simulated by three stated, testable simplifications. They read the system
and developer messages only.

  Numbered procedures: two or more numbered lines in a row ("1. ...", "Step 2: ..."), titled by
  the line before them. A procedure applies when the request shares a word with its title, or
  two with its steps (the best such procedure; at a temperature above 0 the procedure, or
  none, is drawn by those counts: course/llm/sampling.py). The model then follows it step by
  step, one step per reply, skipping none: a step's tool is the offered tool it names (in
  backticks, or its exact name); its arguments come from the user's request, and `key=value`
  pairs in the step. A step that names no tool is not a call (the answer covers it). A step
  that says to stop if it fails ("if it fails, stop", "stop if ... fails") ends the procedure
  when its call returned an error: the reply says so and calls nothing more. When every step
  has its call, the model answers from the results.
  Unordered rules: a bulleted line ("- ...") that names an offered tool in backticks is a rule,
  not a step.
  It is applied only when the request or the latest tool result names its trigger (a word of
  the tool's name): then its tool is called first, if it was not called in this turn. So a
  prerequisite written as a bullet ("- verify the customer's identity with `verify_identity`
  before any change") is skipped by a request that never mentions identity, which the same
  step, numbered, would not be.
  Substitutions: "NEVER use `X` for <topic>; use `Y` instead" (also "do not use"), in any
  system line: a call of X, for a request that shares a word with <topic>, is made as Y
  (same arguments where Y takes them). The trace names the rule.

Thresholds, rounding and other conditions in prose are not read: a real model follows them
only as well as it reads them, and the teaching model does not read prose.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from course.llm.answers import describe_result
from course.llm.context import Context, Decision, show_call
from course.llm.planning import (ask_terms, fill_arguments, key_values, plan_tool_groups, terms,
                                 typed_arguments)
from course.llm.sampling import choose

NUMBERED = re.compile(r"^\s*(?:step\s+)?(\d+)\s*[.):]\s+(\S.*?)\s*$", re.I)
BULLET = re.compile(r"^\s*[-*•]\s+(\S.*?)\s*$")
BACKTICKED = re.compile(r"`([A-Za-z0-9_.-]+)`")
STOPS = re.compile(r"\bif\b[^.;]*\bfail\w*[^.;]*\bstop\b|\bstop\b[^.;]*\bif\b[^.;]*\bfail", re.I)
NEVER = re.compile(r"\b(?:never|do\s+not|don't)\s+(?:use|call)\s+`?([\w.-]+)`?\s+(?:for|to|when)\s+"
                   r"([^;.\n]+?)\s*[;,.:—-]+\s*(?:use|call)\s+`?([\w.-]+)`?(?:\s+instead)?", re.I)
MIN_STEP_TERMS = 2  # words a request shares with a procedure's steps for it to apply


@dataclass(frozen=True)
class Step:
    number: int
    text: str
    tool: str | None
    stops_on_failure: bool


@dataclass(frozen=True)
class Procedure:
    message: int   # the system message it is in
    title: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Bullet:
    message: int
    text: str
    tool: str


@dataclass(frozen=True)
class Substitution:
    message: int
    forbidden: str
    topic: str
    instead: str


def _named_tool(text: str, offered) -> str | None:
    """The first offered tool a line names in backticks (as a skill's steps do): a tool's name
    in plain prose ("open a file with read_file") is advice, not a step or a rule."""
    return next((name for name in BACKTICKED.findall(text) if name in offered), None)


def read_instructions(ctx: Context) -> tuple[list[Procedure], list[Bullet], list[Substitution]]:
    procedures, bullets, substitutions = [], [], []
    for index, text in ctx.system_text():
        lines = text.splitlines()
        run: list[Step] = []
        title = ""
        for k, line in enumerate(lines + [""]):
            numbered = NUMBERED.match(line)
            if numbered:
                if not run:
                    title = next((lines[j].strip() for j in range(k - 1, -1, -1) if lines[j].strip()), "")
                step_text = numbered.group(2)
                run.append(Step(int(numbered.group(1)), step_text, _named_tool(step_text, ctx.by_name),
                                bool(STOPS.search(step_text))))
                continue
            if len(run) >= 2:
                procedures.append(Procedure(index, title, tuple(run)))
            run = []
            bullet = BULLET.match(line)
            if bullet and not NEVER.search(line):
                tool = _named_tool(bullet.group(1), ctx.by_name)
                if tool:
                    bullets.append(Bullet(index, bullet.group(1), tool))
        for match in NEVER.finditer(text):
            substitutions.append(Substitution(index, match.group(1), match.group(2).strip(), match.group(3)))
    return procedures, bullets, substitutions


def _substituted(ctx: Context, name: str, args: dict, substitutions) -> tuple[str, dict, str | None]:
    """(tool, arguments, why) after the NEVER rules: a forbidden tool for this topic is swapped."""
    wanted = ask_terms(ctx.request)
    for rule in substitutions:
        if rule.forbidden == name and rule.instead in ctx.by_name and wanted & terms(rule.topic):
            tool = ctx.by_name[rule.instead]
            properties = (tool["function"].get("parameters") or {}).get("properties") or {}
            kept = {k: v for k, v in args.items() if k in properties}
            for key, value in fill_arguments(tool, ctx.request, sampler=ctx.sampler).items():
                kept.setdefault(key, value)
            return rule.instead, kept, (f"messages[{rule.message}] says never to use {name} for "
                                        f"{rule.topic}: {rule.instead} instead")
    return name, args, None


def _fitting(ctx: Context, procedures: list[Procedure]) -> Procedure | None:
    wanted = ask_terms(ctx.request)
    scored = []
    for procedure in procedures:
        in_title = len(wanted & terms(procedure.title))
        in_steps = len(wanted & set().union(*(terms(s.text) for s in procedure.steps)))
        scored.append((procedure.title[:60] or f"procedure in messages[{procedure.message}]",
                       2 * in_title + in_steps if in_title or in_steps >= MIN_STEP_TERMS else 0))
    pick = choose(ctx.sampler, "which procedure of the system prompt the request follows, if any",
                  scored + [("no procedure", 0.5)])
    return procedures[pick] if pick < len(procedures) and scored[pick][1] > 0 else None


def _step_arguments(ctx: Context, step: Step, name: str) -> dict:
    tool = ctx.by_name[name]
    raw = key_values(step.text)
    args = typed_arguments(tool, raw) if raw else {}
    for key, value in fill_arguments(tool, ctx.request, sampler=ctx.sampler).items():
        args.setdefault(key, value)
    return args


def _follow(ctx: Context, procedure: Procedure, substitutions) -> Decision | None:
    where = f"the procedure \"{procedure.title[:60]}\" (messages[{procedure.message}])"
    made = ctx.calls_since(ctx.last_user)
    done, j = [], 0
    for step in procedure.steps:
        if step.tool is None:
            continue
        name, args, swapped = _substituted(ctx, step.tool, _step_arguments(ctx, step, step.tool), substitutions)
        tries = [(k, ctx.results.get(made[k].id)) for k in range(j, len(made)) if made[k].name == name]
        worked = next(((k, r) for k, r in tries if r is not None and not r.error), None)
        if worked is not None:  # done (a later call of another tool may be a retry of its own)
            done.append((step, made[worked[0]], worked[1]))
            j = worked[0] + 1
            continue
        failed = next(((k, r) for k, r in tries if r is not None and r.error), None)
        if failed is not None and step.stops_on_failure:
            k, result = failed
            return ctx.answer("instructions", f"{where}, step {step.number}: its call failed and the "
                                              f"step says to stop", (
                f"I cannot continue: step {step.number} ({show_call(name, made[k].args)}) failed, "
                f"and the procedure says to stop there.\n\n"
                + describe_result(name, made[k].args, result.content)),
                [procedure.message, result.index])
        why = f"{where}, step {step.number}: \"{step.text[:80]}\""
        if swapped:
            why += f" ({swapped})"
        return ctx.call("instructions", why, [(name, args)], [procedure.message, ctx.last_user])
    if not done:
        return None
    parts = [f"Step {step.number} ({show_call(call.name, call.args)}): "
             + describe_result(call.name, call.args, result.content) for step, call, result in done]
    return ctx.answer("instructions", f"every step of {where} has its call: answer from the results",
                      "I followed the procedure.\n\n" + "\n\n".join(parts),
                      [procedure.message] + [r.index for _, _, r in done])


def _triggered(ctx: Context, bullets: list[Bullet]) -> Decision | None:
    latest = ctx.calls_since(ctx.last_user)
    said = ask_terms(ctx.request)
    if latest and latest[-1].id in ctx.results:
        said |= terms(ctx.results[latest[-1].id].content)
    called = {c.name for c in latest}
    for bullet in bullets:
        trigger = terms(bullet.tool)
        if bullet.tool in called or not said & trigger:
            continue
        return ctx.call("instructions", f"the rule \"{bullet.text[:80]}\" (messages[{bullet.message}]) "
                                        f"is triggered: the request or the last result names "
                                        f"{', '.join(sorted(said & trigger))}",
                        [(bullet.tool, fill_arguments(ctx.by_name[bullet.tool], ctx.request,
                                                      sampler=ctx.sampler))],
                        [bullet.message, ctx.last_user])
    return None


def _planned_substitution(ctx: Context, substitutions) -> Decision | None:
    """The calls the request needs (as rule memory plans them), when a NEVER rule swaps one."""
    groups = plan_tool_groups(ctx.request, ctx.tools, ctx.sampler)
    if not groups:
        return None
    specs, reasons = [], []
    for name in groups[0]:
        args = fill_arguments(ctx.by_name[name], ctx.request, sampler=ctx.sampler)
        name, args, swapped = _substituted(ctx, name, args, substitutions)
        specs.append((name, args))
        if swapped:
            reasons.append(swapped)
    if not reasons or all(ctx.visible_result(n, a) for n, a in specs):
        return None
    return ctx.call("instructions", "; ".join(reasons),
                    [(n, a) for n, a in specs if not ctx.visible_result(n, a)], [ctx.last_user])


def rule_instructions(ctx: Context) -> Decision | None:
    """Follow a numbered procedure of the system prompt; apply its triggered rules and its
    NEVER ... instead substitutions."""
    if ctx.last_user < 0 or not ctx.tools or not ctx.system_text():
        return None
    procedures, bullets, substitutions = read_instructions(ctx)
    if not (procedures or bullets or substitutions):
        return None
    procedure = _fitting(ctx, procedures) if procedures else None
    if procedure is not None:
        decision = _follow(ctx, procedure, substitutions)
        if decision is not None:
            return decision
    return _triggered(ctx, bullets) or (_planned_substitution(ctx, substitutions) if substitutions else None)
