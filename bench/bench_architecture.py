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
    stash_keys: int
    get_plugin_lookups: int
    settings_getattr_fstrings: int
    participant_table_imports: int
    package_knots: list[list[str]]
    private_foreign_uses_outside_compat: int
    modules_over_500_lines: int


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
    texts = {p: p.read_text("utf-8") for p in paths}
    graph = arch.import_graph(type_checking=True)
    packages: dict[str, set[str]] = {}
    for source, targets in graph.items():
        first = arch._first_level(source) if hasattr(arch, "_first_level") else source.split(".")[1]
        packages.setdefault(first, set()).update(
            t.split(".")[1] if t.count(".") else ""
            for t in targets
            if (t.split(".")[1] if t.count(".") else "") != first
        )
    table_path = package / "run" / "participants.py"
    table_name = "pytest_tau2.run.participants"
    imported = arch._imports(ast.parse(table_path.read_text("utf-8")), table_name, False, type_checking=True)
    modules = {arch._module_name(p) for p in paths}
    ours = {t for t in imported if t in modules and t != table_name}
    ours -= {t for t in ours if any(o.startswith(t + ".") for o in ours)}
    classes = {n.name for t in texts.values() for n in ast.walk(ast.parse(t)) if isinstance(n, ast.ClassDef)}
    private = sum(
        len(arch.foreign_private_uses(ast.parse(t), classes))
        for p, t in texts.items()
        if not p.name.startswith("compat")
    )
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
        stash_keys=sum(t.count("StashKey[") for t in texts.values()),
        get_plugin_lookups=sum(t.count("get_plugin(") for t in texts.values()),
        settings_getattr_fstrings=sum(t.count('getattr(settings, f"') for t in texts.values()),
        participant_table_imports=len(ours),
        package_knots=arch.cycles(packages),
        private_foreign_uses_outside_compat=private,
        modules_over_500_lines=sum(1 for size in sizes if size > 500),
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
    row("modules over 500 lines", [r["modules_over_500_lines"] for r in rows.values()])
    row("StashKeys", [r["stash_keys"] for r in rows.values()])
    row("get_plugin( lookups", [r["get_plugin_lookups"] for r in rows.values()])
    row('getattr(settings, f"...") reads', [r["settings_getattr_fstrings"] for r in rows.values()])
    row("package modules run/participants.py imports", [r["participant_table_imports"] for r in rows.values()])
    row("knots among first-level packages", [len(r["package_knots"]) for r in rows.values()])
    row(
        "private pytest/xdist/execnet/litellm names outside compat*",
        [r["private_foreign_uses_outside_compat"] for r in rows.values()],
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
