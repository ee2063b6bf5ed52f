"""banking_knowledge's ``terminal_use``: the shell tool runs in a bubblewrap sandbox over the
exported documents (read-only, nothing else of the machine, no network, time and output limits);
where the sandbox cannot start, the configuration is refused with one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources  # noqa: F401
from pytest_tau2.domains.tau2_banking_knowledge import retrieval, sandbox
from pytest_tau2.errors import SettingsError
from pytest_tau2.run import participants, seeding
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
DOCS = DATA_DIR / "tau2" / "domains" / "banking_knowledge" / "documents"
if not DOCS.is_dir():
    pytest.skip(f"no tau2 banking_knowledge data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)
needs_bwrap = pytest.mark.skipif(
    sandbox.sandbox_problem() is not None and not os.environ.get("CI"),
    reason=f"no sandbox here: {sandbox.sandbox_problem()} (scripts/install-sandbox.sh)",
)


@pytest.fixture(scope="module")
def shell() -> object:
    settings = Settings(data_dir=str(DATA_DIR), sections={"retrieval": "terminal_use"}, prompts="seed")
    scenario = all_scenarios(settings)["tau2_banking_knowledge__task_001"]().bind(settings)
    env = seeding.prepare(scenario, settings).envs["agent"]
    assert [t["function"]["name"] for t in env.schemas()][14:] == ["shell", "EndConversationTool"]
    assert "{{" not in scenario.get_agent_prompt()
    return env


@needs_bwrap
def test_the_shell_sees_the_documents_and_its_index(shell: object) -> None:
    listing = shell.call("shell", {"command": "ls | wc -l"}).content  # type: ignore[attr-defined]
    assert listing.strip() == str(len(retrieval.documents(DOCS)) + 1)
    assert shell.call("shell", {"command": "head -3 INDEX.md"}).content.startswith("# Knowledge Base Index")  # type: ignore[attr-defined]
    found = shell.call("shell", {"command": "rg -l 'provisional credit' | sort | head -1"}).content  # type: ignore[attr-defined]
    assert found.strip().endswith(".md") and found.startswith("doc_")
    first = retrieval.documents(DOCS)[0]
    shown = shell.call("shell", {"command": f"cat {sandbox.safe_name(first.id)}.md"}).content  # type: ignore[attr-defined]
    assert shown == f"# {first.title}\n\n{first.content}"
    assert shell.call("shell", {"command": "grep -l zzqqxx-none INDEX.md"}).content == "No matches found."  # type: ignore[attr-defined]


@needs_bwrap
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("touch new.md", "Read-only file system"),
        ("ls /work /root /home", "No such file or directory"),
        ("cat /etc/passwd", "No such file or directory"),
        ("cat /proc/1/cmdline | tr '\\0' ' '", "/bin/sh"),  # its own process namespace
    ],
)
def test_the_sandbox_keeps_the_machine_out(shell: object, command: str, expected: str) -> None:
    assert expected in shell.call("shell", {"command": command}).content  # type: ignore[attr-defined]


@needs_bwrap
def test_no_network_only_a_loopback_of_its_own(shell: object) -> None:
    interfaces = shell.call("shell", {"command": "tail -n +3 /proc/net/dev | cut -d: -f1"}).content  # type: ignore[attr-defined]
    assert interfaces.split() == ["lo"]


@needs_bwrap
def test_time_and_output_limits() -> None:
    kb = sandbox.exported(DOCS)
    code, _, err = sandbox.run(kb, "sleep 5", time_limit=0.5)
    assert code == 124 and "did not finish within 0.5 s" in err
    text = sandbox.answer("cat *", *sandbox.run(kb, "cat *.md"))
    assert len(text) < sandbox.OUTPUT_LIMIT + 100 and "[output cut at" in text


def test_without_bwrap_the_configuration_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox.sandbox_problem.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    try:
        with pytest.raises(SettingsError) as caught:
            participants.validate_settings(Settings(data_dir=str(DATA_DIR), sections={"retrieval": "terminal_use"}))
    finally:
        sandbox.sandbox_problem.cache_clear()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("--tau2-retrieval terminal_use needs a sandbox: bwrap (bubblewrap) is not installed")


def test_a_sandbox_that_cannot_start_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox.sandbox_problem.cache_clear()
    monkeypatch.setattr(sandbox, "run", lambda kb, command, time_limit=30.0: (1, "", "bwrap: No permissions\n"))
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/" + name)
    try:
        assert sandbox.sandbox_problem() == "bwrap cannot start a sandbox here (bwrap: No permissions)"
    finally:
        sandbox.sandbox_problem.cache_clear()


@needs_bwrap
def test_terminal_use_write_writes_to_a_scratch_copy_of_its_own() -> None:
    settings = Settings(data_dir=str(DATA_DIR), sections={"retrieval": "terminal_use_write"})
    scenario = all_scenarios(settings)["tau2_banking_knowledge__task_001"]().bind(settings)
    assert "{{" not in scenario.get_agent_prompt()
    first, second = (seeding.prepare(scenario, settings).envs["agent"] for _ in range(2))
    wrote = first.call(
        "shell", {"command": "echo noted > notes.md && sed -i 's/^# /# EDITED /' INDEX.md && cat notes.md"}
    )
    assert wrote.content.strip() == "noted" and not wrote.error
    assert first.call("shell", {"command": "head -1 INDEX.md"}).content.startswith("# EDITED")
    assert second.call("shell", {"command": "ls notes.md"}).content.startswith("Error")  # another scenario's copy
    assert second.call("shell", {"command": "head -1 INDEX.md"}).content.startswith("# Knowledge Base Index")
    assert sandbox.exported(DOCS).joinpath("INDEX.md").read_text().startswith("# Knowledge Base Index")
    assert first.call("shell", {"command": "touch /usr/x 2>&1 || echo refused"}).content.strip().endswith("refused")


def test_write_and_alltools_configurations_need_the_sandbox_too(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox.sandbox_problem.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    try:
        for name in ("terminal_use_write", "alltools", "AllTools", "alltools-qwen"):
            message = retrieval.check_retrieval(name)
            assert message is not None and "\n" not in message and "bwrap (bubblewrap) is not installed" in message
    finally:
        sandbox.sandbox_problem.cache_clear()


@needs_bwrap
def test_alltools_offers_bm25_dense_and_the_shell_with_the_dense_model_in_its_prompt() -> None:
    settings = Settings(data_dir=str(DATA_DIR), sections={"retrieval": "AllTools"}, prompts="seed")
    scenario = all_scenarios(settings)["tau2_banking_knowledge__task_001"]().bind(settings)
    env = seeding.prepare(scenario, settings).envs["agent"]
    names = [t["function"]["name"] for t in env.schemas()][14:]
    assert names == ["KB_search_bm25", "KB_search_dense", "shell", "EndConversationTool"]
    prompt = scenario.get_agent_prompt()
    assert "{{" not in prompt and "`text-embedding-3-large`" in prompt
    top3 = env.call("KB_search_bm25", {"query": "savings account interest", "k": 3}).content
    assert top3.count("   ID: doc_") == 3
    assert env.call("KB_search_bm25", {"query": "savings", "k": 0}).error


# ---- bounds: memory, disk, processes, capabilities (docs/faults.md, "Nothing runs away") --------------------


@needs_bwrap
def test_400_mb_of_output_is_streamed_and_cut_never_held(tmp_path: Path) -> None:
    """The runner reads a command's output as it comes and keeps its start: 400 MB of output keep
    the process far under 400 MB (it held all of it: 1,210 MB)."""
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pytest_tau2.domains.tau2_banking_knowledge import sandbox\n"
        "code, out, err = sandbox.run(Path(sys.argv[1]), 'head -c 400000000 /dev/zero | tr \"\\\\0\" x')\n"
        "text = sandbox.answer('head', code, out, err)\n"
        # VmHWM is this process image's own peak: ru_maxrss would also carry the forking process's
        # (Linux keeps the old image's high-water mark across exec: a big pytest worker's, under -n 2)
        "hwm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
        "print(code, len(out), len(text), hwm // 1024)\n"
    )
    kb = sandbox.exported(DOCS)
    done = subprocess.run([sys.executable, "-c", probe, str(kb)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    code, kept, shown, peak_mb = (int(x) for x in done.stdout.split())
    assert code == 0 and kept <= sandbox.KEEP_BYTES + 100 and shown < sandbox.OUTPUT_LIMIT + 100
    assert peak_mb < 400, f"the runner reached {peak_mb} MB"


@needs_bwrap
def test_the_writable_copy_and_tmp_are_size_limited(tmp_path: Path) -> None:
    scratch = sandbox.scratch_copy(DOCS)
    before = sum(p.stat().st_size for p in scratch.iterdir())
    code, _, err = sandbox.run(scratch, "head -c 300000000 /dev/zero > big.bin", writable=True)
    assert code != 0 and ("No space left" in err or "File size limit" in err or code > 128), (code, err)
    used = sum(p.stat().st_size for p in scratch.rglob("*") if p.is_file())
    assert used <= sandbox.SCRATCH_BYTES + before
    code, _, err = sandbox.run(scratch, "head -c 300000000 /dev/zero > /tmp/big.bin", writable=True)
    assert code != 0, err
    # The copy is full (the cut big.bin is kept, as a full disk keeps it) until the agent removes it.
    code, out, err = sandbox.run(scratch, "rm -f big.bin && echo kept > note.md && cat note.md", writable=True)
    assert code == 0 and out.strip() == "kept", (code, err)
    assert (scratch / "note.md").read_text().strip() == "kept"  # the copy still persists between commands


@needs_bwrap
def test_no_capabilities_no_mounts_bounded_processes_and_no_leftovers() -> None:
    kb = sandbox.exported(DOCS)
    _, out, _ = sandbox.run(kb, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status")
    assert [line.split()[1] for line in out.splitlines()] == ["0000000000000000"] * 3, out
    code, _, _ = sandbox.run(kb, "mount -t tmpfs none /tmp")
    assert code != 0
    assert sandbox.run(kb, "ulimit -p")[1].strip() == str(sandbox.PROCESSES)
    assert sandbox.run(kb, "ulimit -f")[1].strip() == str(sandbox.SCRATCH_BYTES // 512)
    if (
        shutil.which("unshare")
        and "--disable-userns"
        in subprocess.run(["bwrap", "--help"], capture_output=True, text=True, check=False).stdout
    ):
        code, _, _ = sandbox.run(kb, "unshare -r -m true")
        assert code != 0  # no user namespace of its own either: no mount anywhere
    code, out, _ = sandbox.run(kb, "sleep 987 & echo started")
    assert (code, out.strip()) == (0, "started")
    time.sleep(0.2)
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p) == "sleep 987"]
    assert not left, "a command's background process outlived it"


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""
