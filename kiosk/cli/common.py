"""What every command shares: the configuration it runs with."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kiosk.config import Config, load_config

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subparsers = Any


def cli_config(args: argparse.Namespace) -> Config:
    return cli_config_and_origin(args)[0]


def cli_config_and_origin(args: argparse.Namespace) -> tuple[Config, str]:
    """--config FILE, else the console's file when there is one, else the embedded defaults;
    and where it came from: file, previous (the file was unusable), defaults."""
    import dataclasses

    from kiosk.configstore import load_with_fallback
    from kiosk.models import default_config_path

    saved = default_config_path()
    path = Path(args.config) if args.config else saved if saved.is_file() else None
    origin = "file"
    if path is None:
        cfg = Config()
    elif not path.exists():
        cfg = load_config(path)  # names the missing file
    else:
        # An unusable file is logged loudly and the last good one is used: a service that
        # exits on it would only be restarted into the same failure.
        cfg, origin = load_with_fallback(path)

    paths = cfg.paths
    if not paths.site and cfg.site.sync_url and paths.synced_site_path().exists():
        # the venue's site, kept by kiosk site sync, instead of the demo
        paths = dataclasses.replace(paths, site=str(paths.synced_site_path()))
    if getattr(args, "models_dir", None):
        paths = dataclasses.replace(paths, models_dir=args.models_dir)
    if getattr(args, "site", None):
        paths = dataclasses.replace(paths, site=args.site)
    if getattr(args, "index", None):
        paths = dataclasses.replace(paths, index=args.index)
    brain = cfg.brain
    if getattr(args, "embedder", None):
        brain = dataclasses.replace(brain, embedder=args.embedder)
    ranker = getattr(args, "ranker", None)
    if ranker == "dense":
        brain = dataclasses.replace(brain, rank=dataclasses.replace(brain.rank, lexical=0.0))
    elif ranker == "lexical":
        brain = dataclasses.replace(brain, rank=dataclasses.replace(brain.rank, dense=0.0))
    return dataclasses.replace(cfg, paths=paths, brain=brain), origin


def cli_config_path(args: argparse.Namespace) -> Path:
    from kiosk.models import default_config_path

    return Path(args.config) if args.config else default_config_path()
