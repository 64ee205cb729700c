"""`kiosk doctor`: the appliance's health, each problem with its fix. The exit status is 0
when nothing failed (warnings allowed), 1 otherwise.

Checks read the configuration they are given; the ones that touch hardware (recording a
second from the microphone) are skipped with --quick.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kiosk.config import Config
from kiosk.errors import KioskError

OK, WARN, FAIL = "ok", "warn", "FAIL"
MIN_FREE_DISK_MB = 500
MIN_FREE_MEMORY_MB = 800


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str
    fix: str = ""


def _guard(name: str, check: Callable[[], Check]) -> Check:
    """A check that breaks reports itself as failed, with the error's own fix."""
    try:
        return check()
    except KioskError as exc:
        return Check(name, FAIL, exc.message, exc.fix)
    except Exception as exc:  # a doctor must finish its round whatever it finds
        return Check(name, FAIL, f"{type(exc).__name__}: {exc}", "see the log: kiosk -v doctor")


def check_config(config_path: Path) -> Check:
    """The configuration file loads; when it does not, the service runs on the last good one
    (or the defaults), and this says which and how to mend the file."""
    from kiosk.configstore import previous_path, try_load

    if not config_path.is_file():
        return Check("config", OK, f"no file at {config_path}: the defaults")
    loaded = try_load(config_path)
    if isinstance(loaded, str):
        using = "the previous good file" if previous_path(config_path).is_file() else \
            "the defaults"
        return Check("config", FAIL, f"{config_path} is unusable ({loaded}); running on {using}",
                     f"correct it by hand, or move it aside: mv {config_path} "
                     f"{config_path}.bad")
    return Check("config", OK, f"{config_path} loads")


def check_models(cfg: Config) -> Check:
    from kiosk.models import load_manifest, verify

    manifest = load_manifest()
    folder = cfg.paths.models_path()
    wanted = [n for n, e in manifest.items() if e.install_by_default or n == cfg.brain.embedder]
    bad = [n for n in wanted if not verify(manifest[n], folder)]
    if bad:
        return Check("models", FAIL, f"missing or corrupt in {folder}: {', '.join(bad)}",
                     f"kiosk models install {' '.join(bad)}")
    return Check("models", OK, f"{len(wanted)} models verified by sha256 in {folder}")


def check_site(cfg: Config) -> Check:
    from kiosk.retrieval.site import load_site

    site = cfg.paths.site_path()
    if not site.is_dir():
        return Check("site", FAIL, f"site folder {site} does not exist",
                     "kiosk config set paths.site FOLDER")
    pages, problems = load_site(site)
    if problems:
        listed = "; ".join(f"{Path(p.path).name}: {p.message}" for p in problems[:3])
        return Check("site", WARN, f"{len(pages)} pages, {len(problems)} with problems: {listed}",
                     "fix those pages, then kiosk index")
    return Check("site", OK, f"{len(pages)} pages in {site}")


def check_index(cfg: Config) -> Check:
    from kiosk.retrieval.index import SiteIndex
    from kiosk.retrieval.site import load_site

    site = cfg.paths.site_path()
    path = cfg.paths.index_path(cfg.brain.embedder, site)
    if not path.is_file():
        return Check("index", FAIL, f"no site index at {path}", "kiosk index")
    index = SiteIndex.load(path)
    pages, _ = load_site(site)
    built = {p.page_id: p.content_hash for p in index.pages}
    now = {p.page_id: p.content_hash for p in pages}
    stale = sorted(k for k in now.keys() | built.keys() if now.get(k) != built.get(k))
    if stale:
        return Check("index", WARN, f"{len(stale)} pages changed since the index was built "
                     f"(e.g. {stale[0]}); the service updates it when it starts",
                     "kiosk index (or restart the service)")
    return Check("index", OK, f"{len(index.pages)} pages, up to date ({path.name})")


def check_audio(cfg: Config, record_s: float) -> Check:
    from kiosk.audio.devices import device_rate, find_device, record
    from kiosk.audio.format import clipped_fraction, level_dbfs

    output = find_device(cfg.audio.output_device, "output")
    microphone = find_device(cfg.audio.input_device, "input")
    rates = f"{device_rate(microphone, 'input')}/{device_rate(output, 'output')} Hz"
    names = f"mic {cfg.audio.input_device!r}, speaker {cfg.audio.output_device!r} ({rates})"
    if record_s <= 0:
        return Check("audio", OK, f"{names}; level not measured (--quick)")
    samples = record(record_s, cfg.audio.input_device)
    level = level_dbfs(samples)
    if level <= -90.0:
        return Check("audio", FAIL, f"{names}; the microphone delivers digital silence "
                     f"({level:.0f} dBFS)", "check the cable and the mixer: alsamixer, capture on")
    if clipped_fraction(samples) > 0.01:
        return Check("audio", WARN, f"{names}; the microphone clips ({level:.0f} dBFS)",
                     "lower the capture gain in alsamixer")
    return Check("audio", OK, f"{names}; room level {level:.0f} dBFS")


