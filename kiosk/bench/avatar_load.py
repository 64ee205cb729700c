"""`kiosk bench socket`: the voice loop while a local program floods the avatar's socket.

`kiosk run --mic-wav REC --realtime` (the service's own loop at the recording's speed, with the
avatar page served) runs twice in a child process: once quiet, once while this process opens
`connections` WebSockets and offers `megabytes` of frames to it, spread over the run. The
figures are the turns' stage timings of both runs (ratio loaded / quiet), the child's peak RSS
in both, tracebacks in its output, and what the flood achieved.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from kiosk.audio.format import RATE_HZ
from kiosk.audio.wav import read_wav, write_wav
from kiosk.bench import percentiles, rss_mb
from kiosk.config import DEMO_DIR

RECORDING = DEMO_DIR / "recordings" / "conversation-en.wav"
FRAME_BYTES = 4096  # the server's frame cap: the flood sends the largest frames it takes
_TURN = re.compile(r"end of speech -> decision (\d+) ms, recognition (\d+) ms, brain (\d+) ms,"
                   r" first audio (\d+) ms")


@dataclass
class Flood:
    attempts: int = 0
    accepted: int = 0
    refused: int = 0
    closed_by_server: int = 0
    bytes_offered: int = 0
    bytes_written: int = 0


@dataclass
class Run:
    turns: list[dict[str, int]] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    rss_samples_mb: list[float] = field(default_factory=list)
    cpu_s: float = 0.0  # the kiosk process's own CPU time
    # ... by the time its avatar page opened: loading the engines and the index (~2.6 s),
    # which is no part of what a flood could cost
    cpu_ready_s: float = 0.0
    tracebacks: int = 0
    log_bytes: int = 0
    exit_code: int = 0
    seconds: float = 0.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def flood(url: str, connections: int, megabytes: float, spread_s: float) -> Flood:
    """`connections` attempts and `megabytes` of frames offered, evenly over `spread_s`: each
    client let in streams frames (at the pace that keeps to the total) until it is closed."""
    stats = Flood()
    total = int(megabytes * 1_000_000)
    start = time.monotonic()
    frame = os.urandom(FRAME_BYTES)

    def allowed() -> int:  # bytes the flood may have offered by now
        return int(total * min(1.0, (time.monotonic() - start) / spread_s))

    async def attempt() -> None:
        stats.attempts += 1
        try:
            async with connect(url, open_timeout=5, close_timeout=1) as ws:
                stats.accepted += 1
                while stats.bytes_offered < total:
                    if stats.bytes_offered >= allowed():
                        await asyncio.sleep(0.02)
                        continue
                    stats.bytes_offered += FRAME_BYTES
                    await ws.send(frame)
                    stats.bytes_written += FRAME_BYTES
        except InvalidStatus:
            stats.refused += 1
        except ConnectionClosed:
            stats.closed_by_server += 1
        except (TimeoutError, WebSocketException, OSError):
            stats.refused += 1

    tasks = []
    for i in range(connections):
        await asyncio.sleep(max(0.0, start + spread_s * i / connections - time.monotonic()))
        tasks.append(asyncio.create_task(attempt()))
    await asyncio.wait(tasks, timeout=max(1.0, start + spread_s - time.monotonic()) + 5.0)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return stats


async def _run_kiosk(config: Path, wav: Path, out: Path, connections: int, megabytes: float,
                     spread_s: float) -> tuple[Run, Flood | None]:
    run = Run()
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kiosk", "--config", str(config), "run", "--mic-wav", str(wav),
        "--speaker-wav", str(out), "--realtime",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None

    async def sample_rss() -> None:
        while proc.returncode is None:
            now_mb = rss_mb(proc.pid)
            if now_mb:
                run.rss_samples_mb.append(now_mb)
            run.peak_rss_mb = max(run.peak_rss_mb, now_mb)
            run.cpu_s = max(run.cpu_s, _cpu_s(proc.pid))
            await asyncio.sleep(0.1)

    sampler = asyncio.create_task(sample_rss())
    errors = asyncio.create_task(proc.stderr.read())
    flooding: asyncio.Task[Flood] | None = None
    output = []
    async for raw in proc.stdout:
        line = raw.decode("utf-8", "replace")
        output.append(line)
        if line.startswith("avatar page: "):
            run.cpu_ready_s = _cpu_s(proc.pid)
            if connections:
                url = line.split(": ", 1)[1].strip().replace("http://", "ws://") + "ws"
                flooding = asyncio.create_task(flood(url, connections, megabytes, spread_s))
    run.exit_code = await proc.wait()
    run.seconds = time.monotonic() - started
    sampler.cancel()
    log_text = (await errors).decode("utf-8", "replace") + "".join(output)
    run.log_bytes = len(log_text.encode())
    run.tracebacks = log_text.count("Traceback") + log_text.count("never retrieved")
    for line in output:
        if match := _TURN.search(line):
            decision, asr, brain, first = (int(g) for g in match.groups())
            run.turns.append({"decision_ms": decision, "asr_ms": asr, "brain_ms": brain,
                              "first_audio_ms": first})
    if run.exit_code:
        raise RuntimeError(f"kiosk run exited {run.exit_code}:\n{log_text[-2000:]}")
    return run, (await flooding) if flooding is not None else None


def _summary(run: Run) -> dict[str, Any]:
    stages = {key: percentiles([float(t[key]) for t in run.turns], 0)
              for key in ("asr_ms", "brain_ms", "first_audio_ms")}
    return {"turns": len(run.turns), "stages_ms": stages, "peak_rss_mb": round(run.peak_rss_mb),
            "settled_rss_mb": round(_settled(run), 1),
            "cpu_s": round(run.cpu_s, 1),
            # from the avatar page's opening (when a flood begins) to the end
            "serving_cpu_s": round(max(0.0, run.cpu_s - run.cpu_ready_s), 1),
            "tracebacks": run.tracebacks, "log_bytes": run.log_bytes,
            "seconds": round(run.seconds, 1)}


def run(seconds: float = 0.0, connections: int = 1000, megabytes: float = 100.0) -> dict[str, Any]:
    """Quiet run, then flooded run, of the demo recording (cut to `seconds` when given)."""
    audio = read_wav(RECORDING)
    if seconds:
        audio = audio[:int(seconds * RATE_HZ)]
    length_s = len(audio) / RATE_HZ
    with tempfile.TemporaryDirectory(prefix="kiosk-bench-socket-") as tmp:
        folder = Path(tmp)
        wav = folder / "visitor.wav"
        write_wav(wav, audio)
        config = folder / "kiosk.toml"
        config.write_text(f"[avatar]\nport = {_free_port()}\n", encoding="utf-8")
        quiet, _ = asyncio.run(_run_kiosk(config, wav, folder / "quiet.wav", 0, 0, 0))
        own_cpu_s = time.process_time()
        loaded, flooded = asyncio.run(_run_kiosk(config, wav, folder / "loaded.wav", connections,
                                                 megabytes, length_s * 0.9))
        own_cpu_s = time.process_time() - own_cpu_s
    assert flooded is not None
    q, lo = _summary(quiet), _summary(loaded)
    ratio = {key: round(lo["stages_ms"][key]["p50"] / max(1.0, q["stages_ms"][key]["p50"]), 3)
             for key in ("asr_ms", "brain_ms", "first_audio_ms")}
    paired = [b["first_audio_ms"] / max(1, a["first_audio_ms"])
              for a, b in zip(quiet.turns, loaded.turns, strict=False)]
    return {"recording_s": round(length_s, 1), "quiet": q, "loaded": lo,
            "flood": {**vars(flooded), "flood_cpu_s": round(own_cpu_s, 1)},
            "p50_ratio_loaded_to_quiet": ratio,
            "first_audio_ratio_worst_turn": round(max(paired, default=float("nan")), 3),
            "rss_growth_mb": round(_settled(loaded) - _settled(quiet), 1),
            "peak_rss_growth_mb": round(loaded.peak_rss_mb - quiet.peak_rss_mb, 1)}


def _settled(run: Run) -> float:
    """The median RSS over the second half of the run: what the process holds, not the
    moment's peak (Whisper's passes swing the peak by tens of MB from run to run)."""
    half = run.rss_samples_mb[len(run.rss_samples_mb) // 2:]
    return statistics.median(half) if half else 0.0
