"""Cells for CSV meant for spreadsheets (``export/spreadsheet.py``, OWASP "CSV injection"): text a spreadsheet
would read as a formula gets a ``'`` in front; numbers and other text are unchanged."""
from __future__ import annotations

import csv
import io

import pytest

from annotation.services.export.spreadsheet import FORMULA_STARTS, spreadsheet_cell, spreadsheet_row


@pytest.mark.parametrize("text", ["=1+2", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", "-3 dB"])
def test_text_starting_like_a_formula_is_escaped(text):
    assert spreadsheet_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["Bees make honey.", "", "a=b", " =1", -2, 0.5, None, True])
def test_other_text_numbers_and_values_are_unchanged(value):
    assert spreadsheet_cell(value) == value


def test_a_row_escapes_each_cell_and_stays_one_csv_row():
    out = io.StringIO()
    csv.writer(out).writerow(spreadsheet_row(["=HYPERLINK(\"x\")", 0.5, "ok", "@me"]))
    assert out.getvalue().startswith("\"'=HYPERLINK(") and out.getvalue().endswith(",0.5,ok,'@me\r\n")
    assert set(FORMULA_STARTS) == {"=", "+", "-", "@", "\t", "\r"}
