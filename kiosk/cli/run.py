"""`kiosk run`: the voice loop on the sound devices (the appliance), or on a recording."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from kiosk.cli.common import Subparsers, cli_config_and_origin
from kiosk.config import Config
from kiosk.errors import KioskError
from kiosk.wiring import (
    answer_hold,
    echo_canceller,
    echo_memory,
    load_brain,
    recognizer,
    screen_source,
    segmenter,
    synthesizer,
    turn_model,
    voice_activity,
)

log = logging.getLogger(__name__)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("run", help="the voice loop on the sound devices, or on a recording")
    p.add_argument("--mic-wav", help="microphone recording to run through the loop")
    p.add_argument("--speaker-wav", default="speaker.wav", help="where the replies are written")
    p.add_argument("--realtime", action="store_true",
                   help="with --mic-wav: at the recording's own speed, with the avatar page "
                        "served on avatar.port")
    p.set_defaults(func=cmd_run)


def _writable_file(path: Path, option: str) -> None:
    """Fail before the work, not after it: the file a run will write must be writable."""
    if path.is_dir():
        raise KioskError("run", f"{option} {path} is a folder",
                         f"give a file name, e.g. {option} {path / 'replies.wav'}")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise KioskError("run", f"{option} {path}: {parent} is a file, not a folder",
                         f"give a path in a folder, e.g. {option} replies.wav")
    if not os.access(parent, os.W_OK):
        raise KioskError("run", f"{option} {path}: the folder {parent} is not writable",
                         f"give a path in a writable folder, e.g. {option} /tmp/replies.wav")


def cmd_run(args: argparse.Namespace) -> int:
    """The voice loop: on the configured sound devices, or on a recording (--mic-wav)."""
    if args.mic_wav:
        _writable_file(Path(args.speaker_wav), "--speaker-wav")
    cfg, origin = cli_config_and_origin(args)
    # Whisper first: loading it (float16 weights made int8) passes through ~80 MB it gives
    # back, best done while nothing else is loaded (the peak is the service's budget)
    asr = recognizer(cfg)
    brain = load_brain(cfg)
    vad = voice_activity(cfg)
    voices = {lang: synthesizer(cfg, lang) for lang in ("en", "ja")}
    echo = echo_canceller(cfg)
    if not args.mic_wav:
        return _run_live(cfg, brain, vad, asr, voices, echo, config_fallback=origin != "file")
    from kiosk.app import run_recording
    from kiosk.audio.wav import read_wav, write_wav

    def ready(loop: Any, url: str | None) -> None:
        if url:
            print(f"avatar page: {url}", flush=True)

    speaker, turns = run_recording(
        read_wav(Path(args.mic_wav)), brain, vad, asr, voices, echo=echo,
        segmenter=segmenter(cfg), turn_model=turn_model(cfg), hold=answer_hold(cfg),
        realtime=args.realtime, avatar_port=cfg.avatar.port if args.realtime and
        cfg.avatar.port else None, on_ready=ready)
    Path(args.speaker_wav).parent.mkdir(parents=True, exist_ok=True)
    write_wav(Path(args.speaker_wav), speaker)
    for turn in turns:
        if turn.went_on_ms:
            print(f"[{turn.went_on_ms / 1000:7.2f} s] (the visitor went on after a pause: the "
                  "turn is taken again on the whole)")
        print(f"[{turn.speech_start_ms / 1000:7.2f} s] visitor> {turn.utterance}")
        print(f"[{turn.reply_start_ms / 1000:7.2f} s] avatar>  {turn.reply}" + _acknowledged(turn))
        print(f"            (end of speech -> decision {turn.eos_decision_ms}"
              f" ms, recognition {turn.asr_ms:.0f} ms, brain {turn.brain_ms:.0f} ms, first "
              f"audio {turn.first_audio_ms:.0f} ms; kind {turn.kind}, page {turn.page})")
    return 0


def _acknowledged(turn: Any) -> str:
    """How the answer went when an acknowledgement was said first (tts.answer_hold_ms)."""
    if not turn.acknowledged:
        return ""
    if not turn.answer_start_ms:
        return " (acknowledged; the visitor went on before the answer began)"
    return f" (acknowledged; the answer from {turn.answer_start_ms / 1000:.2f} s)"


def _run_live(cfg: Config, brain: Any, vad: Any, asr: Any, voices: dict[str, Any],
              echo: Any, *, config_fallback: bool = False) -> int:
    """The appliance: the turn loop on the configured devices, supervised for systemd."""
    import asyncio
    import signal

    from kiosk.app import VoiceLoop
    from kiosk.audio.duplex import DuplexStream
    from kiosk.logs import TurnLog, logs_dir
    from kiosk.metrics import Facts, ServiceMetrics, loop_counts, write_metrics
    from kiosk.models import default_state_dir, model_check_failures
    from kiosk.service import SystemdNotifier, WatchdogGate, supervise, watchdog_interval_s

    logging.getLogger().setLevel(cfg.logging.level)
    source = screen_source(cfg, {p.page_id for p in brain.index.pages})

    def screen() -> str | None:
        shown = source.current()
        return shown.brain_id if shown is not None else None

    notifier = SystemdNotifier()
    turn_log = TurnLog(logs_dir(default_state_dir()),
                       store_transcripts=cfg.logging.store_transcripts,
                       retention_days=cfg.logging.retention_days)
    turn_log.prune()

    def on_state(state: str) -> None:
        log.info("state: %s", state)
        notifier.status(state)

    # a missing device refuses the start with the device list and the setting to change;
    # systemd starts the service again with back-off
    stream = DuplexStream(cfg.audio.input_device, cfg.audio.output_device)
    metrics: ServiceMetrics | None = None

    def on_turn(turn: Any) -> None:
        record = turn.as_dict()
        turn_log.record(record)
        if metrics is not None:
            metrics.observe_turn(record)

    voice = VoiceLoop(stream, brain, vad, asr, voices, screen=screen, on_state=on_state,
                      on_turn=on_turn, echo=echo,
                      segmenter=segmenter(cfg), turn_model=turn_model(cfg),
                      hold=answer_hold(cfg))
    textfile_dir = Path(cfg.metrics.textfile_dir) if cfg.metrics.textfile_dir else None
    if textfile_dir is not None:
        metrics = ServiceMetrics(lambda: loop_counts(voice), Facts(
            config_fallback=config_fallback, index_pages=len(brain.index.pages),
            index_path=cfg.paths.index_path(cfg.brain.embedder)))

    async def serve() -> None:
        stop = asyncio.Event()
        avatar = None
        if cfg.avatar.port:
            from kiosk.app import attach
            from kiosk.avatar.server import AvatarServer

            avatar = AvatarServer(stream.position_s, port=cfg.avatar.port)
            await avatar.start()
            attach(avatar, voice)
        for signum in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        interval_s = watchdog_interval_s()
        gate = WatchdogGate(stall_s=1.5 * interval_s if interval_s else 0.0)
        watcher = asyncio.create_task(supervise(lambda: voice.chunks_read + voice.reopens,
                                                notifier, interval_s, gate, stop))
        writer = None
        if metrics is not None and textfile_dir is not None:
            writer = asyncio.create_task(write_metrics(
                metrics, textfile_dir, cfg.metrics.interval_s, stop,
                check_models=lambda: model_check_failures(cfg.paths.models_path())))
        try:
            await voice.run(stop)
        finally:
            notifier.stopping()
            stop.set()
            await watcher
            if writer is not None:
                await writer
            if avatar is not None:
                await avatar.close()

    stream.start()
    # the echo path learnt before this start, if the devices and settings are the same
    voice.hearing.memory = echo_memory(cfg, echo, stream.rate_hz, default_state_dir())
    log.info("listening on %s, speaking on %s (Ctrl-C to stop)", cfg.audio.input_device,
             cfg.audio.output_device)
    try:
        asyncio.run(serve())
    finally:
        voice.close()
        stream.stop()
    return 0
