"""One frozen configuration tree, loaded from TOML and validated with field-named errors.

Sections grow with the appliance (audio, echo, screen, console arrive in their own issues).
Every field is documented by its dataclass; unknown keys are rejected so a typo never passes
silently.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kiosk.answer import AnswerParams
from kiosk.brain import BrainParams
from kiosk.dialogue.resolver import ResolverParams
from kiosk.errors import ConfigError
from kiosk.models import default_models_dir, default_state_dir
from kiosk.retrieval.index import RankWeights

DEMO_DIR = Path(__file__).resolve().parent / "demo"
DEMO_SITE = DEMO_DIR / "site"


@dataclass(frozen=True)
class PathsConfig:
    site: str = ""  # folder of the venue's .md/.html pages; empty: the bundled demo site
    models_dir: str = ""  # where model files live; empty: $KIOSK_MODELS_DIR or ~/.local/share
    index: str = ""  # the built site index file; empty: in the state folder, named by the site

    def site_path(self) -> Path:
        return Path(self.site) if self.site else DEMO_SITE

    def models_path(self) -> Path:
        return Path(self.models_dir) if self.models_dir else default_models_dir()

    def index_path(self, embedder: str, site: Path | None = None) -> Path:
        """One index file per site folder and embedding model."""
        if self.index:
            return Path(self.index)
        site = (site or self.site_path()).resolve()
        tag = hashlib.sha256(str(site).encode()).hexdigest()[:10]
        return default_state_dir() / "index" / f"{site.name}-{tag}-{embedder}.npz"


@dataclass(frozen=True)
class BrainConfig:
    language: str = "auto"  # "auto" (from each utterance), "ja" or "en"
    embedder: str = "e5-small-int8"  # a model of models/manifest.toml with an [embedder] table
    resolver: ResolverParams = field(default_factory=ResolverParams)
    rank: RankWeights = field(default_factory=RankWeights)
    answer: AnswerParams = field(default_factory=AnswerParams)

    def params(self) -> BrainParams:
        return BrainParams(resolver=self.resolver, rank=self.rank, answer=self.answer)


@dataclass(frozen=True)
class Config:
    paths: PathsConfig = field(default_factory=PathsConfig)
    brain: BrainConfig = field(default_factory=BrainConfig)


_CHOICES: dict[str, tuple[str, ...]] = {"brain.language": ("auto", "ja", "en")}


def _build(cls: type[Any], data: dict[str, Any], prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix or 'config'} must be a table, got {data!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError(f"{prefix + '.' if prefix else ''}{unknown[0]} is not a setting",
                          f"allowed here: {', '.join(sorted(known))}")
    values: dict[str, Any] = {}
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        hint = hints[name]
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            values[name] = _build(hint, value, key)
            continue
        values[name] = _coerce(hint, value, key)
    return cls(**values)


def _coerce(hint: Any, value: Any, key: str) -> Any:
    if isinstance(hint, types.UnionType):
        hint = next(h for h in typing.get_args(hint) if h is not type(None))
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        value = float(value)
    elif hint is int and isinstance(value, int) and not isinstance(value, bool):
        pass
    elif hint is str and isinstance(value, str):
        choices = _CHOICES.get(key)
        if choices and value not in choices:
            raise ConfigError(f"{key} = {value!r} is not allowed",
                              f"use one of: {', '.join(choices)}")
    elif hint is bool and isinstance(value, bool):
        pass
    else:
        name = getattr(hint, "__name__", str(hint))
        raise ConfigError(f"{key} = {value!r} must be a {name}", f"set {key} to a {name}")
    if isinstance(value, float) and value < 0:
        raise ConfigError(f"{key} = {value!r} must not be negative", f"set {key} to a value >= 0")
    return value


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} not found", "pass an existing file") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}",
                          "fix the line it names") from exc
    cfg: Config = _build(Config, data, "")
    return cfg
