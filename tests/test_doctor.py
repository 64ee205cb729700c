"""`kiosk doctor` names every problem with its fix, and its exit status tells health."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kiosk.config import Config
from kiosk.doctor import FAIL, OK, WARN, Check, check_port, format_checks, healthy


def _doctor(config: Path, state: Path, *args: str) -> tuple[int, dict[str, dict[str, Any]]]:
    env = {**os.environ, "KIOSK_STATE_DIR": str(state)}
    env.pop("KIOSK_MODELS_DIR", None)
    done = subprocess.run([sys.executable, "-m", "kiosk", "--config", str(config), "doctor",
                           "--json", *args], capture_output=True, text=True, env=env,
                          timeout=300)
    return done.returncode, {c["name"]: c for c in json.loads(done.stdout)}


def test_a_broken_setup_is_named_with_fixes(tmp_path: Path) -> None:
    config = tmp_path / "kiosk.toml"
    config.write_text(f"""
[paths]
models_dir = "{tmp_path / 'no-models'}"
site = "{tmp_path / 'no-site'}"
[echo]
mode = "off"
[console]
port = "/dev/ttyNOPE9"
""")
    rc, checks = _doctor(config, tmp_path / "state", "--quick")
    assert rc == 1
    assert checks["models"]["status"] == FAIL and "kiosk models install" in checks["models"]["fix"]
    assert checks["site"]["status"] == FAIL and "paths.site" in checks["site"]["fix"]
    assert checks["console"]["status"] == FAIL and "/dev/ttyNOPE9" in checks["console"]["detail"]
    assert checks["echo"]["status"] == "warn"
    assert checks["resources"]["status"] == OK


@pytest.mark.slow
def test_a_provisioned_setup_on_a_silent_microphone(tmp_path: Path, models_dir: Path,
                                                    jack_server: None) -> None:
    config = tmp_path / "kiosk.toml"
    config.write_text(f'[paths]\nmodels_dir = "{models_dir}"\n[echo]\nmode = "hardware"\n')
    state = tmp_path / "state"
    rc, checks = _doctor(config, state, "--quick")
    assert checks["index"]["status"] == FAIL and checks["index"]["fix"] == "kiosk index"
    env = {**os.environ, "KIOSK_STATE_DIR": str(state)}
    subprocess.run([sys.executable, "-m", "kiosk", "--config", str(config), "index"], env=env,
                   check=True, capture_output=True, timeout=300)
    rc, checks = _doctor(config, state)
    assert {n for n, c in checks.items() if c["status"] != OK} == {"audio"}, checks
    # JACK's dummy capture delivers exact zeros: what an unplugged microphone looks like
    assert "digital silence" in checks["audio"]["detail"] and checks["audio"]["fix"]
    assert rc == 1


def test_ports_and_the_report() -> None:
    assert check_port("bridge", "", "bridge.port", required=False).status == OK
    assert check_port("bridge", "loop://", "bridge.port").status == OK
    missing = check_port("bridge", "/dev/ttyNOPE9", "bridge.port")
    assert missing.status == FAIL and "bridge.port" in missing.fix
    report = format_checks([Check("a", OK, "fine"), missing])
    assert "fix: plug it in" in report and report.endswith("1 failed, 0 warnings, 1 ok")
    assert not healthy([missing]) and healthy([Check("a", "warn", "meh")])
    assert Config().echo.mode == "speex"


def test_a_missing_bridge_port_is_reported_once_when_the_screen_needs_it() -> None:
    import dataclasses

    from kiosk.config import BridgeConfig, ScreenConfig
    from kiosk.doctor import check_screen

    cfg = dataclasses.replace(Config(), screen=ScreenConfig(source="bridge"),
                              bridge=BridgeConfig(port="/dev/ttyNOPE9"))
    screen = check_screen(cfg)  # the bridge check names the port (run_checks: required)
    assert screen.status == OK and "bridge" in screen.detail
    assert "/dev/ttyNOPE9" not in screen.detail + screen.fix


def test_the_site_sync_is_reported_with_its_last_error(tmp_path: Path) -> None:
    from kiosk.config import with_value
    from kiosk.doctor import check_sync
    from kiosk.sync.folder import write_state

    assert check_sync(Config(), tmp_path).status == OK  # no sync configured
    cfg = with_value(Config(), "site.sync_url", "https://venue.example/sitemap.xml")
    never = check_sync(cfg, tmp_path)
    assert never.status == WARN and "never been synced" in never.detail
    now = 2_000_000_000.0
    write_state(tmp_path / "sync-state.json", {"ok": False, "last_success": now - 7200,
                                               "error": "sync: robots.txt could not be read"})
    failed = check_sync(cfg, tmp_path, now)
    assert failed.status == WARN and "robots.txt" in failed.detail and "2 h ago" in failed.detail
    write_state(tmp_path / "sync-state.json", {"ok": True, "last_success": now - 3 * 86_400})
    assert "kiosk-sync.timer" in check_sync(cfg, tmp_path, now).fix
    write_state(tmp_path / "sync-state.json", {"ok": True, "last_success": now - 3600,
                                               "pages": 44, "requests": 47})
    assert check_sync(cfg, tmp_path, now).status == OK
