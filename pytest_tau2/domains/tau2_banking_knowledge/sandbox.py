"""The ``shell`` tool of ``--tau2-retrieval terminal_use``: commands over the documents in a
bubblewrap sandbox.

The documents are exported once per process as ``<id>.md`` files (``# <title>`` then the
content) with an ``INDEX.md`` (upstream's layout), into a temporary folder that the sandbox
mounts read-only as its working directory ``/kb`` (``terminal_use_write``: a per-scenario
copy, mounted read-write). The sandbox (``bwrap``) sees nothing else of
the machine but the system's programs (``/usr`` read-only): no network (all namespaces
unshared), no home, an empty ``/tmp``, a clean environment, no capabilities even when the runner
is root (``--cap-drop ALL``, no user namespace inside it: nothing can be mounted). Every command is
bounded (docs/faults.md, "Nothing runs away"): in time (:data:`TIME_LIMIT_S`, then its whole
process namespace is killed; CPU seconds alike), processes (:data:`PROCESSES`), disk (``/tmp`` and
the writable copy are tmpfs of :data:`SCRATCH_BYTES`, one file at most that size) and the runner's
memory (its output is read as it comes and only the first :data:`KEEP_BYTES` of each stream kept).
Where ``bwrap`` is missing or cannot start a sandbox, the configuration is refused with one line:
there is never an unsandboxed shell.

Why bubblewrap: it is the namespace sandbox that upstream's sandbox runtime itself drives on
Linux, a single Debian package, and it needs no daemon (``scripts/install-sandbox.sh``).
"""

from __future__ import annotations

import atexit
import functools
import io
import os
import selectors
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import BankTool, schema, text
from pytest_tau2.domains.tau2_banking_knowledge.documents import documents

TIME_LIMIT_S = 30.0
OUTPUT_LIMIT = 20_000
"""Characters of a command's output the agent gets back (the rest is cut, and it is told)."""
KEEP_BYTES = 4 * OUTPUT_LIMIT
"""Bytes of each of a command's streams the runner keeps (UTF-8: at least OUTPUT_LIMIT characters);
the rest is read and counted, never held."""
SCRATCH_BYTES = 64 * 1024 * 1024
"""Size of the sandbox's ``/tmp`` and of ``terminal_use_write``'s working copy (tmpfs each), and the
largest file a command may write."""
PROCESSES = 256
"""Processes a command may run at once (``ulimit -p``; root's own count is exempt from it, so there
the process namespace and the time limit bound it)."""


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


def bwrap_command(kb: Path, command: str, writable: bool = False, out_fd: int | None = None) -> list[str]:
    """The sandbox's command line. ``writable``: ``/kb`` is a tmpfs of :data:`SCRATCH_BYTES` filled
    from ``kb`` (read-only at ``/.in``), and after the command a tar of it is written to ``out_fd``
    (what the runner keeps for the next command)."""
    args = ["bwrap", "--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp"]
    if writable:
        args += ["--ro-bind", str(kb), "/.in", "--size", str(SCRATCH_BYTES), "--tmpfs", "/kb"]
    else:
        args += ["--ro-bind", str(kb), "/kb"]
    limits = (
        f"ulimit -t {int(TIME_LIMIT_S) + 1}; ulimit -f {SCRATCH_BYTES // 512}; ulimit -c 0; "
        f"ulimit -p {PROCESSES} 2>/dev/null"
    )
    if writable:
        script = (
            f'cp -a /.in/. /kb/ 2>/dev/null; cd /kb || exit 125; ({limits}; /bin/sh -c "$1"); code=$?; '
            f"tar -C /kb -cf /proc/self/fd/{out_fd} . 2>/dev/null; exit $code"
        )
    else:
        script = f'cd /kb || exit 125; {limits}; exec /bin/sh -c "$1"'
    args += [
        "--chdir", "/",
        "--unshare-all", *_no_user_namespaces(), "--cap-drop", "ALL",
        "--die-with-parent", "--new-session", "--clearenv",
        "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/kb", "--setenv", "LANG", "C.UTF-8",
        "/bin/sh", "-c", script, "sh", command,
    ]  # fmt: skip
    return args


