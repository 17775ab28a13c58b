"""The conformance runner: the kernel sees the proxy, and the first failing cell is recorded."""
import nbformat

from tests.providers.conformance import LessonRun, run_lesson
from tests.providers.proxy import ProviderProxy
from tests.providers.table import markdown_table

ASK = """import course.llm
from course.usage import read_usage
reply = course.llm.client().chat.completions.create(
    model=course.llm.model_name(), messages=[{"role": "user", "content": "Say hello."}])
print(course.llm.model_name(), read_usage(reply.usage).provider_shape)"""


def notebook(tmp_path, *sources):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.cells = [nbformat.v4.new_markdown_cell("# a lesson")] + [
        nbformat.v4.new_code_cell(s) for s in sources]
    path = tmp_path / "99_probe.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_kernel_talks_to_the_proxy_and_the_first_failure_is_recorded(tmp_path):
    path = notebook(tmp_path, ASK, "raise KeyError('no such field')", "1 / 0")
    with ProviderProxy("deepseek") as proxy:
        result = run_lesson(path, proxy, save_to=tmp_path / "saved")
    assert (result.ran, result.failing_cell, result.requests) == (False, 2, 1)
    assert result.error == "KeyError: 'no such field'"
    saved = nbformat.read(tmp_path / "saved" / "99_probe.deepseek.ipynb", as_version=4)
    assert saved.cells[1].outputs[0]["text"] == "deepseek-shaped-model deepseek\n"


def test_a_lesson_that_runs(tmp_path):
    with ProviderProxy("ollama") as proxy:
        result = run_lesson(notebook(tmp_path, ASK), proxy)
    assert (result.ran, result.failing_cell, result.error, result.requests) == (True, None, "", 1)


def test_the_table():
    results = [LessonRun("01_a", "ollama", True, None, "", 3),
               LessonRun("01_a", "openai", False, 4, "BadRequestError: x | y", 1)]
    assert markdown_table(results, ["ollama", "deepseek", "openai"]).splitlines() == [
        "| lesson | ollama | deepseek | openai |",
        "|---|---|---|---|",
        "| 01_a | ran (3 req) | — | cell 4: BadRequestError: x \\| y |"]


MISLABEL = """import course.llm
with course.llm.serve() as server:  # the teaching model answers...
    reply = server.client().chat.completions.create(
        model=course.llm.model_name(), messages=[{"role": "user", "content": "Say hello."}])
print(f"prompt {reply.usage.prompt_tokens} [{course.llm.model_name()}]")  # ...under the provider's name"""

LABELLED = """import course.llm
from course.usage import read_usage
with course.llm.fresh_targets() as targets:
    for target in targets:
        usage = read_usage(target.create(messages=[{"role": "user", "content": "Say hello."}]).usage)
        print(f"prompt {usage.prompt} [{target.label}]")"""


def test_a_figure_printed_under_the_providers_name_must_come_from_the_provider(tmp_path):
    with ProviderProxy("openai") as proxy:
        result = run_lesson(notebook(tmp_path, "print('configured:', 'openai-shaped-model')",
                                     MISLABEL, LABELLED), proxy)
    assert result.ran and result.requests == 1
    assert result.mislabelled == [2]  # cell 1 has no figure; cell 3 asked the provider itself
    assert "provider-labelled figures from cells that sent it nothing: [2]" in result.verdict()