def check_echo(cfg: Config) -> Check:
    mode = cfg.echo.mode
    if mode == "off":
        return Check("echo", WARN, "echo.mode off: the avatar may hear itself (the self-echo "
                     "guard still drops transcripts of its own reply)",
                     "kiosk config set echo.mode speex (or hardware with an AEC microphone)")
    if mode == "speex":
        from kiosk.audio.echo import speex_available

        if not speex_available():
            return Check("echo", FAIL, "echo.mode speex but libspeexdsp is not installed",
                         "apt-get install libspeexdsp1")
        return Check("echo", OK, f"software cancellation, filter {cfg.echo.filter_length_ms} "
                     f"ms, delay {cfg.echo.delay_ms} ms, loudspeaker {cfg.echo.loudspeaker}; "
                     "measure it: kiosk doctor --echo")
    return Check("echo", OK, "hardware: the microphone array cancels echo; measure it: "
                 "kiosk doctor --echo")


def check_echo_measured(cfg: Config, probe_s: float = 6.0) -> Check:
    """`kiosk doctor --echo`: a probe through the loudspeaker, measured at the microphone
    through the configured mode."""
    from kiosk.audio.duplex import DuplexStream
    from kiosk.audio.echo import measure, play_and_record, probe_signal
    from kiosk.wiring import echo_canceller

    stream = DuplexStream(cfg.audio.input_device, cfg.audio.output_device)
    stream.start()
    try:
        mic, reference = play_and_record(stream, probe_signal(probe_s))
    finally:
        stream.stop()
    report = measure(cfg.echo.mode, mic, reference, echo_canceller(cfg))
    detail = (f"mode {cfg.echo.mode}: delay {report.delay_ms:.0f} ms, echo at the microphone "
              f"{-report.echo_level_db:.0f} dB under the playback, ERLE {report.erle_db:.1f} dB "
              f"after convergence ({report.erle_first_s_db:.1f} dB in the first second)"
              + (f"; loudspeaker: {report.loudspeaker}" if report.loudspeaker else ""))
    advice = report.advice()
    if report.inaudible:
        return Check("echo-probe", OK, detail, advice)
    if cfg.echo.mode == "speex" and report.erle_db < 15:
        return Check("echo-probe", FAIL, detail, advice)
    status = OK if advice == "good" else WARN
    return Check("echo-probe", status, detail, "" if advice == "good" else advice)


def check_screen(cfg: Config) -> Check:
    source = cfg.screen.source
    if source == "fixed":
        page = cfg.screen.fixed_page or "(none)"
        return Check("screen", OK, f"fixed page {page}")
    if source == "devtools":
        from kiosk.screen.devtools import page_targets

        try:
            targets = page_targets(cfg.screen.devtools_url)
        except OSError as exc:
            return Check("screen", FAIL, f"kiosk browser not reachable at "
                         f"{cfg.screen.devtools_url} ({exc})",
                         "start it with --remote-debugging-port=9222 on 127.0.0.1")
        return Check("screen", OK, f"kiosk browser shows {len(targets)} page(s)")
    # the port itself is the bridge check's (one problem reported once)
    return Check("screen", OK, "the page comes from the touchscreen over the serial bridge")


def check_port(name: str, port: str, setting: str, *, required: bool = True) -> Check:
    if not port:
        status = FAIL if required else OK
        return Check(name, status, f"{setting} is empty" + ("" if required else " (not used)"),
                     f"kiosk config set {setting} /dev/ttyUSB0" if required else "")
    if "://" in port:
        return Check(name, OK, f"{port} (pyserial URL)")
    if not os.path.exists(port):
        return Check(name, FAIL, f"{setting} {port} does not exist (unplugged?)",
                     f"plug it in, or kiosk config set {setting} DEVICE")
    if not os.access(port, os.R_OK | os.W_OK):
        return Check(name, FAIL, f"{port} is not readable and writable by this user",
                     "add the user to the dialout group")
    return Check(name, OK, port)


