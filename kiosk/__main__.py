"""Command line: parse, load config, set up logging, dispatch. Nothing else lives here."""

from __future__ import annotations

from kiosk.malloc import limit_arenas

limit_arenas()  # before any import starts a thread (see kiosk.malloc)

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kiosk.config import DEMO_DIR, Config, load_config
from kiosk.errors import KioskError
from kiosk.logs import setup_logging
from kiosk.wiring import (
    echo_canceller,
    load_brain,
    recognizer,
    screen_source,
    segmenter,
    synthesizer,
    turn_model,
    voice_activity,
)

log = logging.getLogger("kiosk")


def _config(args: argparse.Namespace) -> Config:
    return _config_and_origin(args)[0]


def _config_and_origin(args: argparse.Namespace) -> tuple[Config, str]:
    """--config FILE, else the console's file when there is one, else the embedded defaults;
    and where it came from: file, previous (the file was unusable), defaults."""
    import dataclasses

    from kiosk.configstore import load_with_fallback
    from kiosk.models import default_config_path

    saved = default_config_path()
    path = Path(args.config) if args.config else saved if saved.is_file() else None
    origin = "file"
    if path is None:
        cfg = Config()
    elif not path.exists():
        cfg = load_config(path)  # names the missing file
    else:
        # An unusable file is logged loudly and the last good one is used: a service that
        # exits on it would only be restarted into the same failure.
        cfg, origin = load_with_fallback(path)

    paths = cfg.paths
    if not paths.site and cfg.site.sync_url and paths.synced_site_path().exists():
        # the venue's site, kept by kiosk site sync, instead of the demo
        paths = dataclasses.replace(paths, site=str(paths.synced_site_path()))
    if getattr(args, "models_dir", None):
        paths = dataclasses.replace(paths, models_dir=args.models_dir)
    if getattr(args, "site", None):
        paths = dataclasses.replace(paths, site=args.site)
    if getattr(args, "index", None):
        paths = dataclasses.replace(paths, index=args.index)
    brain = cfg.brain
    if getattr(args, "embedder", None):
        brain = dataclasses.replace(brain, embedder=args.embedder)
    ranker = getattr(args, "ranker", None)
    if ranker == "dense":
        brain = dataclasses.replace(brain, rank=dataclasses.replace(brain.rank, lexical=0.0))
    elif ranker == "lexical":
        brain = dataclasses.replace(brain, rank=dataclasses.replace(brain.rank, dense=0.0))
    return dataclasses.replace(cfg, paths=paths, brain=brain), origin


def cmd_models(args: argparse.Namespace) -> int:
    from kiosk.models import install, load_manifest, verify

    cfg = _config(args)
    manifest = load_manifest()
    names = args.names or [n for n, e in manifest.items() if e.install_by_default]
    for name in names:
        if name not in manifest:
            raise KioskError("model", f"no model named {name!r} in the manifest",
                             f"use one of: {', '.join(manifest)}")
    models_dir = cfg.paths.models_path()
    if args.action == "list":
        for name in names:
            entry = manifest[name]
            state = "ok" if verify(entry, models_dir) else "missing"
            print(f"{name:<14}{state:<9}{entry.package}=={entry.version}  {entry.licence}")
        return 0
    if args.action == "verify":
        bad = [n for n in names if not verify(manifest[n], models_dir)]
        for n in bad:
            print(f"{n}: missing or wrong checksum in {models_dir}; run: kiosk models install {n}")
        return 1 if bad else 0
    wheels = Path(args.wheels) if args.wheels else None
    converted = Path(args.converted) if args.converted else None
    for name in names:
        path = install(manifest[name], models_dir, wheels_dir=wheels, converted_dir=converted,
                       force=args.force)
        print(f"{name}: {path}")
    # Setup runs this right after pip: the files pip and this command just wrote leave the
    # page cache, or the first processes to map them count large folios as resident (fsutil).
    from kiosk.fsutil import drop_cached

    fresh = [models_dir] + ([Path(sys.prefix)] if sys.prefix != sys.base_prefix else [])
    log.info("page cache of %d installed files released", drop_cached(fresh))
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    cfg = _config(args)
    brain = load_brain(cfg)
    index = brain.index
    print(f"{len(index.pages)} pages, {len(index.chunks)} chunks -> "
          f"{cfg.paths.index_path(cfg.brain.embedder)}")
    for problem in index.problems:
        print(f"warning: {problem.path}: {problem.message}", file=sys.stderr)
    return 0


