"""The fleet role for real: ansible-playbook (ansible-core from PyPI) against localhost with a
local connection into a staging root: a dry run, an install that places the configuration and
syncs the site from a local HTTP server, a second run that changes nothing, and a settings
change that touches only the configuration."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kiosk.bench.venue import VenueServer, VenueSite

REPO = Path(__file__).resolve().parent.parent
PLAYBOOK = REPO / "scripts" / "ansible" / "site.yml"


_TASK = re.compile(r"^(?:TASK|RUNNING HANDLER) \[kiosk : (.*?)\] \*+$")


@dataclass
class Run:
    changed: list[str]  # names of the tasks (and handlers) that changed something
    recap_changed: int


def _playbook(inventory: Path, *args: str) -> Run:
    exe = Path(sys.executable).with_name("ansible-playbook")
    if not exe.is_file():
        pytest.fail("ansible-playbook is missing: pip install -e '.[dev]' (scripts/setup.sh)")
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
           "ANSIBLE_LOCAL_TEMP": str(inventory.parent / "ansible-tmp"),
           "ANSIBLE_HOME": str(inventory.parent / "ansible-home")}
    done = subprocess.run([str(exe), "-i", str(inventory), str(PLAYBOOK), *args], env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    changed: list[str] = []
    task = ""
    for line in done.stdout.splitlines():
        heading = _TASK.match(line)
        if heading:
            task = heading.group(1)
        elif line.startswith("changed: [") and task not in changed:
            changed.append(task)
    recap = re.search(r"kiosk-test\s*:.*\bchanged=(\d+)", done.stdout)
    assert recap, done.stdout[-2000:]
    return Run(changed, int(recap.group(1)))


def _inventory(path: Path, root: Path, models_dir: Path, **host: Any) -> Path:
    hostvars = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                "kiosk_destdir": str(root), "kiosk_prefix": "/opt/kiosk",
                "kiosk_models_from": str(models_dir), "kiosk_build_dir": str(path.parent),
                **host}
    path.write_text(json.dumps({"kiosks": {"hosts": {"kiosk-test": hostvars}}}))
    return path


@pytest.mark.slow
def test_the_role_installs_configures_syncs_and_is_idempotent(tmp_path: Path,
                                                              models_dir: Path) -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.fail("the role releases the checkout's HEAD: run the tests in a git checkout")
    root = tmp_path / "root"
    pin_hash = subprocess.run([sys.executable, "-m", "kiosk", "config", "pin-hash"],
                              input="246810\n", capture_output=True, text=True,
                              check=True).stdout.strip()
    site = VenueSite.demo(count=3)
    with VenueServer(site) as server:
        host = {"kiosk_site_url": f"{server.url}/sitemap.xml", "kiosk_language": "en",
                "kiosk_input_device": "ReSpeaker 4 Mic Array", "kiosk_pin_hash": pin_hash,
                "kiosk_settings": {"tts": {"volume": 0.8}, "site": {"sync_delay_ms": 0}}}
        inventory = _inventory(tmp_path / "inventory.json", root, models_dir, **host)

        dry = _playbook(inventory, "--check")
        assert not (root / "opt/kiosk").exists()  # a dry run installs nothing...
        assert "Installed by scripts/install.sh (once per release)" in dry.changed  # ...but says


        first = _playbook(inventory)
        changed = first.changed
        assert {"Installed by scripts/install.sh (once per release)",
                "Configuration of this kiosk (validated before it is placed)",
                "Console PIN (its stored form)", "Sync the site"} <= set(changed)
        kiosk = root / "opt/kiosk/lib/kiosk-avatar/venv/bin/kiosk"
        etc, state = root / "etc/kiosk-avatar", root / "var/lib/kiosk-avatar"
        env = {"KIOSK_CONFIG": str(etc / "kiosk.toml"), "KIOSK_STATE_DIR": str(state),
               "KIOSK_MODELS_DIR": str(state / "models"), "PATH": "/usr/bin:/bin"}

        def get(key: str) -> str:
            return subprocess.run([str(kiosk), "config", "get", key], env=env,
                                  capture_output=True, text=True, check=True).stdout.strip()

        assert get("audio.input_device") == "ReSpeaker 4 Mic Array"
        assert get("tts.volume") == "0.8" and get("brain.language") == "en"
        assert get("site.sync_url") == f"{server.url}/sitemap.xml"
        assert (etc / "admin-pin.json").read_text() == pin_hash
        sync_state = json.loads((state / "sync-state.json").read_text())
        assert sync_state["ok"] and sync_state["pages"] == 3
        assert (state / "site" / "en" / "index.html").is_file()
        asked = subprocess.run([str(kiosk), "ask"], input="when are you open?\n", env=env,
                               capture_output=True, text=True, timeout=300)
        assert "en/hours.html" in asked.stdout or "open" in asked.stdout.lower(), asked.stdout

        second = _playbook(inventory)
        assert second.changed == [] and second.recap_changed == 0  # idempotent
        requests = len(site.requests)

        host["kiosk_settings"] = {"tts": {"volume": 0.6}, "site": {"sync_delay_ms": 0}}
        third = _playbook(_inventory(tmp_path / "inventory.json", root, models_dir, **host))
    # only the configuration changed: no reinstall; the site is synced again, and as it did
    # not change (every page a 304), the sync changes nothing either
    assert third.changed == ["Configuration of this kiosk (validated before it is placed)"]
    assert get("tts.volume") == "0.6"
    page_requests = [r for r in site.requests[requests:] if r.path in site.pages]
    assert page_requests and {r.status for r in page_requests} == {304}


def test_the_role_is_ansible_lint_clean(tmp_path: Path) -> None:
    lint = Path(sys.executable).with_name("ansible-lint")
    if not lint.is_file():
        pytest.fail("ansible-lint is missing: pip install -e '.[dev]' (scripts/setup.sh)")
    done = subprocess.run([str(lint), "--offline", "--nocolor", "site.yml", "roles/kiosk"],
                          cwd=PLAYBOOK.parent, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "ANSIBLE_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "production" in done.stdout + done.stderr  # the strictest profile passes


def test_the_template_writes_settings_outside_the_bmp_as_toml_reads_them(tmp_path: Path) -> None:
    """Ansible's to_json wrote 🎉 as the surrogate pair \\ud83c\\udf89, which TOML refuses: a valid
    setting failed `kiosk config check` and the role stopped. Rendered here as the template
    module does (its Jinja settings, Ansible's own filters), then loaded strictly."""
    import jinja2
    from ansible.plugins.filter.core import combine, to_json

    from kiosk.config import load_config

    env = jinja2.Environment(trim_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters.update(to_json=to_json, combine=combine)
    template = env.from_string((PLAYBOOK.parent / "roles" / "kiosk" / "templates" /
                                "kiosk.toml.j2").read_text(encoding="utf-8"))
    settings = {"screen": {"fixed_page": "ja/イベント🎉.html"},
                "audio": {"input_device": "USB Mic \U0001d11e \x7f \"quoted\" \\ back"},
                "tts": {"volume": 0.7}, "logging": {"store_transcripts": True}}
    text = template.render(kiosk_config_base={"brain": {"language": "ja"}},
                           kiosk_settings=settings)
    (tmp_path / "kiosk.toml").write_text(text, encoding="utf-8")
    cfg = load_config(tmp_path / "kiosk.toml")
    assert cfg.screen.fixed_page == "ja/イベント🎉.html"
    assert cfg.audio.input_device == "USB Mic \U0001d11e \x7f \"quoted\" \\ back"
    assert cfg.tts.volume == 0.7 and cfg.logging.store_transcripts and cfg.brain.language == "ja"
