"""Inventory reconciliation: compare a warehouse export with the order ledger."""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import logging
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Iterator

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class StockLine:
    sku: str
    location: str
    quantity: int
    counted_at: dt.datetime


@dataclasses.dataclass
class Discrepancy:
    sku: str
    expected: int
    counted: int
    locations: list[str] = dataclasses.field(default_factory=list)

    @property
    def delta(self) -> int:
        return self.counted - self.expected

    def __str__(self) -> str:
        sign = "+" if self.delta > 0 else ""
        return f"{self.sku}: expected {self.expected}, counted {self.counted} ({sign}{self.delta})"


def read_stock(path: Path) -> Iterator[StockLine]:
    with path.open(newline="", encoding="utf-8") as handle:
        for row_number, row in enumerate(csv.DictReader(handle), start=2):
            try:
                yield StockLine(
                    sku=row["sku"].strip().upper(),
                    location=row["location"].strip(),
                    quantity=int(row["qty"]),
                    counted_at=dt.datetime.fromisoformat(row["counted_at"]),
                )
            except (KeyError, ValueError) as error:
                log.warning("skipping %s line %d: %s", path.name, row_number, error)


def expected_quantities(ledger: Iterable[dict[str, str]]) -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    for entry in ledger:
        sign = -1 if entry["kind"] == "shipment" else 1
        totals[entry["sku"].upper()] += sign * int(entry["quantity"])
    return dict(totals)


def reconcile(stock: Iterable[StockLine], expected: dict[str, int], tolerance: int = 0) -> list[Discrepancy]:
    counted: dict[str, int] = defaultdict(int)
    where: dict[str, list[str]] = defaultdict(list)
    for line in stock:
        counted[line.sku] += line.quantity
        where[line.sku].append(line.location)

    report = []
    for sku in sorted(set(counted) | set(expected)):
        have, want = counted.get(sku, 0), expected.get(sku, 0)
        if abs(have - want) > tolerance:
            report.append(Discrepancy(sku, want, have, sorted(set(where.get(sku, [])))))
    return report


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("stock", type=Path)
    parser.add_argument("ledger", type=Path)
    parser.add_argument("--tolerance", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print machine-readable output")
    args = parser.parse_args(argv)

    with args.ledger.open(encoding="utf-8") as handle:
        expected = expected_quantities(csv.DictReader(handle))
    problems = reconcile(read_stock(args.stock), expected, args.tolerance)

    if args.json:
        print(json.dumps([dataclasses.asdict(p) | {"delta": p.delta} for p in problems], indent=2))
    else:
        for problem in problems:
            print(problem)
        print(f"{len(problems)} discrepancies")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
