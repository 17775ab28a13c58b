"""The provider price table: dated, sourced rows in data/prices/providers.csv, validated as
they are read; the study guide's prices come first among the presets."""
from __future__ import annotations

import csv
from pathlib import Path

from course.paths import DATA_DIR
from solutions.costs.prices import SEED_PRICES, Prices

PRICES_CSV = DATA_DIR / "prices" / "providers.csv"


PRICE_COLUMNS = ("provider", "model", "tier", "input_usd_per_mtok", "cached_input_usd_per_mtok",
                 "cache_write_usd_per_mtok", "output_usd_per_mtok", "checked_on", "source",
                 "read_from", "notes")


def load_price_table(path=PRICES_CSV) -> list[dict]:
    """Rows of the dated, sourced price table, each with a validated `prices` entry."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(line for line in handle if not line.startswith("#"))
        missing = [c for c in PRICE_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path.name} lacks the column(s) {', '.join(missing)}")
        rows = []
        for n, row in enumerate(reader, start=2):
            label = f"{row['provider']} {row['model']}" + (f" ({row['tier']})" if row["tier"] else "")
            try:
                numbers = {k: float(row[k]) if row[k] else None for k in PRICE_COLUMNS[3:7]}
                prices = Prices(numbers["input_usd_per_mtok"], numbers["cached_input_usd_per_mtok"],
                                numbers["output_usd_per_mtok"] or 0.0,
                                numbers["cache_write_usd_per_mtok"], label)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path.name}, row for {label}: {exc}") from None
            if not row["checked_on"] or not row["source"]:
                raise ValueError(f"{path.name}, row for {label}: every price needs the date it "
                                 f"was checked and its source")
            rows.append({**row, "label": label, "prices": prices})
    return rows


def provider_presets(path=PRICES_CSV) -> dict[str, Prices]:
    """{label: Prices}, in the table's order; the study guide's prices come first."""
    presets = {SEED_PRICES.name: SEED_PRICES}
    presets.update((row["label"], row["prices"]) for row in load_price_table(path))
    return presets
