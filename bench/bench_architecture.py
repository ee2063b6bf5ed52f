"""The package's shape, side by side with another checkout (issue 23's numbers).

For each tree: modules at the package root, modules importing pytest/_pytest/xdist, import
circles counting ``if TYPE_CHECKING:`` imports (and without them), the share of function
signatures that mention ``Any``, and module sizes (median, p90, max lines). The measures are the
test suite's own (tests/unit/test_architecture.py, tests/unit/test_typing_budget.py), pointed at
each tree's ``pytest_tau2`` folder.

Usage:  python bench/bench_architecture.py [--baseline DIR] [--out bench/results/architecture]
        (DIR: e.g. ``git archive 4c72ed2 | tar -x -C DIR``)
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from pathlib import Path
from typing import TypedDict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.unit import test_architecture as arch  # noqa: E402
from tests.unit import test_typing_budget as typing_budget  # noqa: E402


class Shape(TypedDict):
    root_modules: list[str]
    modules: int
    pytest_importers: int
    cycles_counting_type_checking: list[list[str]]
    cycles_at_run_time: list[list[str]]
    signatures: int
    signatures_with_any: int
    any_share: float
    lines_median: float
    lines_p90: int
    lines_max: int


def shape(package: Path) -> Shape:
    arch.PACKAGE = typing_budget.PACKAGE = package  # the measures read the folder from here
    paths = sorted(package.rglob("*.py"))
    pytest_importers = [
        p
        for p in paths
        if {"pytest", "_pytest", "xdist"}
        & {t.split(".")[0] for t in arch._imports(ast.parse(p.read_text("utf-8")), arch._module_name(p), False)}
    ]
    with_any, total = typing_budget.any_share()
    sizes = sorted(len(p.read_text("utf-8").splitlines()) for p in paths)
    return Shape(
        root_modules=sorted(p.name for p in package.glob("*.py")),
        modules=len(paths),
        pytest_importers=len(pytest_importers),
        cycles_counting_type_checking=arch.cycles(arch.import_graph(type_checking=True)),
        cycles_at_run_time=arch.cycles(arch.import_graph()),
        signatures=total,
        signatures_with_any=with_any,
        any_share=round(with_any / total, 4),
        lines_median=statistics.median(sizes),
        lines_p90=sizes[int(0.9 * (len(sizes) - 1))],
        lines_max=sizes[-1],
    )


def table(rows: dict[str, Shape]) -> str:
    labels = list(rows)
    lines = ["| | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]

    def row(name: str, cell: object) -> None:
        lines.append(f"| {name} | " + " | ".join(str(c) for c in cell) + " |")  # type: ignore[attr-defined]

    row("modules at the package root", [len(r["root_modules"]) for r in rows.values()])
    row("modules", [r["modules"] for r in rows.values()])
    row("modules importing pytest/_pytest/xdist", [r["pytest_importers"] for r in rows.values()])
    row("import circles counting TYPE_CHECKING", [len(r["cycles_counting_type_checking"]) for r in rows.values()])
    row("import circles at run time", [len(r["cycles_at_run_time"]) for r in rows.values()])
    row(
        "signatures mentioning Any",
        [f"{r['signatures_with_any']} of {r['signatures']} ({r['any_share']:.1%})" for r in rows.values()],
    )
    row(
        "module lines: median / p90 / max",
        [f"{r['lines_median']} / {r['lines_p90']} / {r['lines_max']}" for r in rows.values()],
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to measure beside this one")
    parser.add_argument("--out", default=None, help="write OUT.md and OUT.json")
    opts = parser.parse_args()
    rows: dict[str, Shape] = {}
    if opts.baseline is not None:
        rows[f"baseline ({opts.baseline.name})"] = shape(opts.baseline.resolve() / "pytest_tau2")
    rows["this tree"] = shape(ROOT / "pytest_tau2")
    text = table(rows)
    for label, r in rows.items():
        for circle in r["cycles_counting_type_checking"]:
            text += f"\n{label}: circle (counting TYPE_CHECKING): {' <-> '.join(circle)}"
    print(text)
    if opts.out:
        Path(opts.out + ".md").write_text(
            "# Package shape\n\n`python bench/bench_architecture.py --baseline DIR`\n\n" + text + "\n", "utf-8"
        )
        Path(opts.out + ".json").write_text(json.dumps(rows, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
