"""Health in Prometheus' text format, for prometheus-node-exporter's textfile collector.

The service rewrites `kiosk.prom` (the sync job `kiosk_sync.prom`) atomically every
`metrics.interval_s` into `metrics.textfile_dir`; the node exporter a venue already runs serves
it. No visitor words are ever a label: turns are counted by kind of reference and outcome.

A textfile outlives the process that wrote it, so "is the kiosk up" is read from
`kiosk_metrics_written_timestamp_seconds` (see scripts/monitoring/kiosk-alerts.yml), not from
`kiosk_up` alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, write_to_textfile
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

# Seconds; a kiosk turn's stages run from tens of milliseconds (brain) to seconds (a slow Pi).
BUCKETS_S = (0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)

# Stage -> TurnRecord field of its length (milliseconds)...
STAGES = {"recognition": "asr_ms", "brain": "brain_ms", "synthesis": "first_audio_ms"}
# ... or of the stream time it ends, counted from the end of the visitor's speech
SINCE_SPEECH = {"response": "reply_start_ms", "answer": "answer_start_ms"}


@dataclass(frozen=True)
class LoopCounts:
    """Counters that the voice loop and its guard keep themselves (read at each write)."""

    turn_errors: int = 0
    bargeins: int = 0
    echo_utterances_dropped: int = 0
    repeats_dropped: int = 0
    device_reopens: int = 0
    echo_paths_restored: int = 0
    echo_paths_dropped: int = 0
    echo_path_saves: int = 0


@dataclass(frozen=True)
class Facts:
    """What the service knows about itself at start and from the state folder."""

    config_fallback: bool = False  # running on a previous file or the defaults
    index_pages: int = 0
    index_path: Path | None = None


OUTCOMES = ("answered", "refused", "unclear")


def turn_outcome(turn: dict[str, Any]) -> str:
    """Of a TurnRecord as a dict (a log line): answered (from a page), refused (no page
    answered), unclear (stopped mid-phrase: asked to say it again), or social (a greeting,
    thanks...)."""
    if turn.get("act") is not None:
        return "social"
    if turn.get("unclear"):
        return "unclear"
    return "answered" if turn.get("page") else "refused"


class _LiveCollector(Collector):
    def __init__(self, counts: Callable[[], LoopCounts], facts: Facts,
                 clock: Callable[[], float]) -> None:
        self.counts = counts
        self.facts = facts
        self.clock = clock

    def collect(self) -> Iterable[Metric]:
        c = self.counts()
        for name, doc, value in (
                ("turn_errors", "Turns that failed with an error (logged)", c.turn_errors),
                ("bargeins", "Replies cut because the visitor spoke over them", c.bargeins),
                ("echo_utterances_dropped", "Utterances dropped as the avatar's own echo",
                 c.echo_utterances_dropped),
                ("repeats_dropped", "Transcripts dropped for repeating the avatar's reply",
                 c.repeats_dropped),
                ("audio_device_reopens", "Times the sound device was reopened",
                 c.device_reopens),
                ("echo_paths_restored", "Saved echo paths the canceller started from",
                 c.echo_paths_restored),
                ("echo_paths_dropped", "Restored echo paths dropped as not fitting the room",
                 c.echo_paths_dropped),
                ("echo_path_saves", "Times the learnt echo path was saved",
                 c.echo_path_saves)):
            yield CounterMetricFamily(f"kiosk_{name}", doc, value=value)
        f = self.facts
        yield GaugeMetricFamily("kiosk_config_fallback",
                                "1 when the configuration file was unusable and a previous "
                                "file or the defaults run", value=int(f.config_fallback))
        yield GaugeMetricFamily("kiosk_site_pages", "Pages in the site index",
                                value=f.index_pages)
        if f.index_path is not None and f.index_path.is_file():
            yield GaugeMetricFamily("kiosk_site_index_timestamp_seconds",
                                    "When the site index was last written",
                                    value=f.index_path.stat().st_mtime)
        yield GaugeMetricFamily("kiosk_metrics_written_timestamp_seconds",
                                "When this file was written (stale: the service is down)",
                                value=self.clock())


def loop_counts(voice: Any) -> LoopCounts:
    """The counters a VoiceLoop keeps, read at write time."""
    memory = getattr(voice.hearing, "memory", None)
    return LoopCounts(turn_errors=voice.errors, bargeins=voice.hearing.bargeins,
                      echo_utterances_dropped=voice.guard.weak_utterances,
                      repeats_dropped=voice.guard.dropped_transcripts,
                      device_reopens=voice.reopens,
                      echo_paths_restored=memory.restored if memory is not None else 0,
                      echo_paths_dropped=getattr(voice.hearing.canceller, "restarts", 0),
                      echo_path_saves=memory.saves if memory is not None else 0)


class ServiceMetrics:
    """The voice service's metrics; `observe_turn` per turn, `write` on a timer."""

    def __init__(self, counts: Callable[[], LoopCounts] = LoopCounts, facts: Facts = Facts(),
                 clock: Callable[[], float] = time.time) -> None:
        self.registry = CollectorRegistry()
        self.turns = Counter("kiosk_turns", "Visitor turns by kind of reference and outcome",
                             ["kind", "outcome"], registry=self.registry)
        from kiosk.dialogue.resolver import ACT, KINDS

        for kind in KINDS:  # every series exists from the start: increase() sees a quiet day
            for outcome in (("social",) if kind == ACT else OUTCOMES):
                self.turns.labels(kind=kind, outcome=outcome)
        self.stage = {
            stage: Histogram(f"kiosk_{stage}_seconds", doc, buckets=BUCKETS_S,
                             registry=self.registry)
            for stage, doc in (
                ("response", "End of the visitor's speech to the reply's first sound"),
                ("answer", "End of the visitor's speech to the answer's first sound (after "
                           "the acknowledgement, when tts.answer_hold_ms holds it)"),
                ("recognition", "Final transcript after the end-of-speech decision"),
                ("brain", "Resolving the turn and finding the answer"),
                ("synthesis", "Synthesizing the reply's first sentence"))}
        self.up = Gauge("kiosk_up", "1 while the service runs; 0 written at a clean stop",
                        registry=self.registry)
        self.up.set(1)
        self.model_check_failures = Gauge(
            "kiosk_model_check_failures", "Model files missing or failing their checksum "
            "(checked once after the start)", registry=self.registry)
        self.registry.register(_LiveCollector(counts, facts, clock))
        ProcessCollector(namespace="kiosk", registry=self.registry)

    def observe_turn(self, turn: dict[str, Any]) -> None:
        """A TurnRecord as a dict: only its kind, act, page presence, whether it was unclear
        and timings are read."""
        self.turns.labels(kind=str(turn.get("kind") or "none"),
                          outcome=turn_outcome(turn)).inc()
        for stage, key in SINCE_SPEECH.items():
            elapsed_ms = turn.get(key, 0) - turn.get("last_voiced_ms", 0)
            if turn.get(key) and elapsed_ms >= 0:
                self.stage[stage].observe(elapsed_ms / 1000)
        for stage, key in STAGES.items():
            if turn.get(key):
                self.stage[stage].observe(float(turn[key]) / 1000)

    def stopped(self) -> None:
        self.up.set(0)

    def write(self, folder: Path, name: str = "kiosk.prom") -> bool:
        return write_textfile(self.registry, folder, name)


