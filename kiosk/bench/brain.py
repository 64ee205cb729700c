"""`kiosk bench brain`: per-turn latency of resolve + retrieve + answer, index build time, RSS.

Turns replay the bundled demo dialogues (both languages) against the demo site and against a
generated site of N pages made from the demo site's own sentences. Each index is built by
`kiosk index` in a child process, as on the appliance; the brain then loads it. The
bare-utterance search (`raw`) is timed in the same run as the baseline the resolver's cost is
read against.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kiosk.bench import percentiles
from kiosk.brain import Brain
from kiosk.config import DEMO_DIR, DEMO_SITE, Config
from kiosk.dialogue.history import History
from kiosk.dialogue.query import SearchQuery
from kiosk.eval import Dialogue, load_dialogues
from kiosk.models import load_manifest
from kiosk.retrieval.embedder import Embedder, load_embedder
from kiosk.retrieval.index import SiteIndex
from kiosk.retrieval.site import load_site
from kiosk.text import sentences


def generate_site(folder: Path, pages: int, seed: int = 7) -> None:
    """A site of `pages` pages, half English half Japanese, built from the demo's sentences
    with numbered names so that pages share vocabulary but differ."""
    demo_pages, _ = load_site(DEMO_SITE)
    pools: dict[str, list[str]] = {"en": [], "ja": []}
    for page in demo_pages:
        for section in page.sections:
            pools[page.lang].extend(sentences(section.text))
    rng = random.Random(seed)
    for i in range(pages):
        lang = "en" if i % 2 == 0 else "ja"
        pool = pools[lang]
        sub = folder / lang / f"{i // 500:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        title = f"Exhibit {i}" if lang == "en" else f"展示 {i}"
        lines = [f"# {title}"]
        for s in range(3):
            lines.append(f"## {'Part' if lang == 'en' else 'パート'} {s + 1}")
            lines.extend(rng.sample(pool, 3))
        (sub / f"page-{i:05d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _time_turns(brain: Brain, dialogues: list[Dialogue], turns: int) -> tuple[list[float],
                                                                               list[float]]:
    """Per-turn ms of the whole brain, and of the bare-utterance search alone (baseline)."""
    resolved: list[float] = []
    bare: list[float] = []
    while len(resolved) < turns:
        for dialogue in dialogues:
            # A replayed dialogue must not find its utterances cached from the last round;
            # within a dialogue the cache serves the previous exchange, as for a visitor.
            brain.forget()
            history: History = ()
            for turn in dialogue.turns:
                start = time.perf_counter()
                result = brain.respond(history, turn.user, turn.screen, dialogue.lang)
                resolved.append((time.perf_counter() - start) * 1000.0)
                brain.forget([turn.user])
                start = time.perf_counter()
                brain.search(SearchQuery.of(turn.user), dialogue.lang)
                bare.append((time.perf_counter() - start) * 1000.0)
                history = (*history, result.exchange())
                brain.remember(history[-1])  # the loop does this while the reply is spoken
                if len(resolved) >= turns:
                    return resolved, bare
    return resolved, bare


def _build_in_child(cfg: Config, site: Path, out: Path) -> float:
    """Build the index as the appliance does, with `kiosk index` in its own process, so the
    brain's memory below is the serving process's and not the builder's."""
    cmd = [sys.executable, "-m", "kiosk", "--models-dir", str(cfg.paths.models_path()),
           "index", str(site), "--out", str(out), "--embedder", cfg.brain.embedder]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def _site_run(cfg: Config, embedder: Embedder, site: Path, out: Path,
              dialogues: list[Dialogue], turns: int) -> tuple[dict[str, Any], float]:
    build_s = _build_in_child(cfg, site, out)
    index = SiteIndex.load(out)
    brain = Brain(index, embedder)
    _time_turns(brain, dialogues, min(20, turns))  # warm caches before timing
    resolved, bare = _time_turns(brain, dialogues, turns)
    figures: dict[str, Any] = {**percentiles(resolved, 2), "bare_search": percentiles(bare, 2),
                               "pages": len(index.pages), "chunks": len(index.chunks)}
    for q in ("p50", "p95"):
        figures[f"ratio_{q}_vs_bare"] = round(figures[q] / max(figures["bare_search"][q], 1e-9),
                                              2)
    return figures, build_s


def run(cfg: Config, *, pages: int = 5000, turns: int = 400) -> dict[str, Any]:
    embedder = load_embedder(load_manifest()[cfg.brain.embedder], cfg.paths.models_path())
    dialogues = (load_dialogues(DEMO_DIR / "dialogues" / "en.jsonl")
                 + load_dialogues(DEMO_DIR / "dialogues" / "ja.jsonl"))
    key = f"pages{pages}"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        demo, demo_build_s = _site_run(cfg, embedder, DEMO_SITE, root / "demo.npz", dialogues,
                                       turns)
        generate_site(root / "site", pages)
        big, big_build_s = _site_run(cfg, embedder, root / "site", root / "big.npz", dialogues,
                                     turns)
    return {
        "turn_ms": {"demo": demo, key: big},
        "index_build_s": {"demo": round(demo_build_s, 2), key: round(big_build_s, 2)},
        # the serving process: model, loaded indexes, turns
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        # the `kiosk index` processes that built them
        "index_build_peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0, 1),
        "embedder": embedder.name,
    }


def format_report(report: dict[str, Any]) -> str:
    lines = [f"embedder: {report['embedder']}; cores: {report.get('cpus', '?')}"]
    for site, t in report["turn_ms"].items():
        lines.append(
            f"{site:>10}: {t['pages']} pages, {t['chunks']} chunks; turn p50 {t['p50']} ms, "
            f"p95 {t['p95']} ms (bare search p50 {t['bare_search']['p50']} ms, p95 "
            f"{t['bare_search']['p95']} ms; ratios {t['ratio_p50_vs_bare']}x, "
            f"{t['ratio_p95_vs_bare']}x); index build "
            f"{report['index_build_s'][site]} s")
    lines.append(f"peak RSS: {report['peak_rss_mb']} MB serving; "
                 f"{report['index_build_peak_rss_mb']} MB building the index (kiosk index)")
    return "\n".join(lines)
