"""Cells for CSV meant to be opened in a spreadsheet (OWASP "CSV injection").

The research exports (:mod:`annotation.services.export.formats`) stay exact and never use this. Any CSV
the app offers for spreadsheets must pass every cell through :func:`spreadsheet_cell` (a repository test,
``test_hardening_no_unescaped_csv_output``, checks that a module writing CSV does).

    >>> spreadsheet_cell("=SUM(A1:A9)"), spreadsheet_cell("-3 dB"), spreadsheet_cell(-3), spreadsheet_cell("bees")
    ("'=SUM(A1:A9)", "'-3 dB", -3, 'bees')
"""
from __future__ import annotations

#: A cell starting with one of these is read as a formula (or a formula's start) by spreadsheets.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value):
    """``value`` with a ``'`` in front when it is text a spreadsheet would read as a formula; numbers and
    other values unchanged (a negative number is a number, not a formula)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def spreadsheet_row(values) -> list:
    """:func:`spreadsheet_cell` of each value of a row (for ``csv.writer(...).writerow``)."""
    return [spreadsheet_cell(v) for v in values]


__all__ = ["FORMULA_STARTS", "spreadsheet_cell", "spreadsheet_row"]
