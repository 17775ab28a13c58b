from inventory.models import Order
from inventory.pricing import discount, quote


def test_no_discount_below_threshold():
    assert discount(100.0) == 0.0


def test_bulk_discount():
    assert discount(1000.0) == 50.0


def test_quote_us_east_has_no_tax():
    assert quote(Order(1, "acme", "us-east", 100.0)) == 100.0
