"""Test helper: store a cell written as the JSON dict of docs/schema.md."""
from cryptobench.records import Cell


def save_cell_at(store, run_id: int, seq: int, cell: dict) -> None:
    store.save_cell(run_id, Cell.from_json({**cell, "seq": seq}))
