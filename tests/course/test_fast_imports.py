"""course.fast_imports: nbformat imported without building jsonschema's IRI parser, and
validation unchanged (issue 35 item 3). Each check runs in a fresh interpreter, since this
one may have imported jsonschema already."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_nbformat_imports_and_validates_without_building_the_parser():
    out = run("import sys\n"
              "from course.fast_imports import import_nbformat\n"
              "nbformat = import_nbformat()\n"
              "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1 + 1')])\n"
              "nbformat.validate(nb)\n"
              "bad = nbformat.v4.new_notebook(); bad.cells.append({'cell_type': 'code'})\n"
              "try:\n"
              "    nbformat.validate(bad)\n"
              "except nbformat.ValidationError:\n"
              "    print('invalid refused')\n"
              "print('rfc3987_syntax.syntax_helpers' in sys.modules)\n")
    assert out.splitlines() == ["invalid refused", "False"]


def test_an_iri_format_check_still_uses_the_real_parser():
    out = run("import sys\n"
              "import course.fast_imports\n"
              "import jsonschema\n"
              "check = jsonschema.FormatChecker()\n"
              "print(check.conforms('http://例え.jp/パス', 'iri'), "
              "check.conforms('not an iri', 'iri'), check.conforms('a b', 'iri-reference'))\n"
              "print(type(sys.modules['rfc3987_syntax']).__name__)\n")
    assert out.splitlines() == ["True False False", "module"]


def test_any_other_name_of_the_package_loads_the_real_one():
    out = run("import sys\n"
              "import course.fast_imports, jsonschema\n"
              "import rfc3987_syntax as stand_in\n"
              "terms = stand_in.RFC3987_SYNTAX_TERMS\n"
              "real = sys.modules['rfc3987_syntax']\n"
              "print(real is not stand_in, terms is real.RFC3987_SYNTAX_TERMS, "
              "real.is_valid_syntax('iri', 'http://a/b'))\n")
    assert out == "True True True"


def test_after_jsonschema_it_changes_nothing():
    out = run("import jsonschema, sys\n"
              "from course.fast_imports import defer_iri_parser\n"
              "print(defer_iri_parser(), type(sys.modules['rfc3987_syntax']).__name__)\n")
    assert out == "False module"
