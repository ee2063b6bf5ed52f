"""The ``shell`` tool of ``--tau2-retrieval terminal_use``: commands over the documents in a
bubblewrap sandbox.

The documents are exported once per process as ``<id>.md`` files (``# <title>`` then the
content) with an ``INDEX.md`` (upstream's layout), into a temporary folder that the sandbox
mounts read-only as its working directory ``/kb`` (``terminal_use_write``: a per-scenario
copy, mounted read-write). The sandbox (``bwrap``) sees nothing else of
the machine but the system's programs (``/usr`` read-only): no network (all namespaces
unshared), no home, an empty ``/tmp``, a clean environment; each command has a time limit and
its output is cut at a size limit. Where ``bwrap`` is missing or cannot start a sandbox, the
configuration is refused with one line: there is never an unsandboxed shell.

Why bubblewrap: it is the namespace sandbox that upstream's sandbox runtime itself drives on
Linux, a single Debian package, and it needs no daemon (``scripts/install-sandbox.sh``).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import BankTool, schema, text
from pytest_tau2.domains.tau2_banking_knowledge.documents import documents

TIME_LIMIT_S = 30.0
OUTPUT_LIMIT = 20_000
"""Characters of a command's output the agent gets back (the rest is cut, and it is told)."""


def safe_name(doc_id: str) -> str:
    name = doc_id.replace("/", "_").replace("\\", "_").replace("..", "_")
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:255]


@functools.cache
def exported(folder: Path) -> Path:
    """The documents of ``folder`` as markdown files in a private temporary folder (once per process)."""
    target = Path(tempfile.mkdtemp(prefix="tau2-kb-"))
    atexit.register(shutil.rmtree, target, True)
    docs = documents(folder)
    for doc in docs:
        (target / f"{safe_name(doc.id)}.md").write_text(f"# {doc.title}\n\n{doc.content}", encoding="utf-8")
    lines = ["# Knowledge Base Index\n\n", f"**Total documents:** {len(docs)}\n\n", "## Documents\n\n"]
    lines += [f"- **{safe_name(doc.id)}.md** - {doc.title}\n" for doc in sorted(docs, key=lambda d: d.id)]
    (target / "INDEX.md").write_text("".join(lines), encoding="utf-8")
    for path in [target, *target.iterdir()]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    return target


def bwrap_command(kb: Path, command: str, writable: bool = False) -> list[str]:
    args = ["bwrap", "--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += [
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind" if writable else "--ro-bind", str(kb), "/kb",
        "--chdir", "/kb",
        "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
        "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/kb", "--setenv", "LANG", "C.UTF-8",
        "/bin/sh", "-c", command,
    ]  # fmt: skip
    return args


def run(kb: Path, command: str, time_limit: float = TIME_LIMIT_S, writable: bool = False) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``command`` run in the sandbox; 124 when it ran out of time.
    ``writable``: ``/kb`` is mounted read-write (a scratch copy, :class:`WritableShellTool`)."""
    try:
        done = subprocess.run(
            bwrap_command(kb, command, writable), capture_output=True, text=True, timeout=time_limit, errors="replace"
        )
    except subprocess.TimeoutExpired:
        return 124, "", f"the command did not finish within {time_limit:g} s and was stopped"
    return done.returncode, done.stdout, done.stderr


@functools.cache
def sandbox_problem() -> str | None:
    """None when a sandbox starts here, else what is missing (one line). Checked once per process."""
    if shutil.which("bwrap") is None:
        return "bwrap (bubblewrap) is not installed: apt-get install bubblewrap ripgrep (scripts/install-sandbox.sh)"
    probe = Path(tempfile.mkdtemp(prefix="tau2-kb-probe-"))
    try:
        code, _, err = run(probe, "true", time_limit=10)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if code != 0:
        reason = " ".join(err.split())[:200] or f"exit code {code}"
        return f"bwrap cannot start a sandbox here ({reason})"
    return None


def answer(command: str, code: int, out: str, err: str) -> str:
    """What the agent sees (upstream's shapes: grep's "no match" is not an error)."""
    if code != 0:
        if code == 1 and "grep" in command and not err:
            return "No matches found."
        text = f"Error (exit code {code}): {err}" if err else f"Command failed with exit code {code}"
    else:
        text = out or "(no output)"
    if len(text) > OUTPUT_LIMIT:
        text = text[:OUTPUT_LIMIT] + f"\n[output cut at {OUTPUT_LIMIT} characters of {len(text)}]"
    return text


class ShellTool(BankTool):
    name = "shell"
    description = (
        "Run a shell command in the knowledge base folder (read-only): ls, cat, grep, rg, head, tail, find, wc, "
        "awk, sed... Start with `cat INDEX.md`."
    )
    parameters = schema(["command"], command=text("The command, e.g. \"grep -ril 'credit card' .\" or 'cat INDEX.md'."))
    slow = True  # a subprocess of up to TIME_LIMIT_S: off the event loop

    def run(self, command: str) -> str:
        kb = exported(Path(str(self.state["documents_dir"])))
        return answer(command, *run(kb, command))


SCRATCH = "kb_scratch_dir"
"""The state key of a scenario's writable copy of the documents (``terminal_use_write``)."""


def scratch_copy(folder: Path) -> Path:
    """A fresh, writable copy of the exported documents, removed when the process ends."""
    target = Path(tempfile.mkdtemp(prefix="tau2-kb-rw-"))
    atexit.register(shutil.rmtree, target, True)
    for path in exported(folder).iterdir():
        shutil.copyfile(path, target / path.name)  # copyfile: the copies are the umask's, writable
    return target


class WritableShellTool(ShellTool):
    """``shell`` of ``terminal_use_write``: the same sandbox over a copy of the documents of this
    scenario's own, mounted read-write (notes and edits persist for the conversation, never
    reach the real documents or another scenario)."""

    description = (
        "Run a shell command in the knowledge base folder (a writable working copy): ls, cat, grep, rg, head, "
        "tail, find, wc, awk, sed, and writing files (notes, summaries). Start with `cat INDEX.md`."
    )

    def run(self, command: str) -> str:
        path = self.state.get(SCRATCH)
        if not isinstance(path, str):
            path = self.state[SCRATCH] = str(scratch_copy(Path(str(self.state["documents_dir"]))))
        return answer(command, *run(Path(path), command, writable=True))