class SyncCollector(Collector):
    """The last site sync, from the state file `kiosk site sync` writes; the sync job writes
    these into their own file (one writer per metric: the collector rejects duplicates)."""

    def __init__(self, state_path: Path) -> None:
        self.state_path = state_path

    def collect(self) -> Iterable[Metric]:
        from kiosk.sync.folder import read_state

        state = read_state(self.state_path)
        if not state:
            return
        for key, name, doc in (
                ("last_success", "kiosk_site_sync_last_success_timestamp_seconds",
                 "When a site sync last succeeded"),
                ("last_attempt", "kiosk_site_sync_last_attempt_timestamp_seconds",
                 "When a site sync last ran"),
                ("duration_s", "kiosk_site_sync_duration_seconds",
                 "How long the last site sync took"),
                ("pages", "kiosk_site_sync_pages", "Pages the last site sync found"),
                ("requests", "kiosk_site_sync_requests", "HTTP requests of the last site sync"),
                ("failed", "kiosk_site_sync_failed_pages",
                 "Pages the last site sync could not fetch")):
            value = state.get(key)
            if isinstance(value, int | float):
                yield GaugeMetricFamily(name, doc, value=value)
        yield GaugeMetricFamily("kiosk_site_sync_ok", "1 when the last site sync succeeded",
                                value=int(bool(state.get("ok"))))


async def write_metrics(metrics: ServiceMetrics, folder: Path, interval_s: float,
                        stop: asyncio.Event, check_models: Callable[[], int] | None = None
                        ) -> None:
    """Rewrite the file every interval until stop; a last one says the service is down.
    The model check (hashing every model file) runs once, beside the loop, in a thread."""
    loop = asyncio.get_running_loop()
    if check_models is not None:
        def checked(future: asyncio.Future[int]) -> None:
            if not future.cancelled() and future.exception() is None:
                metrics.model_check_failures.set(future.result())

        loop.run_in_executor(None, check_models).add_done_callback(checked)
    if not folder.is_dir():
        log.warning("metrics: %s does not exist; no metrics are written (install "
                    "prometheus-node-exporter, or set metrics.textfile_dir)", folder)
        return
    while not stop.is_set():
        await loop.run_in_executor(None, metrics.write, folder)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), interval_s)
    metrics.stopped()
    await loop.run_in_executor(None, metrics.write, folder)


def sync_registry(state_path: Path) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(SyncCollector(state_path))
    return registry


def write_textfile(registry: CollectorRegistry, folder: Path, name: str) -> bool:
    """Atomically (a temporary file renamed over it); False, logged, when the folder is not
    writable: metrics never stop the kiosk."""
    try:
        write_to_textfile(str(folder / name), registry)
    except OSError as exc:
        log.warning("metrics: cannot write %s (%s); check metrics.textfile_dir and that the "
                    "service may write there", folder / name, exc)
        return False
    return True
