"""The lessons where a 135M model makes sense run top to bottom on it (COURSE_MODEL=local),
outputs not compared, and every figure printed under its name was produced by it.

Which lessons, and why not the others (tried on this machine: 2 cores, shared), is said in
README.md ("A real model on your machine") and here, in LESSONS and NOT_ON_THE_LOCAL_MODEL.
"""
from __future__ import annotations

import pytest

from course.paths import REPO_ROOT
from tests.local_model.lessons import MODEL, run_lesson

# lesson -> what it shows on a real model
LESSONS = {
    "00_start_here": "the set-up check and a first request answered by a real model",
    "07_terminal_sandbox": "an agent given a terminal tool, on a model that answers instead",
    "13_reasoning_and_streaming": "a real model's raw token stream, chunk by chunk",
}
# lesson -> why it is not run on the local model
NOT_ON_THE_LOCAL_MODEL = {
    "01_agent_loop": "the loop needs the model to call a tool; SmolLM2 answers in text",
    "02_counting_tokens": "a dozen requests of hundreds of tokens: over the cell's 600 s on a "
                          "busy 2-core machine; its exact counts are the teaching model's template",
    "03_gssc_pipeline": "over the cell's 600 s here (long prompts, slow prefill on a CPU)",
    "04_compaction": "long tool-call histories: minutes of prefill per request on a CPU",
    "05_prompt_caching": "its strategies send thousands of prompt tokens each: over the cell's "
                         "600 s here (chapter 16 measures the KV cache on this model instead)",
    "06_notetool": "it sends no request to a model",
    "14_provider_side_context": "the Responses API, which the local server does not serve",
    "15_agent_architecture": "the Responses API, which the local server does not serve",
}
# Not tried yet (their provider runs send tens of long requests, tens of minutes of CPU
# prefill here): 08_status_bar, 09_skills_and_tool_search, 10_prompt_injection,
# 11_production_compaction, 12_prompts_and_evaluation.
NOT_TRIED = ("08_status_bar", "09_skills_and_tool_search", "10_prompt_injection",
             "11_production_compaction", "12_prompts_and_evaluation")


def test_every_lesson_is_listed_once():
    lessons = {path.stem for path in (REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    listed = [*LESSONS, *NOT_ON_THE_LOCAL_MODEL, *NOT_TRIED]
    assert sorted(listed) == sorted(lessons), "each lesson in exactly one list"


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_the_lesson_runs_on_the_local_model(lesson, local_model_installed, tmp_path):
    run = run_lesson(REPO_ROOT / "notebooks" / f"{lesson}.ipynb", save_to=tmp_path)
    assert run.ran, f"{lesson} on {MODEL} fails in cell {run.failing_cell}: {run.error}"
    assert run.requests > 0, f"{lesson} sent the local model nothing: it measured another model"
    assert not run.mislabelled, (
        f"{lesson} prints figures beside {MODEL}'s name in cells {run.mislabelled}, which sent "
        f"it no request: label them with the model that produced them (course.llm.fresh_targets)")
    printed = (tmp_path / f"{lesson}.local.ipynb").read_text()
    assert f"{MODEL} (your provider)" not in printed, "the local model is not the student's provider"