@functools.cache
def _no_user_namespaces() -> tuple[str, ...]:
    """``--disable-userns`` where this bwrap has it (0.8 and later): no user namespace can be made
    inside the sandbox, so nothing can be mounted there even by a process that was root."""
    try:
        shown = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    return ("--unshare-user", "--disable-userns") if "--disable-userns" in shown.stdout + shown.stderr else ()


class _Kept:
    """The first ``limit`` bytes of a stream, and how many it had in all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]


def run(kb: Path, command: str, time_limit: float = TIME_LIMIT_S, writable: bool = False) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``command`` run in the sandbox; 124 when it ran out of time.
    Each stream is read as it comes and cut at :data:`KEEP_BYTES` (a cut stream ends with a line
    saying how many bytes it had). ``writable``: ``kb`` is the scenario's working copy; what the
    command leaves in ``/kb`` replaces it (not when it ran out of time)."""
    read_fd = write_fd = None
    if writable:
        read_fd, write_fd = os.pipe()
    try:
        process = subprocess.Popen(
            bwrap_command(kb, command, writable, write_fd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd,) if write_fd is not None else (),
            start_new_session=True,
        )
    except OSError:
        for fd in (read_fd, write_fd):
            if fd is not None:
                os.close(fd)
        raise
    if write_fd is not None:
        os.close(write_fd)
    out, err, tar = _Kept(KEEP_BYTES), _Kept(KEEP_BYTES), _Kept(SCRATCH_BYTES + 1024 * 1024)
    assert process.stdout is not None and process.stderr is not None
    streams: dict[int, _Kept] = {process.stdout.fileno(): out, process.stderr.fileno(): err}
    if read_fd is not None:
        streams[read_fd] = tar
    timed_out = not _drain(streams, time.monotonic() + time_limit)
    if timed_out:
        with_group(process.pid, signal.SIGKILL)  # bwrap, and with it the sandbox's whole process namespace
    code = process.wait()
    process.stdout.close()
    process.stderr.close()
    if read_fd is not None:
        os.close(read_fd)
    if timed_out:
        return 124, "", f"the command did not finish within {time_limit:g} s and was stopped"
    if writable and tar.total <= tar.limit:
        _keep_scratch(kb, bytes(tar.data))
    return code, _text(out), _text(err)


def _drain(streams: dict[int, _Kept], deadline: float) -> bool:
    """Read every stream to its end, keeping what each keeps; False when the deadline came first."""
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _ in selector.select(min(left, 1.0)):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    streams[key.fd].add(chunk)
                else:
                    selector.unregister(key.fd)
    return True


def _text(kept: _Kept) -> str:
    text = kept.data.decode("utf-8", "replace")
    if kept.total > len(kept.data):
        text += f"\n[output cut: {kept.total} bytes in all]"
    return text


def _keep_scratch(kb: Path, tar: bytes) -> None:
    """The working copy becomes what the command left in ``/kb`` (a tar of it); kept as it was when
    the tar does not read."""
    fresh = Path(tempfile.mkdtemp(prefix="tau2-kb-rw-", dir=kb.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            if hasattr(tarfile, "data_filter"):
                archive.extractall(fresh, filter="data")
            else:  # an older Python: only plain files and folders inside the copy
                plain = [
                    m
                    for m in archive.getmembers()
                    if (m.isfile() or m.isdir()) and not m.name.startswith("/") and ".." not in Path(m.name).parts
                ]
                archive.extractall(fresh, members=plain)
    except (tarfile.TarError, OSError):
        shutil.rmtree(fresh, ignore_errors=True)
        return
    for path in kb.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    for path in fresh.iterdir():
        os.replace(path, kb / path.name)
    shutil.rmtree(fresh, ignore_errors=True)


def with_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


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
        text = text[:OUTPUT_LIMIT] + f"\n[output cut at {OUTPUT_LIMIT} characters of {len(text)} or more]"
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
