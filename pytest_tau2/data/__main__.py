"""Command line: ``python -m pytest_tau2.data fetch|verify``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_tau2.data.fetch import (
    ENV_DATA_URL,
    fetch,
    files_for_domains,
    format_progress,
    resolve_base_url,
)
from pytest_tau2.data.manifest import DOMAIN_FILES, PIN_COMMIT, PIN_SOURCE
from pytest_tau2.data.resolve import (
    ENV_DATA_DIR,
    default_cache_dir,
    resolve_data_dir,
    resolve_data_dir_with_source,
    verify,
)
from pytest_tau2.errors import DataError

_SOURCE_WORDS = {
    "explicit": "from --data-dir",
    "env": f"from ${ENV_DATA_DIR}",
    "cache": "the user cache",
}


def build_parser(prog: str = "python -m pytest_tau2.data") -> argparse.ArgumentParser:
    """Return the argument parser for both subcommands."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=f"Download or check the tau2 data pinned at {PIN_SOURCE}@{PIN_COMMIT[:12]}. "
        "(`pytest-tau2 data view --from CHECKOUT` derives the tau2 view file from upstream's source.)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    domains = sorted(DOMAIN_FILES)

    get = commands.add_parser("fetch", help="download the pinned files (skips those already valid)")
    get.add_argument("--dest", type=Path, default=None, help=f"target folder (default: {default_cache_dir()})")
    get.add_argument(
        "--base-url",
        default=None,
        help=f"mirror to download from, files at BASE/tau2/... (default: ${ENV_DATA_URL}, else upstream)",
    )
    get.add_argument(
        "--domain",
        action="append",
        choices=domains,
        default=None,
        help="only this domain's run-time files (repeatable; default: every pinned file)",
    )
    get.add_argument("--quiet", action="store_true", help="print failures and the summary only")

    check = commands.add_parser("verify", help="check the data folder against the pinned checksums")
    check.add_argument("--data-dir", default=None, help=f"folder holding tau2/ (default: ${ENV_DATA_DIR}, then cache)")
    check.add_argument("--domain", action="append", choices=domains, default=None, help="repeatable; default: all")
    check.add_argument("--allow-unpinned", action="store_true", help="accept changed files (missing ones still fail)")
    return parser


def run_fetch(args: argparse.Namespace) -> int:
    """Run ``fetch``; return the exit code (0 when every file is valid)."""
    dest: Path = (args.dest if args.dest is not None else default_cache_dir()).expanduser().absolute()
    base_url = resolve_base_url(args.base_url)
    files = files_for_domains(args.domain)
    print(f"fetching {len(files)} file(s) from {base_url} into {dest}", file=sys.stderr)
    report = fetch(dest, base_url, files, progress=None if args.quiet else _to_stderr)
    if args.quiet:
        for index, result in enumerate(report.results, start=1):
            if result.status == "failed":
                _to_stderr(format_progress(index, len(report.results), result))
    print(("done: " if report.ok else "FAILED: ") + report.summary(), file=sys.stderr)
    if report.ok and resolve_data_dir(None) != dest:
        # Resolution would not find this folder on its own; say how to point at it.
        print(f"use it with {ENV_DATA_DIR}={dest} or --tau2-data-dir={dest}", file=sys.stderr)
    return 0 if report.ok else 1


def run_verify(args: argparse.Namespace) -> int:
    """Run ``verify``; print one status line per domain; return the exit code."""
    root, source = resolve_data_dir_with_source(args.data_dir)
    if root is None:
        # Same message for every domain: say it once.
        try:
            verify(None, "retail")
        except DataError as exc:
            print("data dir: none configured\n" + _indent(str(exc)))
        return 1
    print(f"data dir: {root} ({_SOURCE_WORDS[source]})")
    failed = 0
    for domain in args.domain or sorted(DOMAIN_FILES):
        try:
            pin = verify(root, domain, allow_unpinned=args.allow_unpinned)
        except DataError as exc:
            failed += 1
            print(f"{domain}: FAILED\n" + _indent(str(exc)))
            continue
        state = "ok" if pin.pinned else "ok, UNPINNED (files differ from the pin)"
        print(f"{domain}: {state} ({len(pin.files)} files)")
    return 0 if failed == 0 else 1


def main(argv: Sequence[str] | None = None, prog: str = "python -m pytest_tau2.data") -> int:
    """Entry point; returns the process exit code."""
    args = build_parser(prog).parse_args(argv)
    if args.command == "fetch":
        return run_fetch(args)
    return run_verify(args)


def _to_stderr(line: str) -> None:
    """Progress goes to stderr so stdout stays clean for piping."""
    print(line, file=sys.stderr, flush=True)


def _indent(text: str) -> str:
    """Indent a multi-line message under its domain line."""
    return "\n".join(f"    {line}" for line in text.splitlines())


if __name__ == "__main__":
    sys.exit(main())
