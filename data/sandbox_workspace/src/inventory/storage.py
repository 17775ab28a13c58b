"""Reading orders from CSV."""
import csv
from pathlib import Path

from .models import Order


def load_orders(path: Path) -> list[Order]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        return [
            Order(int(r["order_id"]), r["customer"], r["region"], float(r["amount"]), r["status"])
            for r in rows
        ]


def open_orders(path: Path) -> list[Order]:
    return [order for order in load_orders(path) if order.is_open()]