def check_console(cfg: Config, config_path: Path) -> Check:
    port = check_port("console", cfg.console.port, "console.port", required=False)
    if port.status != OK or not cfg.console.port:
        return port
    if not config_path.with_name("admin-pin.json").is_file():
        return Check("console", FAIL, f"{cfg.console.port}, but no admin PIN is set",
                     "kiosk config set-pin (reads the PIN from standard input)")
    return Check("console", OK, f"{cfg.console.port}, PIN set")


def check_sync(cfg: Config, state_dir: Path, now_s: float | None = None) -> Check:
    """The venue's website sync (kiosk site sync): when it last succeeded, and why not."""
    import time

    from kiosk.sync.folder import read_state

    if not cfg.site.sync_url:
        return Check("sync", OK, "site.sync_url is empty: the site folder is kept by hand")
    state = read_state(state_dir / "sync-state.json")
    now = time.time() if now_s is None else now_s
    if not state:
        return Check("sync", WARN, f"{cfg.site.sync_url} has never been synced",
                     f"it runs at {cfg.site.sync_time}; now: kiosk site sync")
    last = state.get("last_success")
    age = f"{(now - last) / 3600:.0f} h ago" if isinstance(last, int | float) else "never"
    if not state.get("ok"):
        return Check("sync", WARN, f"the last sync failed ({state.get('error') or 'unknown'}); "
                     f"last success {age}; the previous site keeps serving",
                     "fix what the error names, then: kiosk site sync")
    if isinstance(last, int | float) and now - last > 2 * 86_400:
        return Check("sync", WARN, f"last sync {age}", "is kiosk-sync.timer enabled? "
                     "systemctl enable --now kiosk-sync.timer")
    return Check("sync", OK, f"last sync {age}: {state.get('pages')} pages, "
                 f"{state.get('requests')} requests")


def check_resources(state_dir: Path) -> Check:
    where = state_dir if state_dir.exists() else Path("/")
    free_mb = shutil.disk_usage(where).free // 2**20
    memory_mb = _available_memory_mb()
    detail = f"disk {free_mb} MB free at {where}, memory {memory_mb} MB available"
    if free_mb < MIN_FREE_DISK_MB:
        return Check("resources", FAIL, detail, "free disk space (old logs: journalctl "
                     "--vacuum-size=100M)")
    if memory_mb < MIN_FREE_MEMORY_MB:
        return Check("resources", WARN, detail, "close other programs; the English engines "
                     "need about 700 MB")
    return Check("resources", OK, detail)


def _available_memory_mb() -> int:
    with open("/proc/meminfo", encoding="ascii") as info:
        for line in info:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


def check_echo_path(cfg: Config, state_dir: Path) -> Check:
    """`kiosk doctor --echo`: the echo path the service keeps across starts."""
    from kiosk.audio.echo_path import FILE_NAME, describe

    if cfg.echo.mode != "speex":
        return Check("echo-path", OK, f"echo.mode {cfg.echo.mode}: no software canceller, no "
                     "echo path kept")
    return Check("echo-path", OK, describe(state_dir / FILE_NAME))


def run_checks(cfg: Config, config_path: Path, state_dir: Path, *,
               record_s: float = 1.0, echo_probe: bool = False) -> list[Check]:
    probe = ([_guard("echo-path", lambda: check_echo_path(cfg, state_dir)),
              _guard("echo-probe", lambda: check_echo_measured(cfg))] if echo_probe else [])
    return [
        *probe,
        _guard("config", lambda: check_config(config_path)),
        _guard("models", lambda: check_models(cfg)),
        _guard("site", lambda: check_site(cfg)),
        _guard("index", lambda: check_index(cfg)),
        _guard("audio", lambda: check_audio(cfg, record_s)),
        _guard("echo", lambda: check_echo(cfg)),
        _guard("screen", lambda: check_screen(cfg)),
        _guard("bridge", lambda: check_port("bridge", cfg.bridge.port, "bridge.port",
                                            required=cfg.screen.source == "bridge")),
        _guard("console", lambda: check_console(cfg, config_path)),
        _guard("sync", lambda: check_sync(cfg, state_dir)),
        _guard("resources", lambda: check_resources(state_dir)),
    ]


def format_checks(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        lines.append(f"[{check.status:>4}] {check.name:<9} {check.detail}")
        if check.fix and check.status != OK:
            lines.append(f"{'':17}fix: {check.fix}")
    failed = sum(c.status == FAIL for c in checks)
    warned = sum(c.status == WARN for c in checks)
    lines.append(f"{failed} failed, {warned} warnings, {len(checks) - failed - warned} ok")
    return "\n".join(lines)


def healthy(checks: list[Check]) -> bool:
    return not any(c.status == FAIL for c in checks)
