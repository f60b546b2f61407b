"""Price age: every plan says when its oldest decisive price was dated, and flags every part priced more than
12 months before the plan's date, in the terminal, the CSV, the JSON and the Quote sheet."""

from __future__ import annotations

import csv
import datetime as dt
import io

import openpyxl
import pytest
from support import CAL, scenario, tiny

from planner.answers import buy as purchase
from planner.catalog import dates
from planner.report import plan_text
from planner.report.excel import PlanContext, write_plan


@pytest.mark.parametrize(
    ("text", "as_of", "months"),
    [
        ("2025", dt.date(2026, 12, 1), 23),  # a year alone is read as its first day: as old as it may be
        ("2025-12", dt.date(2026, 12, 1), 12),
        ("2025-12-02", dt.date(2026, 12, 1), 11),  # one day short of 12 whole months
        ("2026-12-01", dt.date(2026, 12, 1), 0),
        ("2027-01", dt.date(2026, 12, 1), 0),  # dated after the plan: not old
    ],
)
def test_months_old(text, as_of, months):
    assert dates.months_old(text, as_of) == months
    assert dates.is_stale(text, as_of, 12) == (months > 12)


def _plan(as_of: str):
    return purchase.run(tiny(), scenario(as_of=as_of), CAL, alternatives=0)


def test_a_current_plan_names_its_oldest_decisive_price_and_flags_nothing():
    plan = _plan("2026-06-01")  # the tiny catalog's rows are dated 2026: five months old
    assert plan.prices.as_of == "2026-06-01" and not plan.prices.stale
    assert not any(line.stale for line in plan.bom)
    oldest = plan.prices.oldest_decisive
    assert oldest.price_date == "2026" and oldest.share_of_capex >= 0.01
    assert "oldest decisive price 2026" in plan_text.render(plan)
    assert "none older than 12 months as of 2026-06-01" in plan_text.render(plan)


def test_old_prices_are_flagged_everywhere(tmp_path):
    plan = _plan("2028-03-01")  # 2026 -> 26 months
    capex = plan.cost.capex_usd
    priced = [line for line in plan.bom if line.extended_usd > 0]
    assert priced and all(line.stale for line in priced)
    assert plan.prices.stale_share_of_capex == pytest.approx(1.0)
    assert sum(s.extended_usd for s in plan.prices.stale) == pytest.approx(capex)
    assert all(s.months_old == 26 for s in plan.prices.stale)
    text = plan_text.render(plan)
    assert "priced more than 12 months before 2028-03-01 (100% of capex)" in text and "2026 (old)" in text
    rows = list(csv.DictReader(io.StringIO(plan_text.bom_csv(plan))))
    assert {r["stale"] for r in rows if r["category"] not in ("not priced", "total") and float(r["extended_usd"])}
    assert {r["price_date"] for r in rows if r["category"] == "servers"} == {"2026"}
    path = tmp_path / "plan.xlsx"
    context = PlanContext(scenario=scenario(as_of="2028-03-01").model_dump(mode="json"), calibration=CAL,
                          catalog_files={})  # fmt: skip
    write_plan(plan, context, path)
    quote = openpyxl.load_workbook(path)["Quote"]
    headers = [c.value for c in next(r for r in quote.iter_rows() if r[0].value == "Category")]
    assert headers[8:10] == ["Confidence", "Price date"]
    dated = [r[9].value for r in quote.iter_rows() if r[0].value == "servers"]
    assert dated == ["2026 (older than 12 months)"]
