"""Every data file of the kiosk package is in the wheel: an installed kiosk (scripts/install.sh,
not editable) has only what package-data names. The arm64 check found two left out:
kiosk/dialogue/gate.toml (the context gate was silently off) and kiosk/demo/script.json
(`kiosk demo` failed)."""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parent.parent


def _matches(relative: PurePosixPath, pattern: str) -> bool:
    if pattern.endswith("/**/*"):  # setuptools: everything below the folder
        return str(relative).startswith(pattern[: -len("**/*")])
    return relative.match(pattern) and len(relative.parts) == len(PurePosixPath(pattern).parts)


def test_every_data_file_of_the_package_is_named_in_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["kiosk"]
    package = REPO / "kiosk"
    left_out = []
    for path in sorted(package.rglob("*")):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        relative = PurePosixPath(path.relative_to(package).as_posix())
        if not any(_matches(relative, p) for p in patterns):
            left_out.append(str(relative))
    assert not left_out, f"not in the wheel (pyproject.toml package-data): {left_out}"
