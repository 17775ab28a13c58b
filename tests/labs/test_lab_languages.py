"""A check judges what a student's text says, not the language it is said in: a correct answer in
the Chinese edition's words passes (issue 54). The only check that reads a student's own words for
a word (lab 05's unit of a price) is run here with a Chinese message and with one that omits it."""

import pytest

from course.labs import cell_key, cell_kind, load_lab, run, solved
from course.paths import LABS_DIR

CHECK = "check-price-per-token-and-swapped-prices"
# the reference price_run, its per-token error reworded
RAISING = '''from solutions.costs import price_run as _reference

def price_run(*args, **kwargs):
    try:
        return _reference(*args, **kwargs)
    except ValueError as error:
        if "million" in str(error).lower():
            raise ValueError({message!r}) from None
        raise
'''


@pytest.mark.parametrize("message, status", [
    ("input 的价格 1.5e-07 太小：价格应按每百万 token 的美元数给出", "passed"),
    ("input 的价格 1.5e-07 太小", "failed"),     # says nothing of the unit
])
def test_lab_05_judges_the_unit_in_a_chinese_message(message, status):
    lab = load_lab(LABS_DIR / "05_prompt_caching_lab.ipynb")
    nb = solved(lab)
    for cell in nb.cells:
        if cell_kind(cell) == "exercise" and cell_key(cell) == "price_run":
            cell.source = RAISING.format(message=message)
    outcome = run(lab, nb)
    assert [r.status for r in outcome.results if r.key == CHECK] == [status]