def _explain(result: Any) -> str:
    res = result.resolution
    conf = result.bare_confidence
    conf_text = "-" if conf is None else f"{conf[0]:.3f} (lead {conf[1]:.2f})"
    lines = [f"  act={res.act} kind={res.kind} detail={res.detail} bare_confidence={conf_text}",
             f"  query: {res.query.text if res.query else '(none)'}"]
    for hit in result.hits[:3]:
        lines.append(f"  {hit.score:.3f}  {hit.page_id}")
    lines.append(f"  {result.elapsed_ms:.1f} ms")
    return "\n".join(lines)


def cmd_ask(args: argparse.Namespace) -> int:
    cfg = _config(args)
    brain = load_brain(cfg)
    lang = args.lang or (None if cfg.brain.language == "auto" else cfg.brain.language)
    source = None if args.screen else screen_source(cfg, {p.page_id for p in brain.index.pages})
    if source is not None and cfg.screen.source != "fixed":
        import time

        deadline = time.monotonic() + 3.0  # let the browser or the bridge report once
        while source.current() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    screen = args.screen
    history: tuple[Any, ...] = ()
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            try:
                line = input("visitor> ")
            except EOFError:
                break
        else:
            raw = sys.stdin.readline()
            if not raw:
                break
            line = raw.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith(":screen"):
            screen = line.split(maxsplit=1)[1] if " " in line else None
            source = None  # typed by hand from now on
            print(f"(screen: {screen})")
            continue
        if source is not None:
            shown = source.current()
            screen = shown.brain_id if shown is not None else None
        result = brain.respond(history, line, screen, lang)
        if not interactive:
            print(f"visitor> {line}")
        print(f"avatar> {result.reply.text}")
        if args.explain:
            print(_explain(result))
        history = (*history, result.exchange())
    return 0


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
    cfg, origin = _config_and_origin(args)
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
        segmenter=segmenter(cfg), turn_model=turn_model(cfg),
        realtime=args.realtime, avatar_port=cfg.avatar.port if args.realtime and
        cfg.avatar.port else None, on_ready=ready)
    Path(args.speaker_wav).parent.mkdir(parents=True, exist_ok=True)
    write_wav(Path(args.speaker_wav), speaker)
    for turn in turns:
        if turn.went_on_ms:
            print(f"[{turn.went_on_ms / 1000:7.2f} s] (the visitor went on after a pause: the "
                  "turn is taken again on the whole)")
        print(f"[{turn.speech_start_ms / 1000:7.2f} s] visitor> {turn.utterance}")
        print(f"[{turn.reply_start_ms / 1000:7.2f} s] avatar>  {turn.reply}")
        print(f"            (end of speech -> decision {turn.eos_decision_ms}"
              f" ms, recognition {turn.asr_ms:.0f} ms, brain {turn.brain_ms:.0f} ms, first "
              f"audio {turn.first_audio_ms:.0f} ms; kind {turn.kind}, page {turn.page})")
    return 0


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
                      segmenter=segmenter(cfg), turn_model=turn_model(cfg))
    textfile_dir = Path(cfg.metrics.textfile_dir) if cfg.metrics.textfile_dir else None
    if textfile_dir is not None:
        metrics = ServiceMetrics(lambda: loop_counts(voice), Facts(
            config_fallback=config_fallback, index_pages=len(brain.index.pages),
            index_path=cfg.paths.index_path(cfg.brain.embedder)))

    async def serve() -> None:
        stop = asyncio.Event()
        avatar = None
        if cfg.avatar.port:
            from kiosk.avatar.server import AvatarServer, attach

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
    log.info("listening on %s, speaking on %s (Ctrl-C to stop)", cfg.audio.input_device,
             cfg.audio.output_device)
    try:
        asyncio.run(serve())
    finally:
        voice.close()
        stream.stop()
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """The appliance's health; exit status 1 when a check failed."""
    from kiosk.doctor import format_checks, healthy, run_checks
    from kiosk.models import default_state_dir

    cfg = _config(args)
    checks = run_checks(cfg, _config_path(args), default_state_dir(),
                        record_s=0.0 if args.quick else 1.0, echo_probe=args.echo)
    if args.json:
        print(json.dumps([c.__dict__ for c in checks], ensure_ascii=False))
    else:
        print(format_checks(checks))
    return 0 if healthy(checks) else 1


