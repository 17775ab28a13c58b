"""The teaching model's tool-call arguments validate against the tool's JSON schema (issue 32 item 9)."""
import jsonschema
from hypothesis import given, settings, strategies as st

from course.llm.planning import fill_arguments
from lesson_support.injection.data import load_tools
from lesson_support.skills.harness import core_tools
from lesson_support.skills.catalogue import tool_catalogue
from lesson_support.cache_experiment.script import TOOLS as CACHE_TOOLS

READ_PDF = {"type": "function", "function": {"name": "read_pdf", "description": "Read a PDF file.",
            "parameters": {"type": "object", "properties": {
                "path": {"type": "string", "description": "The file's path."},
                "pages": {"type": "array", "items": {"type": "integer"}, "description": "Pages to read."}},
                "required": ["path"]}}}


def course_tools() -> list[dict]:
    return [READ_PDF, *load_tools(), *core_tools(), *tool_catalogue(), *CACHE_TOOLS]


def valid(tool: dict, args: dict) -> bool:
    schema = tool["function"].get("parameters") or {"type": "object"}
    return jsonschema.Draft202012Validator(schema).is_valid(args)


def test_an_array_parameter_is_never_given_the_tools_name():
    args = fill_arguments(READ_PDF, "Use `read_pdf` to read report.pdf")
    assert args == {"path": "report.pdf"}


REQUESTS = st.sampled_from(["Use `read_pdf` on docs/a.pdf pages 3", "What's the weather in Vancouver?",
                            "search for 'zlib cross compile' in notes", "run `make test` now",
                            "fetch https://example.com/x and summarise", "list 5 files in ./src", "",
                            "call load_skill then web_search", "是否需要重新编译？"])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(REQUESTS, st.text(max_size=40))
def test_every_filled_call_validates_against_its_schema(request, noise):
    for tool in course_tools():
        for text in (request, request + " " + noise, tool["function"]["name"] + " " + request):
            args = fill_arguments(tool, text)
            assert valid(tool, args), (tool["function"]["name"], text, args)
