"""Building the stages from the configuration: the brain (embedder + site index), the source
of the page on screen, the recognizer. The command line and the benchmarks share these."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kiosk.brain import Brain
from kiosk.config import Config
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.errors import KioskError, ModelError

log = logging.getLogger(__name__)


def _progress(iterable: Iterable[Any], total: int) -> Iterable[Any]:
    from tqdm import tqdm

    bar: Iterable[Any] = tqdm(iterable, total=total, desc="embedding", unit="batch",
                              file=sys.stderr, disable=not sys.stderr.isatty() and total < 4)
    return bar


def _embedder(cfg: Config) -> Any:
    """The configured sentence encoder, named in the manifest."""
    from kiosk.models import load_manifest
    from kiosk.retrieval.embedder import load_embedder

    manifest = load_manifest()
    if cfg.brain.embedder not in manifest:
        raise KioskError("config", f"brain.embedder = {cfg.brain.embedder!r} is not in the "
                         "model manifest", f"use one of: {', '.join(manifest)}")
    return load_embedder(manifest[cfg.brain.embedder], cfg.paths.models_path())


def _previous_index(path: Path) -> Any:
    """The index saved at `path`, or None (missing, or unreadable: rebuilt)."""
    from kiosk.retrieval.index import SiteIndex

    if not path.is_file():
        return None
    try:
        return SiteIndex.load(path)
    except KioskError as exc:
        log.warning("%s (rebuilding)", exc.describe())
        return None


def load_brain(cfg: Config, *, rebuild: bool = True) -> Brain:
    """The brain for the configured site and embedder; the index is brought up to date
    (changed pages only) and saved when it changed."""
    from kiosk.retrieval.index import build_index

    embedder = _embedder(cfg)
    site = cfg.paths.site_path()
    index_path = cfg.paths.index_path(cfg.brain.embedder, site)
    previous = _previous_index(index_path)
    if rebuild or previous is None:
        index = build_index(site, embedder, previous, _progress)
        if previous is None or not index.reads_as(previous):
            index.save(index_path)
            log.info("site index written to %s", index_path)
    else:
        index = previous
    return Brain(index, embedder, cfg.brain.params())


def index_preparer(cfg: Config, link: Path) -> Any:
    """For `kiosk site sync`: index a new site version aside (reusing the vectors of the
    live index's unchanged chunks) and return the step that puts the index in place."""
    import os

    from kiosk.retrieval.index import build_index

    def prepare(version: Path) -> Any:
        index_path = cfg.paths.index_path(cfg.brain.embedder, link)
        index = build_index(version, _embedder(cfg), _previous_index(index_path), _progress)
        staged = index_path.with_name(index_path.stem + ".staged.npz")
        index.save(staged)
        return lambda: os.replace(staged, index_path)

    return prepare


def query_encoder(cfg: Config) -> Any:
    """The brain's sentence encoder as a function of texts (kiosk report groups refused
    questions with it)."""
    return _embedder(cfg).embed_queries


def screen_source(cfg: Config, page_ids: set[str]) -> Any:
    """The configured source of the page on screen, started (devtools and bridge in threads)."""
    import asyncio
    import threading

    from kiosk.screen.source import FixedScreen, map_url

    def to_page_id(url: str) -> str | None:
        return map_url(url, cfg.screen.base_url, page_ids)

    if cfg.screen.source == "devtools":
        from kiosk.screen.devtools import DevToolsScreen

        screen = DevToolsScreen(cfg.screen.devtools_url, to_page_id)
        stop = asyncio.Event()
        threading.Thread(target=lambda: asyncio.run(screen.run(stop)), name="screen",
                         daemon=True).start()
        return screen
    if cfg.screen.source == "bridge":
        from firmware_bridge.link import BridgeLink
        from kiosk.screen.bridge import BridgeScreen

        if not cfg.bridge.port:
            raise KioskError("config", "screen.source is bridge but bridge.port is empty",
                             "set bridge.port DEVICE")
        bridge_screen = BridgeScreen(to_page_id)
        BridgeLink(cfg.bridge.port, bridge_screen.on_event).start()
        return bridge_screen
    return FixedScreen(cfg.screen.fixed_page, page_ids)


WHISPER_MODELS = {"en": "whisper-tiny-en", "ja": "whisper-base"}


def _whisper(cfg: Config, lang: str) -> Any:
    from kiosk.asr.whisper import WhisperModel
    from kiosk.models import load_manifest, model_path

    entry = load_manifest()[WHISPER_MODELS[lang]]
    prompt = ""
    if cfg.asr.prompt_from_site:
        from kiosk.retrieval.site import load_site

        pages, _ = load_site(cfg.paths.site_path())
        prompt = ("、" if lang == "ja" else ", ").join(p.title for p in pages if p.lang == lang)
    return WhisperModel(model_path(entry, cfg.paths.models_path()).parent, prompt=prompt,
                        beam_size=cfg.asr.beam_ja if lang == "ja" else cfg.asr.beam_en)


def venue_spelling(cfg: Config) -> Any:
    """What makes the Japanese speller from the site (asr.spelling_from_site, and the model of
    its text that chooses among Whisper's hypotheses: asr.site_text_weight), or None."""
    if not cfg.asr.spelling_from_site and not cfg.asr.site_text_weight:
        return None

    def make() -> Any:
        from kiosk.asr.spelling import VenueSpelling, site_texts
        from kiosk.retrieval.site import load_site

        pages, _ = load_site(cfg.paths.site_path())
        # how visitors ask first: a site's text is statements, rarely questions (Japanese CER
        # on the voice bench's utterances 12.45 -> 12.12% clean, 35.8 -> 34.4% in babble;
        # misskey-ja's visitor turns, same speech, its own site: 10.08 -> 10.04%, 24.45 ->
        # 24.23%)
        frames = load_lexicon("ja").question_frames
        return VenueSpelling.from_texts([*frames, *site_texts(pages)],
                                        spell=cfg.asr.spelling_from_site,
                                        weight=cfg.asr.site_text_weight, endings=frames)

    return make


def recognizer(cfg: Config) -> Any:
    """The recognizer for the kiosk's spoken language. With brain.language = auto and Whisper
    for both languages, each utterance's language is detected (on Whisper base's encoding);
    with another engine in the mix, auto listens in English."""
    if cfg.brain.language == "auto" and cfg.asr.engine_en == cfg.asr.engine_ja == "whisper":
        from kiosk.asr.whisper import WhisperRecognizer

        base = _whisper(cfg, "ja")
        return WhisperRecognizer({"en": _whisper(cfg, "en"), "ja": base}, detector=base,
                                 spelling=venue_spelling(cfg))
    lang = cfg.brain.language if cfg.brain.language != "auto" else "en"
    engine = cfg.asr.engine_ja if lang == "ja" else cfg.asr.engine_en
    if engine == "whisper":
        from kiosk.asr.whisper import WhisperRecognizer

        return WhisperRecognizer({lang: _whisper(cfg, lang)}, spelling=venue_spelling(cfg))
    if engine == "pocketsphinx":
        from kiosk.asr.pocketsphinx import PocketsphinxRecognizer

        return PocketsphinxRecognizer()
    from kiosk.asr.vosk import VoskRecognizer

    setting = f"asr.vosk_model_{lang}"
    path = cfg.asr.vosk_model_ja if lang == "ja" else cfg.asr.vosk_model_en
    if not path:
        raise KioskError("config", f"{setting} is empty but the {lang} recognizer is vosk",
                         f"set {setting} PATH (a vosk model folder or zip)")
    return VoskRecognizer(Path(path), lang, setting)


def recognizer_for(cfg: Config, lang: str) -> Any:
    """The recognizer configured for one language (benchmarks that speak one language)."""
    import dataclasses

    return recognizer(dataclasses.replace(
        cfg, brain=dataclasses.replace(cfg.brain, language=lang)))


def segmenter(cfg: Config) -> Any:
    from kiosk.audio.vad import Segmenter, SegmenterParams

    return Segmenter(SegmenterParams(end_silence_ms=cfg.asr.end_silence_ms,
                                     hush_ms=cfg.asr.hush_ms,
                                     incomplete_silence_ms=cfg.asr.incomplete_silence_ms,
                                     resume_within_ms=cfg.asr.resume_within_ms))


def answer_hold(cfg: Config) -> Any:
    """How long the answer waits for the visitor's pause, and what is said meanwhile, in
    each language (`[speech] acknowledgements`)."""
    from kiosk.app import AnswerHold

    return AnswerHold(cfg.tts.answer_hold_ms, {
        lang: load_lexicon(lang).acknowledgements for lang in ("en", "ja")})


def turn_model(cfg: Config) -> Any:
    """Smart Turn when asr.end_of_turn is model, else None (silence alone ends a turn)."""
    if cfg.asr.end_of_turn != "model":
        return None
    from kiosk.audio.turn import SmartTurn
    from kiosk.models import load_manifest, model_path

    return SmartTurn(model_path(load_manifest()["smart-turn"], cfg.paths.models_path()))


def voice_activity(cfg: Config) -> Any:
    """Silero VAD from the provisioned model."""
    from kiosk.audio.vad import SileroVad
    from kiosk.models import load_manifest, model_path

    return SileroVad(model_path(load_manifest()["silero-vad"], cfg.paths.models_path()))


def synthesizer(cfg: Config, lang: str, *, deterministic: bool = False) -> Any:
    """The reply voice for a language: piper for English, Open JTalk for Japanese.
    `deterministic`: piper without its sampling noise (benchmarks that must repeat)."""
    from kiosk.models import load_manifest

    if lang == "ja":
        from kiosk.models import model_path
        from kiosk.tts.openjtalk import OpenJTalkSynthesizer
        from kiosk.tts.readings import LatinReadings

        try:
            readings = LatinReadings(
                model_path(load_manifest()["e2k-c2k"], cfg.paths.models_path()),
                load_lexicon("ja").spelled_words)
        except ModelError as exc:
            # (the voice speaks all the same: Latin words letter by letter, as before)
            log.warning("%s; until then Japanese speech spells Latin words letter by letter",
                        exc.describe())
            readings = None
        return OpenJTalkSynthesizer(volume=cfg.tts.volume, readings=readings)
    from kiosk.tts.piper import PiperSynthesizer

    return PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"],
                                          cfg.paths.models_path(), volume=cfg.tts.volume,
                                          deterministic=deterministic)


def echo_canceller(cfg: Config) -> Any:
    """The canceller echo.mode asks for (speex with its filter, delay and loudspeaker model,
    or pass-through)."""
    from kiosk.audio.echo import make_canceller

    return make_canceller(cfg.echo.mode, cfg.echo.filter_length_ms, cfg.echo.delay_ms,
                          cfg.echo.loudspeaker)


def echo_memory(cfg: Config, canceller: Any, rate_hz: int, state_dir: Path) -> Any:
    """Keeps the software canceller's echo path across starts (echo-path.json in the state
    folder), restored into `canceller` now; None for echo.mode hardware/off."""
    from kiosk.audio.echo import SpeexCanceller
    from kiosk.audio.echo_path import FILE_NAME, EchoMemory, PathKey
    from kiosk.audio.format import CHUNK_SAMPLES

    if not isinstance(canceller, SpeexCanceller):
        return None
    key = PathKey(f"{cfg.audio.input_device} -> {cfg.audio.output_device}", rate_hz,
                  CHUNK_SAMPLES, cfg.echo.filter_length_ms, cfg.echo.delay_ms)
    memory = EchoMemory(state_dir / FILE_NAME, key)
    memory.restore(canceller)
    return memory
