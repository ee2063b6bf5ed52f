"""How much several judges agree: raw agreement, Cohen's kappa (two judges), Fleiss' kappa (all).

Plain labels in, plain numbers out. A *rating table* is one row per rated item (an NL assertion
of one trial), one label per judge in judge order (``True``/``False`` for met/not met; any
hashable label works), ``None`` where a judge gave no label.

- **Agreement** of two judges: the share of the items both rated on which they gave the same label.
- **Cohen's kappa** (Cohen 1960) of two judges: ``(p_o - p_e) / (1 - p_e)``, ``p_o`` the observed
  agreement, ``p_e`` the agreement expected by chance from each judge's *own* label shares
  (``sum_k p1(k) * p2(k)``). 1 is perfect agreement, 0 what chance gives, below 0 worse.
- **Fleiss' kappa** (Fleiss 1971) of m >= 2 judges over the items every judge rated:
  ``(P - P_e) / (1 - P_e)``, ``P`` the mean over items of the share of agreeing judge pairs,
  ``P_e = sum_k p(k)^2`` with ``p(k)`` the share of all labels that are ``k`` (pooled over judges;
  with two judges it is Scott's pi, not Cohen's kappa).

A kappa is *undefined* (``None``) when chance agreement is 1: every label given was the same, so
agreement says nothing about the judges (sklearn's ``cohen_kappa_score`` gives NaN there).
Written from the formulas above, not from a library: statsmodels and scikit-learn hold the same
few lines behind a dependency of tens of megabytes (docs/rescoring.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations

Label = Hashable
Row = Sequence[Label | None]


@dataclass(frozen=True)
class PairAgreement:
    """Two judges (their positions in the rating table) over the items both rated."""

    first: int
    second: int
    items: int
    agreement: float | None
    """The share of items with the same label (None: no item rated by both)."""
    kappa: float | None
    """Cohen's kappa (None: no item, or undefined because chance agreement is 1)."""


@dataclass(frozen=True)
class Agreement:
    """Every pair of judges, and Fleiss' kappa over the items every judge rated."""

    judges: int
    items: int
    """Items every judge rated (Fleiss' kappa is over these)."""
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: float | None
    """None with no complete item, or undefined (chance agreement 1)."""
    unanimous: int
    """Complete items on which every judge gave the same label."""


def _check(rows: Sequence[Row]) -> int:
    widths = {len(row) for row in rows}
    if len(widths) > 1:
        raise ValueError(f"every row of a rating table needs one label per judge, got rows of {sorted(widths)} labels")
    return widths.pop() if widths else 0


def cohen_kappa(first: Sequence[Label], second: Sequence[Label]) -> float | None:
    """Cohen's kappa of two judges' labels of the same items (None when undefined, see module doc)."""
    if len(first) != len(second):
        raise ValueError(f"the two judges rated {len(first)} and {len(second)} items; pair their labels item by item")
    n = len(first)
    if n == 0:
        return None
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    shares_a, shares_b = Counter(first), Counter(second)
    chance = sum(shares_a[label] * shares_b[label] for label in shares_a) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def fleiss_kappa(rows: Sequence[Sequence[Label]]) -> float | None:
    """Fleiss' kappa of items each rated by the same number (>= 2) of judges (None when undefined)."""
    width = _check(rows)
    if not rows:
        return None
    if width < 2:
        raise ValueError("Fleiss' kappa needs at least two judges per item")
    pooled: Counter[Label] = Counter()
    agreeing = 0.0
    for row in rows:
        counts = Counter(row)
        pooled.update(counts)
        agreeing += (sum(c * c for c in counts.values()) - width) / (width * (width - 1))
    mean_agreeing = agreeing / len(rows)
    total = len(rows) * width
    chance = sum((count / total) ** 2 for count in pooled.values())
    if chance >= 1.0:
        return None
    return (mean_agreeing - chance) / (1.0 - chance)


def agreement(rows: Sequence[Row]) -> Agreement:
    """Pairwise agreement and Cohen's kappa of every pair of judges, Fleiss' kappa of all of them."""
    width = _check(rows)
    pairs = []
    for i, j in combinations(range(width), 2):
        both = [(row[i], row[j]) for row in rows if row[i] is not None and row[j] is not None]
        same = sum(1 for a, b in both if a == b)
        pairs.append(
            PairAgreement(
                i,
                j,
                len(both),
                same / len(both) if both else None,
                cohen_kappa([a for a, _ in both], [b for _, b in both]),
            )
        )
    complete = [[label for label in row if label is not None] for row in rows if all(lab is not None for lab in row)]
    unanimous = sum(1 for row in complete if len(set(row)) == 1)
    fleiss = fleiss_kappa(complete) if width >= 2 else None
    return Agreement(width, len(complete), tuple(pairs), fleiss, unanimous)