def cmd_eval(args: argparse.Namespace) -> int:
    from kiosk.eval import evaluate, format_misses, format_table, load_dialogues

    cfg = _config(args)
    brain = load_brain(cfg)
    dialogues = load_dialogues(Path(args.dialogues))
    report = evaluate(brain, dialogues)
    if args.by_turn:
        print(format_misses(report, args.by_turn))
    elif args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(format_table(report))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The main job on the embedded defaults: a scripted conversation over the demo site."""
    cfg = _config(args)
    brain = load_brain(cfg)
    script = json.loads((DEMO_DIR / "script.json").read_text(encoding="utf-8"))
    for part in script:
        print(f"\n=== {part['title']} ===")
        history: tuple[Any, ...] = ()
        for step in part["turns"]:
            screen = step.get("screen")
            if screen:
                print(f"(screen shows {screen})")
            result = brain.respond(history, step["user"], screen, part["lang"])
            print(f"visitor> {step['user']}")
            print(f"avatar>  {result.reply.text}")
            if args.explain:
                print(_explain(result))
            history = (*history, result.exchange())
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.what == "fleet":
        from kiosk.bench import fleet as bench_fleet

        report = bench_fleet.run(_config(args))
        print(json.dumps(report) if args.json else bench_fleet.format_report(report))
        return 0
    if args.what == "voice":
        from kiosk.bench import voice as bench_voice

        report = bench_voice.run(_config(args), args.lang, args.utterances, args.noise_db,
                                 args.timed)
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "echo":
        from kiosk.bench import echo as bench_echo

        report = bench_echo.run(_config(args), avatar_minutes=args.minutes or 10.0,
                                scenes=args.scenes, paths_per_kind=args.paths,
                                jack=not args.no_jack, seed=args.seed)
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "soak":
        from kiosk.bench import soak

        report = soak.run(_config(args), args.minutes or 60.0)
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "socket":
        from kiosk.bench import avatar_load

        report = avatar_load.run(args.seconds, args.connections, args.megabytes)
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "screen":
        from kiosk.bench import screen as bench_screen

        report = bench_screen.run(args.navigations)
        print(json.dumps(report) if args.json else
              f"{report['navigations']} navigations, {report['missed']} missed; lag p50 "
              f"{report['lag_ms']['p50']} ms, p95 {report['lag_ms']['p95']} ms")
        return 0
    from kiosk.bench import brain as bench_brain

    cfg = _config(args)
    report = bench_brain.run(cfg, pages=args.pages, turns=args.turns)
    print(json.dumps(report) if args.json else bench_brain.format_report(report))
    return 0


def _config_path(args: argparse.Namespace) -> Path:
    from kiosk.models import default_config_path

    return Path(args.config) if args.config else default_config_path()


def cmd_config(args: argparse.Namespace) -> int:
    from kiosk import config as cfgmod
    from kiosk.configstore import ConfigStore

    path = _config_path(args)
    if args.action == "schema":
        print(cfgmod.format_schema())
        return 0
    if args.action in ("pin-hash", "set-pin") and (args.key or args.value):
        # a PIN on the command line stays in ps and in the shell's history
        raise KioskError("usage", f"config {args.action} takes no PIN on the command line",
                         f"type it on standard input: kiosk config {args.action}, or "
                         f"echo PIN | kiosk config {args.action} from a file only root reads")
    if args.action == "pin-hash":
        from firmware_bridge.pin import pin_record

        print(pin_record(sys.stdin.readline().strip()))
        return 0
    if args.action == "check":
        # strict: the file as written, no fallback (Ansible validates a config before placing it)
        load_config(Path(args.key) if args.key else path)
        print("ok")
        return 0
    if args.action == "set-pin":
        from firmware_bridge.pin import PinFile

        pin = sys.stdin.readline().strip()
        PinFile(path.with_name("admin-pin.json")).set(pin)
        print(f"admin PIN set ({path.with_name('admin-pin.json')}, salted scrypt hash); "
              f"wrong-PIN lock-out cleared")
        return 0
    store = ConfigStore(path)
    if args.action == "show":
        prefix = args.key or ""
        for s in cfgmod.schema():
            if not prefix or s.key == prefix or s.key.startswith(prefix + "."):
                print(f"{s.key} = {store.get(s.key)!r}")
    elif args.action == "get":
        if not args.key:
            raise KioskError("usage", "config get needs a KEY", "kiosk config get KEY")
        print(store.get(args.key))
    elif args.action == "set":
        if not args.key or args.value is None:
            raise KioskError("usage", "config set needs KEY and VALUE",
                             "kiosk config set KEY VALUE")
        store.set(args.key, args.value)
        store.save()  # first: a save that fails must not be announced as applied
        later = "" if cfgmod.setting_for(args.key).live else " (takes effect after restart)"
        print(f"{args.key} = {store.get(args.key)!r}{later}")
        print(f"saved to {path}")
    elif args.action == "save":
        changed = store.save()
        print(f"saved {path} ({len(changed)} change(s); loaded from: {store.origin})")
    return 0


def cmd_console(args: argparse.Namespace) -> int:
    import time

    from firmware_bridge.console import ConsoleSession, open_serial, serve
    from firmware_bridge.consolehost import RingLog, StandaloneHost
    from firmware_bridge.pin import PinFile
    from kiosk.configstore import ConfigStore

    path = _config_path(args)
    ring = RingLog()
    logging.getLogger().addHandler(ring)

    def apply_live(cfg: Any, keys: list[str]) -> None:
        # the live settings this process owns; the voice loop applies its own when it runs
        if "logging.level" in keys:
            logging.getLogger().setLevel(cfg.logging.level)
        log.info("console: applied live: %s", ", ".join(keys))

    store = ConfigStore(path, apply_live=apply_live)
    logging.getLogger().setLevel(store.saved.logging.level)
    restart_file = os.environ.get("KIOSK_RESTART_FILE")
    host = StandaloneHost(store, ring, Path(restart_file) if restart_file else None)
    pins = PinFile(path.with_name("admin-pin.json"))
    port = args.port or store.saved.console.port
    if not port:
        raise KioskError("config", "no console port: console.port is empty and --port not given",
                         "pass --port DEVICE or set console.port")
    log.info("console: serving on %s (config %s)", port, path)
    serve(open_serial(port, store.saved.console.baud),
          lambda now: ConsoleSession(store, pins, host, now), stop=lambda: False,
          clock=time.time, name=port)  # wall clock: the PIN lock-out outlives this process
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    """kiosk site sync [URL]: the venue's website into the site folder, indexed; the previous
    site keeps serving when it fails. Exit status 1 on a failed sync."""
    import time

    from kiosk.metrics import sync_registry, write_textfile
    from kiosk.models import default_state_dir
    from kiosk.sync.folder import SiteVersions, read_state
    from kiosk.sync.job import due, params_from, record, sync_site
    from kiosk.wiring import index_preparer

    cfg = _config(args)
    url = args.url or cfg.site.sync_url
    state_path = default_state_dir() / "sync-state.json"
    state = read_state(state_path)
    now = time.time()
    if args.when_due and (not url or not due(cfg, state, now)):
        log.debug("site sync: not due")
        return 0
    if not url:
        raise KioskError("config", "no site to sync: site.sync_url is empty and no URL given",
                         "kiosk site sync https://venue.example/sitemap.xml, or set "
                         "site.sync_url")
    link = cfg.paths.synced_site_path()
    params = params_from(cfg, url)
    versions = SiteVersions(link)
    report = sync_site(params, versions, index_preparer(cfg, link))
    record(state_path, report, state, now)
    if cfg.metrics.textfile_dir and Path(cfg.metrics.textfile_dir).is_dir():
        write_textfile(sync_registry(state_path), Path(cfg.metrics.textfile_dir),
                       "kiosk_sync.prom")
    restart_file = os.environ.get("KIOSK_RESTART_FILE")
    if report.changed and restart_file:
        from kiosk.fsutil import atomic_write_bytes

        # the path unit restarts the voice service, which loads the new site and index
        atomic_write_bytes(Path(restart_file), f"{time.time():.3f}\n".encode())
    if args.json:
        print(json.dumps(report.as_dict(), indent=1, ensure_ascii=False))
    else:
        print(report.summary())
        print(f"site: {link}")
    return 0 if report.ok else 1


def cmd_report(args: argparse.Namespace) -> int:
    """Turns per day, answered share, pages asked about, and (with stored transcripts) the
    questions the site could not answer, grouped by meaning."""
    from kiosk.logs import logs_dir
    from kiosk.models import default_state_dir
    from kiosk.report import as_json, format_report, report_for
    from kiosk.wiring import query_encoder

    cfg = _config(args)
    folder = Path(args.logs) if args.logs else logs_dir(default_state_dir())
    found = report_for(folder, args.since, lambda: query_encoder(cfg))
    print(as_json(found) if args.json else format_report(found), end="\n" if args.json else "")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kiosk", description=__doc__)
    parser.add_argument("--config", help="configuration TOML file")
    parser.add_argument("--models-dir", help="folder of model files (overrides the config)")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("models", help="provision, list or verify model files")
    p.add_argument("action", choices=["install", "list", "verify"])
    p.add_argument("names", nargs="*", help="model names (default: all in the manifest)")
    p.add_argument("--wheels", help="take wheels from this folder (air-gapped install)")
    p.add_argument("--converted", help="take converted model files from this folder (devices)")
    p.add_argument("--force", action="store_true", help="reinstall even when the file verifies")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("index", help="build or update the site index")
    p.add_argument("site", nargs="?", help="folder of .md/.html pages (default: demo site)")
    p.add_argument("--out", dest="index", help="index file to write")
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("site", help="keep the site folder in step with the venue's website")
    site_sub = p.add_subparsers(dest="site_command", required=True)
    q = site_sub.add_parser("sync", help="crawl the site (sitemap or links) into the site "
                                         "folder and index it")
    q.add_argument("url", nargs="?", help="sitemap.xml or start page (default: site.sync_url)")
    q.add_argument("--when-due", action="store_true",
                   help="only when site.sync_time has come (the timer's mode)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_site)
    p = sub.add_parser("report", help="what visitors asked and what the site could not answer")
    p.add_argument("--since", default="7d", help="period: 7d, 24h, 2w (default 7d)")
    p.add_argument("--logs", help="logs folder (default: the service's)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("ask", help="text conversation with the brain")
    p.add_argument("--site")
    p.add_argument("--index")
    p.add_argument("--screen", help="page id on the touchscreen (':screen ID' changes it); "
                                    "default: the configured screen source")
    p.add_argument("--lang", choices=["ja", "en"])
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.add_argument("--explain", action="store_true",
                   help="show act, kind, detail flag, query, top pages and scores")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("run", help="the voice loop on the sound devices, or on a recording")
    p.add_argument("--mic-wav", help="microphone recording to run through the loop")
    p.add_argument("--speaker-wav", default="speaker.wav", help="where the replies are written")
    p.add_argument("--realtime", action="store_true",
                   help="with --mic-wav: at the recording's own speed, with the avatar page "
                        "served on avatar.port")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("eval", help="top-1 and MRR per query strategy on dialogues")
    p.add_argument("--site")
    p.add_argument("--index")
    p.add_argument("--dialogues", required=True)
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.add_argument("--ranker", choices=["hybrid", "dense", "lexical"], default="hybrid",
                   help="dense and lexical legs fused (default), or one alone")
    p.add_argument("--json", action="store_true")
    p.add_argument("--by-turn", nargs="?", const="resolved", metavar="STRATEGY",
                   help="list the turns a strategy missed (default: resolved): utterance, kind, "
                        "expected and found pages, query, reply")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("demo", help="scripted conversation over the bundled demo site")
    p.add_argument("--explain", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("config", help="show, change and save the configuration")
    p.add_argument("action", choices=["show", "get", "set", "save", "schema", "set-pin",
                                      "pin-hash", "check"],
                   help="check FILE: validate a file strictly; pin-hash: PIN on stdin -> the "
                        "stored form for an inventory")
    p.add_argument("key", nargs="?")
    p.add_argument("value", nargs="?")
    p.set_defaults(func=cmd_config)

    p = sub.add_parser("doctor", help="check the appliance: each problem with its fix")
    p.add_argument("--quick", action="store_true", help="do not record from the microphone")
    p.add_argument("--echo", action="store_true",
                   help="play a probe and measure the echo through echo.mode (6 s)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("console", help="serve the installer console on a serial port")
    p.add_argument("--port", help="serial device or pyserial URL (default: console.port)")
    p.set_defaults(func=cmd_console)

    p = sub.add_parser("bench", help="benchmarks that print figures")
    p.add_argument("what", choices=["brain", "echo", "fleet", "screen", "socket", "soak",
                                     "voice"])
    p.add_argument("--minutes", type=float,
                   help="soak: minutes of simulated conversation (default 60); echo: minutes "
                        "of avatar speech for the self-trigger count (default 10)")
    p.add_argument("--scenes", type=int, default=40, help="echo: double-talk scenes")
    p.add_argument("--paths", type=int, default=6, help="echo: simulated rooms of each kind")
    p.add_argument("--no-jack", action="store_true", help="echo: skip the JACK device run")
    p.add_argument("--seed", type=int, default=1, help="echo: which simulated rooms and scenes")
    p.add_argument("--utterances", type=int, default=35,
                   help="voice: visitor turns (whole demo dialogues), each said by two voices")
    p.add_argument("--lang", choices=["en", "ja"], default="en", help="voice: the language")
    p.add_argument("--noise-db", type=float, default=None,
                   help="voice: crowd babble this many dB under the speech (default: none)")
    p.add_argument("--timed", type=int, default=8,
                   help="voice: questions through the loop at real speed for the latency")
    p.add_argument("--navigations", type=int, default=100, help="screen: browser navigations")
    p.add_argument("--seconds", type=float, default=0.0,
                   help="socket: seconds of the demo recording (default: all of it)")
    p.add_argument("--connections", type=int, default=1000,
                   help="socket: WebSocket connections the flood opens")
    p.add_argument("--megabytes", type=float, default=100.0,
                   help="socket: megabytes of frames the flood offers")
    p.add_argument("--pages", type=int, default=5000, help="size of the generated site")
    p.add_argument("--turns", type=int, default=400, help="timed turns per site")
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return int(args.func(args))
    except KioskError as exc:
        print(f"error: {exc.describe()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
