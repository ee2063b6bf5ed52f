"""The ATM deposit images the deposit-images tool knows (upstream's data: three Rho-Bank ATM
deposits a task may ask about). Transaction id -> (ATM, envelope scan, verification notes)."""

from __future__ import annotations


def _scan(envelope: str, time: str, location: str | None, items: str, totals: str, machine: str, quality: bool) -> str:
    lines = ["=== ATM DEPOSIT ENVELOPE SCAN ===", f"Envelope ID: {envelope}", f"Deposit Time: {time}"]
    if location:
        lines.append(f"ATM Location: {location}")
    lines += ["", "--- ENVELOPE CONTENTS ---", items, "", "--- DEPOSIT SUMMARY ---", totals, ""]
    lines += ["--- MACHINE RECORD ---", machine]
    return "\n" + "\n".join(lines) + "\n"


def _check_and_cash(number: str, bank: str, payee: str, dated: str) -> str:
    return (
        f"Item 1: Personal Check\n  - Check Number: {number}\n  - Drawn On: {bank}\n  - Payee: {payee}\n"
        '  - Amount: $875.00\n  - Memo: "October rent refund"\n  - Signature: Present and legible\n'
        f"  - Date on Check: {dated}\n\nItem 2: Cash\n  - Denomination breakdown:\n    * 2 x $100 bills = $200.00\n"
        "    * 3 x $20 bills = $60.00\n  - Total Cash: $260.00"
    )


_TOTALS = "Check Total: $875.00\nCash Total: $260.00\nGRAND TOTAL: $1,135.00"
_SHORT = "Amount Recorded by ATM: $385.00\nDISCREPANCY DETECTED: $750.00 difference"


def _quality(payee: str) -> str:
    return (
        "\n\n--- IMAGE QUALITY ---\nEnvelope scan: CLEAR\nCheck front: CLEAR\n"
        f'Check back (endorsement): CLEAR - endorsed "For Deposit Only - {payee}"\n'
        "Cash image: CLEAR - bills visible and countable"
    )


_CONFIRMED = (
    "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. Discrepancy of "
    "$750.00 confirmed via image review."
)

ATM_IMAGES: dict[str, tuple[str, str, str]] = {
    "btxn_834027370c20": (
        "ATM #3921",
        _scan("ENV-2025-3921-00923", "3:47 PM CST", "Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX",
              _check_and_cash("7284", "First Texas Bank", "Derek Yamamoto", "11/03/2025"), _TOTALS,
              _SHORT + _quality("Derek Yamamoto"), True).rstrip("\n") + "\n",
        _CONFIRMED,
    ),
    "btxn_test_deposit_001": (
        "ATM #3921",
        _scan("ENV-2025-3921-00847", "2:34 PM EST", "Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR",
              _check_and_cash("4821", "First National Bank", "Linda Patterson", "11/05/2025"), _TOTALS,
              _SHORT + _quality("Linda Patterson"), True).rstrip("\n") + "\n",
        _CONFIRMED,
    ),
    "btxn_test_atm_dep_partial": (
        "ATM #5847",
        _scan("ENV-2025-5847-00293", "10:15 AM EST", None, "Item 1: Personal Check\n  - Check Number: 7392\n"
              "  - Amount: $500.00", "Check Total: $500.00\nCash Total: $0.00\nGRAND TOTAL: $500.00",
              "Amount Recorded by ATM: $500.00\nNo discrepancy detected.", False),
        "Images confirm deposit matches recorded amount. No discrepancy found.",
    ),
}  # fmt: skip
