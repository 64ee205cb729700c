"""One machine's figures for scripts/check-arm64.sh: run with the Python of an installed
kiosk-avatar (the checkout's .venv on x86-64, the installed venv in the arm64 root), it runs
each step and writes one JSON file, rewritten after every step: a step that fails or hangs
records its own error and wall time, and the steps before it are kept.

    .venv/bin/python scripts/arm64_probe.py --out probe-x86_64.json [--steps ask,eval]

Steps: platform, models, index, doctor, ask (the demo script's questions through `kiosk ask`,
both languages), eval (the demo dialogues), voice-en, voice-ja (`kiosk bench voice`, a few
utterances), bridge (the firmware-bridge simulator's handshake over a pty), systemd
(`systemd-analyze verify` and `security --offline=yes` on the units). scripts/arm64_compare.py
compares two such files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
UNITS = ("kiosk.service", "kiosk-console.service", "kiosk-restart.path", "kiosk-restart.service",
         "kiosk-sync.service", "kiosk-sync.timer")
HARDENED = ("kiosk.service", "kiosk-console.service", "kiosk-sync.service")
PACKAGES = ("numpy", "onnxruntime", "onnxruntime-extensions", "onnx", "tokenizers",
            "ctranslate2", "piper-tts", "pyopenjtalk-plus", "pocketsphinx", "vosk",
            "sounddevice", "cysystemd", "sudachidict-small")
STEPS = ("platform", "models", "index", "doctor", "ask", "eval", "voice-en", "voice-ja",
         "bridge", "systemd")


def kiosk(*args: str, stdin: str | None = None, timeout: float = 3600.0) -> dict[str, Any]:
    """A kiosk command with this Python: its exit status, stdout and the tail of stderr."""
    proc = subprocess.run([sys.executable, "-m", "kiosk", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout)
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr[-2000:]}


def _last_json(text: str) -> Any:
    """The last line of `text` that parses as JSON (progress lines may come before it)."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith(("{", "[")):
            return json.loads(line)
    raise ValueError(f"no JSON in the output: {text[-500:]!r}")


# ------------------------------------------------------------------ steps


def step_platform(args: argparse.Namespace) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    versions: dict[str, str] = {}
    for name in PACKAGES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "(missing)"
    return {"machine": platform.machine(), "python": platform.python_version(),
            "libc": " ".join(platform.libc_ver()), "packages": versions}


def step_models(args: argparse.Namespace) -> dict[str, Any]:
    from kiosk.config import Config
    from kiosk.models import load_manifest, sha256_of

    out = kiosk("models", "verify")
    models_dir = Config().paths.models_path()
    files: dict[str, str] = {}
    for entry in load_manifest().values():
        for name in (entry.file, *entry.companions):
            path = models_dir / name
            files[name] = sha256_of(path) if path.is_file() else "(missing)"
    if out["rc"] != 0:
        raise RuntimeError(f"kiosk models verify: exit {out['rc']}: {out['stderr'][-800:]}"
                           f"{out['stdout'][-800:]}")
    return {"verify_rc": out["rc"], "files": files}


def step_doctor(args: argparse.Namespace) -> dict[str, Any]:
    out = kiosk("doctor", "--quick", "--json", timeout=1800)
    checks = _last_json(out["stdout"])
    return {"rc": out["rc"],
            "checks": {c["name"]: {"status": c["status"], "detail": c["detail"]}
                       for c in checks}}


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return h.hexdigest()[:16]


def step_index(args: argparse.Namespace) -> dict[str, Any]:
    """The demo site's index, built by this machine: the parts that must be the same bytes
    (pages, chunks, vocabulary, postings) and the vectors (float16: may differ in the last
    bits: checksums, and the vectors themselves for the comparer)."""
    import numpy as np

    from kiosk.config import Config
    from kiosk.models import default_state_dir

    cfg = Config()
    path = cfg.paths.index_path(cfg.brain.embedder)
    if not path.is_file():  # the first brain load builds and saves it
        kiosk("index", timeout=3600)
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(bytes(data["meta"]).decode())
        arrays = {k: np.ascontiguousarray(data[k]) for k in data.files if k != "meta"}
    text = json.dumps({k: meta[k] for k in sorted(meta) if k != "model"}, ensure_ascii=False,
                      sort_keys=True).encode()
    lexical = [arrays[k].tobytes() for k in ("indptr", "post_chunk", "post_tf", "chunk_len")]
    vectors = arrays["vectors"].astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1)
    return {
        "path": str(path.relative_to(default_state_dir())) if path.is_relative_to(
            default_state_dir()) else str(path),
        "model": meta.get("model"),
        "pages": len(meta["pages"]),
        "chunks": len(meta["chunks"]),
        "sha_text": _digest(text),
        "sha_postings": _digest(*lexical),
        "sha_idf": _digest(arrays["idf"].astype(np.float32).round(5).tobytes()),
        "sha_vectors": _digest(arrays["vectors"].tobytes()),
        "sha_vectors_q2": _digest(np.round(vectors * 100).astype(np.int16).tobytes()),
        "vectors_shape": list(vectors.shape),
        "vectors_sum": float(vectors.astype(np.float64).sum()),
        "vectors_norm_min": float(norms.min()) if len(norms) else 0.0,
        # every chunk's vector (rounded): the comparer reports the cosine between the machines'
        "vectors": np.round(vectors, 5).tolist(),
    }


ASK_LINE = re.compile(r"^\s+([0-9.]+)\s+(\S+)$")


def _ask(lang: str, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = []
    for turn in turns:
        lines.append(f":screen {turn['screen']}" if turn.get("screen") else ":screen")
        lines.append(turn["user"])
    out = kiosk("ask", "--lang", lang, "--explain", stdin="\n".join(lines) + "\n", timeout=3600)
    if out["rc"] != 0:
        raise RuntimeError(f"kiosk ask --lang {lang}: exit {out['rc']}: {out['stderr']}")
    answers: list[dict[str, Any]] = []
    for line in out["stdout"].splitlines():
        if line.startswith("visitor> "):
            answers.append({"question": line[len("visitor> "):], "reply": "", "top": []})
        elif line.startswith("avatar> ") and answers:
            answers[-1]["reply"] = line[len("avatar> "):]
        elif answers and (m := ASK_LINE.match(line)) and m.group(2) != "ms":
            answers[-1]["top"].append([m.group(2), float(m.group(1))])
    for answer in answers:
        answer["top1"] = answer["top"][0][0] if answer["top"] else None
    if len(answers) != len(turns):
        raise RuntimeError(f"kiosk ask --lang {lang}: {len(answers)} replies to {len(turns)} "
                           f"questions: {out['stdout'][-800:]}")
    return answers


def step_ask(args: argparse.Namespace) -> dict[str, Any]:
    """The demo script's conversations (kiosk/demo/script.json), typed into `kiosk ask`."""
    from kiosk.config import DEMO_DIR

    script = json.loads((DEMO_DIR / "script.json").read_text(encoding="utf-8"))
    return {part["lang"]: _ask(part["lang"], part["turns"]) for part in script}


def step_eval(args: argparse.Namespace) -> dict[str, Any]:
    from kiosk.config import DEMO_DIR

    result: dict[str, Any] = {}
    for lang in ("en", "ja"):
        out = kiosk("eval", "--dialogues", str(DEMO_DIR / "dialogues" / f"{lang}.jsonl"),
                    "--json", timeout=3600)
        if out["rc"] != 0:
            raise RuntimeError(f"kiosk eval ({lang}): exit {out['rc']}: {out['stderr']}")
        report = _last_json(out["stdout"])
        result[lang] = {name: {k: v for k, v in figures.items()
                               if isinstance(v, int | float | str)}
                        for name, figures in report["strategies"].items()}
    return result


def _voice(lang: str, args: argparse.Namespace) -> dict[str, Any]:
    out = kiosk("bench", "voice", "--lang", lang, "--utterances", str(args.utterances),
                "--timed", "1", "--paused", "0", "--json", timeout=args.voice_timeout)
    if out["rc"] != 0:
        raise RuntimeError(f"kiosk bench voice --lang {lang}: exit {out['rc']}: "
                           f"{out['stderr']}")
    report = _last_json(out["stdout"])
    keep = ("utterances", "error_rate", "error_rate_kana", "spoken_top1", "typed_top1",
            "examples", "language_detection", "peak_rss_mb")
    return {k: report[k] for k in keep if k in report}


def step_voice_en(args: argparse.Namespace) -> dict[str, Any]:
    return _voice("en", args)


def step_voice_ja(args: argparse.Namespace) -> dict[str, Any]:
    return _voice("ja", args)


def step_bridge(args: argparse.Namespace) -> dict[str, Any]:
    """The host's link against the simulated microcontroller on a pseudo-terminal: handshake,
    a ping and a command."""
    from firmware_bridge.link import BridgeLink
    from firmware_bridge.messages import Ack, Ping, Pong, SetAvatarState
    from firmware_bridge.simulator import Simulator

    with tempfile.TemporaryDirectory() as tmp:
        sim = Simulator(Path(tmp) / "ttyKIOSK", firmware="sim-arm64-probe")
        sim.plug()
        # emulation is slow: the time-outs are the protocol's times ten
        link = BridgeLink(str(sim.link), lambda message: None, timeout_s=3.0)
        started = time.monotonic()
        link.start()
        try:
            if not link.connected.wait(60):
                raise RuntimeError("no handshake within 60 s")
            handshake_s = time.monotonic() - started
            pong = link.request(Ping())
            ack = link.request(SetAvatarState("speaking"))
        finally:
            link.stop()
            sim.unplug()
    return {"connected": True, "firmware": link.firmware,
            "pong": isinstance(pong, Pong), "ack": isinstance(ack, Ack) and ack.ok,
            "simulator_state": sim.avatar_state, "retries": link.stats.retries,
            "handshake_s": round(handshake_s, 3)}


def _render_units(folder: Path) -> None:
    """The units as install.sh writes them, with this Python's kiosk as the program."""
    kiosk_bin = Path(sys.executable).with_name("kiosk")
    for unit in UNITS:
        text = (REPO / "systemd" / unit).read_text()
        text = text.replace("@PREFIX@/lib/kiosk-avatar/venv/bin/kiosk", str(kiosk_bin))
        text = text.replace("@PREFIX@/lib/kiosk-avatar/kiosk-restart-spaced",
                            str(REPO / "systemd" / "kiosk-restart-spaced"))
        text = text.replace("@PREFIX@", "/usr/local")
        (folder / unit).write_text(text)


def _check_units(folder: Path) -> dict[str, Any]:
    verify = subprocess.run(["systemd-analyze", "verify", *(str(folder / u) for u in UNITS)],
                            capture_output=True, text=True, timeout=600)
    exposure: dict[str, float | str] = {}
    for unit in HARDENED:
        out = subprocess.run(["systemd-analyze", "security", "--offline=yes",
                              str(folder / unit)], capture_output=True, text=True, timeout=600)
        match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", out.stdout)
        exposure[unit] = float(match.group(1)) if match else f"(no figure: {out.stderr[-300:]})"
    return {"verify_rc": verify.returncode, "verify_messages": verify.stderr.strip()[-2000:],
            "exposure": exposure}


def step_systemd(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("systemd-analyze") is None:
        raise RuntimeError("systemd-analyze is missing: apt-get install systemd")
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        _render_units(Path(tmp))
        result["rendered"] = _check_units(Path(tmp))
    installed = Path("/etc/systemd/system")
    if all((installed / u).is_file() for u in UNITS):  # what install.sh wrote (the arm64 root)
        result["installed"] = _check_units(installed)
    return result


STEP_FUNCTIONS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "platform": step_platform, "models": step_models, "doctor": step_doctor,
    "index": step_index, "ask": step_ask, "eval": step_eval, "voice-en": step_voice_en,
    "voice-ja": step_voice_ja, "bridge": step_bridge, "systemd": step_systemd,
}


def write_json(path: Path, probe: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(probe, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--steps", default=",".join(STEPS), help="comma-separated subset")
    parser.add_argument("--utterances", type=int, default=2, help="voice bench utterances")
    parser.add_argument("--voice-timeout", type=float, default=5400.0,
                        help="seconds one voice bench may take")
    args = parser.parse_args(argv)
    out = Path(args.out)
    steps = [s for s in args.steps.split(",") if s]
    unknown = [s for s in steps if s not in STEP_FUNCTIONS]
    if unknown:
        parser.error(f"unknown steps: {', '.join(unknown)} (known: {', '.join(STEPS)})")
    probe: dict[str, Any] = {"machine": platform.machine(), "started": time.time(),
                             "steps": {}, "finished": False}
    if out.is_file():  # steps run before (--steps reruns some) are kept
        try:
            old = json.loads(out.read_text(encoding="utf-8"))
            probe["steps"].update(old.get("steps", {}))
        except (OSError, ValueError):
            pass
    for name in steps:
        probe["steps"][name] = {"ok": False, "running": True, "seconds": None}
        write_json(out, probe)
        started = time.monotonic()
        print(f"probe: {name} ...", file=sys.stderr, flush=True)
        record: dict[str, Any]
        try:
            record = {"ok": True, "result": STEP_FUNCTIONS[name](args)}
        except BaseException as exc:  # one step's failure (or time-out) must not lose the rest
            if isinstance(exc, KeyboardInterrupt):
                probe["steps"][name] = {"ok": False, "error": "interrupted",
                                        "seconds": round(time.monotonic() - started, 1)}
                write_json(out, probe)
                raise
            record = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                      "trace": traceback.format_exc()[-3000:]}
        record["seconds"] = round(time.monotonic() - started, 1)
        probe["steps"][name] = record
        write_json(out, probe)
        print(f"probe: {name} {'ok' if record['ok'] else 'FAILED: ' + record['error'][:300]}"
              f" ({record['seconds']} s)", file=sys.stderr, flush=True)
    probe["finished"] = True
    write_json(out, probe)
    return 0 if all(probe["steps"][s].get("ok") for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
