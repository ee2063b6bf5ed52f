"""Offline speech speed (issue 40, point 6): retail scenarios as phone calls under
``--tau2-speech-complexity control``, oracle agent and scripted user (no model).

Each configuration is one ``python -m pytest --tau2-scenarios <tasks> --tau2-speech-complexity
control`` subprocess from the repository root (which registers the tau2 sources):

- ``c8``: ``--tau2-concurrency 8`` in one process (the issue's setting);
- ``n2c4``: two xdist processes at ``--tau2-concurrency 4`` each (recognition holds the GIL:
  see the GIL probe below, so one process runs one recognition at a time).

For each run: wall, CPU (user + system of the subprocess tree, from ``RUSAGE_CHILDREN``), the
speech on the line (the calls' ``voice.audio_s``), wall and CPU per call-minute (per minute of
speech), and the wall-clock seconds spent in synthesis and in recognition (the turns' ``tts_s``
and ``asr_s``; under the GIL these include waiting, so they are shares, not costs).

``--asr`` compares pocketsphinx decoder settings on fixed sentences said by espeak-ng through the
phone channel: CPU per second of audio and word error rate. ``--gil`` checks whether a
recognition lets other Python threads run.

The machine is shared: the load average at the start and end of each run is recorded with it.

Usage:
    python bench/bench_voice.py                       # c8 and n2c4 on 16 retail tasks, the ASR table, the GIL probe
    python bench/bench_voice.py --tasks 8 --configs c8 --no-write
Writes bench/results/voice.json (and prints the table) unless --no-write; bench/results/voice.md is
written by hand from it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if not os.environ.get("TAU2_DATA_DIR") and (ROOT.parent / "shared" / "tau2-data").is_dir():
    os.environ["TAU2_DATA_DIR"] = str((ROOT.parent / "shared" / "tau2-data").resolve())
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

CONFIGS: dict[str, list[str]] = {
    "c8": ["--tau2-concurrency", "8"],
    "n2c4": ["-p", "xdist", "-n", "2", "--tau2-concurrency", "4"],
}
SENTENCES = (
    "Hi! How can I help you today?",
    "I want to cancel my order number W seven three eight four nine two because I no longer need it.",
    "Sure, could you please give me the email address on your account so I can find you?",
    "My email is yusuf dot rossi at example dot com.",
    "Thank you. I found your account. Your order of a mechanical keyboard and a smart thermostat is pending.",
    "Yes please go ahead and cancel it, the reason is I ordered by mistake.",
    "Your order has been cancelled and the refund of three hundred dollars will go to your credit card.",
    "Great, thanks, that is all. Bye.",
)
DECODERS: dict[str, dict[str, Any]] = {
    "default": {},
    "maxhmmpf=3000": {"maxhmmpf": 3000},
    "no fwdflat": {"fwdflat": False},
    "maxhmmpf=2000, no fwdflat (used)": {"maxhmmpf": 2000, "fwdflat": False},
    "maxhmmpf=1500": {"maxhmmpf": 1500},
    "narrow beams": {"beam": 1e-40, "wbeam": 1e-30, "pbeam": 1e-40},
    "ds=2": {"ds": 2},
}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def sweep(config: str, tasks: int) -> dict[str, Any]:
    names = ",".join(f"tau2_retail__{i}" for i in range(tasks))
    with tempfile.TemporaryDirectory(prefix="bench-voice-") as tmp:
        results = Path(tmp) / "results"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tau2-results-dir={results}",
                   "--tau2-scenarios", names, "--tau2-speech-complexity", "control", *CONFIGS[config]]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        load_before = _load()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{config}: pytest exited {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
        run = json.loads((results / "all_metrics.json").read_text("utf-8"))
    calls = [s["voice"] for s in run["scenarios"] if s.get("voice")]
    turns = [t for v in calls for t in v["turns"]]
    speech = sum(v["audio_s"] for v in calls)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    minutes = speech / 60
    return {
        "config": config,
        "args": CONFIGS[config],
        "tasks": tasks,
        "passed": sum(1 for s in run["scenarios"] if s.get("is_successful") is True),
        "utterances": len(turns),
        "speech_s": round(speech, 1),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "wall_per_call_minute_s": round(wall / minutes, 2),
        "cpu_per_call_minute_s": round(cpu / minutes, 2),
        "tts_wall_s": round(sum(t["tts_s"] for t in turns), 1),
        "asr_wall_s": round(sum(t["asr_s"] for t in turns), 1),
        "run_voice": run.get("voice"),
        "_said": [(t["side"], t["spoken"]) for t in turns],
        "load_before": load_before,
        "load_after": _load(),
    }


def _line_audio() -> list[bytes]:
    from pytest_tau2.speech import audio
    from pytest_tau2.speech.engines import EspeakTTS

    tts = EspeakTTS()
    out = []
    for sentence in SENTENCES:
        pcm, rate = tts.synthesize(sentence, "en-us+f3")
        out.append(audio.to_pcm16(audio.telephony(audio.resample(audio.from_pcm16(pcm), rate, 16000), 16000)))
    return out


def decoders() -> list[dict[str, Any]]:
    import jiwer
    from pocketsphinx import Decoder

    from pytest_tau2.speech.line import words

    pcms = _line_audio()
    seconds = sum(len(p) for p in pcms) / 32000
    rows = []
    for name, settings in DECODERS.items():
        decoder = Decoder(samprate=16000, logfn="/dev/null", **settings)
        heard = []
        start = time.process_time()
        for pcm in pcms:
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
            hyp = decoder.hyp()
            heard.append(hyp.hypstr if hyp is not None else "")
        cpu = time.process_time() - start
        wer = jiwer.wer([" ".join(words(s)) for s in SENTENCES], [" ".join(words(h)) for h in heard])
        rows.append({"decoder": name, "settings": {k: str(v) for k, v in settings.items()},
                     "cpu_per_audio_s": round(cpu / seconds, 3), "wer": round(wer, 3)})  # fmt: skip
        print(f"  {name:34s} CPU {cpu / seconds:.3f} s per second of audio, WER {wer:.3f}", flush=True)
    return rows


def phases(said: list[tuple[str, str]]) -> dict[str, Any]:
    """CPU of each step of the line, serially, on the utterances of a sweep: synthesis (espeak-ng,
    a child process, uncached), the channel (resampling, telephone band, mu-law) and recognition."""
    from pytest_tau2.speech import audio
    from pytest_tau2.speech.engines import EspeakTTS, PocketsphinxASR
    from pytest_tau2.speech.line import _CONTROL_TOKENS

    tts, asr = EspeakTTS(), PocketsphinxASR()
    cpu = {"tts": 0.0, "channel": 0.0, "asr": 0.0}
    seconds = 0.0
    distinct = list(dict.fromkeys(said))
    for side, text in distinct:
        clean = _CONTROL_TOKENS.sub(" ", text).strip()
        if not clean:
            continue
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        pcm, rate = tts.synthesize(clean, "en-us+f3" if side == "agent" else "en-us")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu["tts"] += (after.ru_utime - child.ru_utime) + (after.ru_stime - child.ru_stime)
        start = time.process_time()
        signal = audio.telephony(audio.resample(audio.from_pcm16(pcm), rate, 16000), 16000)
        cpu["channel"] += time.process_time() - start
        seconds += len(signal) / 16000
        start = time.process_time()
        asr.transcribe(audio.to_pcm16(signal))
        cpu["asr"] += time.process_time() - start
    return {
        "distinct_utterances": len(distinct),
        "of_utterances": len(said),
        "speech_s": round(seconds, 1),
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "cpu_per_speech_s": {k: round(v / seconds, 4) for k, v in cpu.items()},
    }


def gil() -> dict[str, Any]:
    """A Python thread's loop rate alone, and while another thread runs one long recognition."""
    from pocketsphinx import Decoder

    pcm = b"".join(_line_audio())
    decoder = Decoder(samprate=16000, logfn="/dev/null", maxhmmpf=2000, fwdflat=False)
    count, stop = [0], [False]

    def spin() -> None:
        while not stop[0]:
            count[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    time.sleep(0.3)
    mark, start = count[0], time.perf_counter()
    time.sleep(1.0)
    alone = (count[0] - mark) / (time.perf_counter() - start)
    mark, start = count[0], time.perf_counter()
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    during = (count[0] - mark) / (time.perf_counter() - start)
    stop[0] = True
    thread.join()
    return {"loop_rate_alone": round(alone), "loop_rate_during_recognition": round(during),
            "gil_released": during > 0.2 * alone}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=16, help="retail tasks 0..N-1 (default 16)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"of {', '.join(CONFIGS)}")
    parser.add_argument("--no-asr", action="store_true", help="skip the decoder table")
    parser.add_argument("--no-phases", action="store_true", help="skip the CPU of each step of the line")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "note": "shared machine: other jobs ran beside it (see each run's load average)",
    }
    if not args.no_asr:
        print("pocketsphinx decoders (espeak-ng en-us+f3 through the phone channel):")
        report["decoders"] = decoders()
        report["gil"] = gil()
        print(f"  GIL: {report['gil']}")
    report["sweeps"] = []
    for config in args.configs.split(","):
        found = sweep(config, args.tasks)
        report["sweeps"].append(found)
        print(
            f"{config}: {found['passed']}/{found['tasks']} passed, {found['speech_s']} s of speech,"
            f" wall {found['wall_s']} s,"
            f" CPU {found['cpu_s']} s; per call-minute: wall {found['wall_per_call_minute_s']} s,"
            f" CPU {found['cpu_per_call_minute_s']} s; tts {found['tts_wall_s']} s, asr {found['asr_wall_s']} s"
            f" (wall, summed); load {found['load_before']} -> {found['load_after']}",
            flush=True,
        )
    said = report["sweeps"][0].pop("_said") if report["sweeps"] else []
    for found in report["sweeps"]:
        found.pop("_said", None)
    if said and not args.no_phases:
        report["phases"] = phases(said)
        print(f"phases (serial, uncached): {report['phases']}", flush=True)
    if not args.no_write:
        path = ROOT / "bench" / "results" / "voice.json"
        path.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
