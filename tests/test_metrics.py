"""Metrics in Prometheus' text format, served by Debian's real prometheus-node-exporter from
its textfile folder, scraped and parsed with prometheus_client's parser; the example alert
rules pass promtool's checks and unit tests; the dashboard's queries are valid PromQL over
metrics that exist."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kiosk.metrics import Facts, LoopCounts, ServiceMetrics, sync_registry, write_metrics
from kiosk.sync.folder import write_state

REPO = Path(__file__).resolve().parent.parent
MONITORING = REPO / "scripts" / "monitoring"

SECRET = "my daughter's name is Hanako"


def _turn(kind: str, act: str | None, page: str | None, **ms: float) -> dict[str, object]:
    return {"utterance": SECRET, "query": SECRET, "reply": "The cafe is on floor 2.",
            "lang": "en", "act": act, "kind": kind, "page": page,
            "speech_start_ms": 1000, "last_voiced_ms": 3000, "eos_decided_ms": 3300,
            "reply_start_ms": int(ms.get("reply_start_ms", 3900)),
            "answer_start_ms": int(ms.get("answer_start_ms", 0)),
            "asr_ms": ms.get("asr_ms", 200.0), "brain_ms": ms.get("brain_ms", 30.0),
            "first_audio_ms": ms.get("first_audio_ms", 250.0)}


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _service_metrics(tmp_path: Path) -> ServiceMetrics:
    index = tmp_path / "index.npz"
    index.write_bytes(b"x")
    counts = LoopCounts(turn_errors=1, bargeins=2, echo_utterances_dropped=3,
                        repeats_dropped=4, device_reopens=5, echo_paths_restored=6,
                        echo_paths_dropped=7, echo_path_saves=8)
    metrics = ServiceMetrics(lambda: counts, Facts(config_fallback=True, index_pages=42,
                                                   index_path=index), clock=lambda: 1234.5)
    metrics.observe_turn(_turn("independent", None, "en/cafe.md"))
    metrics.observe_turn(_turn("immediate", None, "en/cafe.md", reply_start_ms=5000))
    # an acknowledgement at 3.2 s, the answer held until 3.9 s
    metrics.observe_turn(_turn("immediate", None, "en/cafe.md", reply_start_ms=3200,
                               answer_start_ms=3900))
    metrics.observe_turn(_turn("independent", None, None))
    metrics.observe_turn(_turn("act", "greeting", None))
    return metrics


def test_turns_are_counted_by_kind_and_outcome_without_visitor_words(tmp_path: Path) -> None:
    metrics = _service_metrics(tmp_path)
    assert metrics.write(tmp_path)
    text = (tmp_path / "kiosk.prom").read_text()
    assert "Hanako" not in text and "cafe" not in text  # no words, no page names
    got = _samples(text)

    def value(name: str, **labels: str) -> float:
        return got[(name, frozenset(labels.items()))]

    assert value("kiosk_turns_total", kind="independent", outcome="answered") == 1
    assert value("kiosk_turns_total", kind="independent", outcome="refused") == 1
    assert value("kiosk_turns_total", kind="immediate", outcome="answered") == 2
    assert value("kiosk_turns_total", kind="act", outcome="social") == 1
    assert value("kiosk_turns_total", kind="distant", outcome="refused") == 0  # exists at 0
    assert value("kiosk_turns_total", kind="immediate", outcome="unclear") == 0

    assert value("kiosk_response_seconds_count") == 5
    # end of speech (3.0 s) -> first reply sample (3.2, 3.9 and 5.0 s): in the 0.25, 1 and 2 s
    # buckets; the answer after an acknowledgement counted apart
    assert value("kiosk_response_seconds_bucket", le="0.25") == 1
    assert value("kiosk_response_seconds_bucket", le="1.0") == 4
    assert value("kiosk_response_seconds_bucket", le="2.0") == 5
    assert value("kiosk_answer_seconds_count") == 1
    assert value("kiosk_answer_seconds_bucket", le="0.75") == 0
    assert value("kiosk_answer_seconds_bucket", le="1.0") == 1
    assert value("kiosk_brain_seconds_sum") == pytest.approx(0.15)
    for name, expected in (("kiosk_turn_errors_total", 1), ("kiosk_bargeins_total", 2),
                           ("kiosk_echo_utterances_dropped_total", 3),
                           ("kiosk_repeats_dropped_total", 4),
                           ("kiosk_audio_device_reopens_total", 5), ("kiosk_config_fallback", 1),
                           ("kiosk_echo_paths_restored_total", 6),
                           ("kiosk_echo_paths_dropped_total", 7),
                           ("kiosk_echo_path_saves_total", 8),
                           ("kiosk_site_pages", 42), ("kiosk_up", 1),
                           ("kiosk_metrics_written_timestamp_seconds", 1234.5)):
        assert value(name) == expected, name
    assert value("kiosk_process_resident_memory_bytes") > 10_000_000
    assert value("kiosk_site_index_timestamp_seconds") > 1.7e9


def test_the_writer_rewrites_the_file_and_leaves_up_0_at_a_clean_stop(tmp_path: Path) -> None:
    metrics = ServiceMetrics()
    seen: list[float] = []

    async def run() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(write_metrics(metrics, tmp_path, 0.05, stop,
                                                 check_models=lambda: 2))
        for _ in range(3):
            await asyncio.sleep(0.08)
            seen.append(_samples((tmp_path / "kiosk.prom").read_text())[
                ("kiosk_metrics_written_timestamp_seconds", frozenset())])
        stop.set()
        await task

    asyncio.run(run())
    assert seen == sorted(seen) and len(set(seen)) == 3  # rewritten each interval
    final = _samples((tmp_path / "kiosk.prom").read_text())
    assert final[("kiosk_up", frozenset())] == 0
    assert final[("kiosk_model_check_failures", frozenset())] == 2
    assert not [p for p in tmp_path.iterdir() if p.name != "kiosk.prom"]  # no temp files left


def test_an_unwritable_folder_costs_a_warning_not_the_kiosk(tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture
                                                            ) -> None:
    assert not ServiceMetrics().write(tmp_path / "missing")
    assert "metrics.textfile_dir" in caplog.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def node_exporter(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    exe = shutil.which("prometheus-node-exporter")
    if exe is None:
        pytest.fail("prometheus-node-exporter is missing: apt-get install "
                    "prometheus-node-exporter (scripts/setup.sh does)")
    folder = tmp_path / "textfile"
    folder.mkdir()
    port = _free_port()
    proc = subprocess.Popen([exe, f"--web.listen-address=127.0.0.1:{port}",
                             "--collector.disable-defaults", "--collector.textfile",
                             f"--collector.textfile.directory={folder}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/metrics"
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"node exporter did not start: {proc.stderr.read()!r}"
                            if proc.stderr else "node exporter did not start")
            time.sleep(0.1)
    try:
        yield url, folder
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_node_exporter_serves_the_service_and_sync_files(
        node_exporter: tuple[str, Path], tmp_path: Path) -> None:
    url, folder = node_exporter
    _service_metrics(tmp_path).write(folder)
    state = tmp_path / "sync-state.json"
    write_state(state, {"ok": True, "last_success": 1.7e9, "last_attempt": 1.7e9,
                        "pages": 22, "requests": 25, "failed": 0, "duration_s": 3.5})
    from kiosk.metrics import write_textfile

    assert write_textfile(sync_registry(state), folder, "kiosk_sync.prom")
    got = _samples(httpx.get(url, timeout=5).text)
    # both files were read, without errors (duplicate names across files would be one)
    assert got[("node_textfile_scrape_error", frozenset())] == 0
    assert got[("kiosk_turns_total", frozenset({("kind", "independent"),
                                                 ("outcome", "answered")}))] == 1
    assert got[("kiosk_up", frozenset())] == 1
    assert got[("kiosk_site_sync_pages", frozenset())] == 22
    assert got[("kiosk_site_sync_ok", frozenset())] == 1
    assert got[("kiosk_response_seconds_count", frozenset())] == 5
    names = {name for name, _ in got if name.startswith("kiosk_")}
    assert all(re.fullmatch(r"kiosk_[a-z0-9_]+", n) for n in names)


def _promtool() -> str:
    exe = shutil.which("promtool")
    if exe is None:
        pytest.fail("promtool is missing: apt-get install prometheus (scripts/setup.sh does)")
    return exe


def test_the_alert_rules_check_and_pass_their_unit_tests() -> None:
    promtool = _promtool()
    for args in (["check", "rules", "kiosk-alerts.yml"],
                 ["test", "rules", "kiosk-alerts.test.yml"]):
        done = subprocess.run([promtool, *args], cwd=MONITORING, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


def _emitted_names(tmp_path: Path) -> set[str]:
    metrics = _service_metrics(tmp_path)
    state = tmp_path / "state.json"
    write_state(state, {"ok": True, "last_success": 1.0, "last_attempt": 1.0, "pages": 1,
                        "requests": 1, "failed": 0, "duration_s": 1.0})
    from prometheus_client import generate_latest

    text = generate_latest(metrics.registry).decode() + generate_latest(
        sync_registry(state)).decode()
    return {s[0] for s in _samples(text)}


def test_the_dashboard_and_alerts_query_metrics_that_exist(tmp_path: Path) -> None:
    names = _emitted_names(tmp_path)
    dashboard = json.loads((MONITORING / "grafana-kiosk-fleet.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += re.findall(r"expr: (.*)", (MONITORING / "kiosk-alerts.yml").read_text())
    used = {n for e in exprs for n in re.findall(r"\bkiosk_[a-z0-9_]+", e)}
    assert used and used <= names, used - names
    # the dashboard's queries are valid PromQL: promtool checks them as recording rules
    rules = tmp_path / "dashboard-rules.yml"
    rules.write_text("groups:\n  - name: dashboard\n    rules:\n" + "".join(
        f"      - record: dashboard:q{i}\n"
        f"        expr: {json.dumps(e.replace('$instance', '.*'))}\n"
        for i, e in enumerate(exprs)))
    done = subprocess.run([_promtool(), "check", "rules", str(rules)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_turn_cut_off_mid_phrase_counts_as_unclear_not_refused(tmp_path: Path) -> None:
    metrics = ServiceMetrics()
    metrics.observe_turn({**_turn("ellipsis", None, None), "unclear": True})
    assert metrics.write(tmp_path)
    got = _samples((tmp_path / "kiosk.prom").read_text())
    assert got[("kiosk_turns_total", frozenset({"kind": "ellipsis",
                                                "outcome": "unclear"}.items()))] == 1
    assert got[("kiosk_turns_total", frozenset({"kind": "ellipsis",
                                                "outcome": "refused"}.items()))] == 0
