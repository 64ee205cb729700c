"""The self-echo guard (pure, no clocks): the avatar must not answer itself.

Two checks, both counted so an installer can see them work:
- per chunk, while the loudspeaker plays (or its echo may still ring): speech on the
  microphone counts only when the cancelled signal is well above the echo expected from what
  is playing (`margin_db`) and the cancellation fell (`drop_db`), the expectations being
  learned from the chunks where the avatar talked alone, per band of playback level, and not
  from chunks whose cancellation fell (they may hold a visitor not yet believed);
- per utterance heard over the avatar: a transcript that repeats what the avatar was saying
  (2-gram overlap with the reply) is dropped. Japanese is compared by character 2-grams;
  English by word 2-grams, because its letter pairs recur in any two sentences ("how much
  does it cost" shares 75% of its letter pairs with a reply about parking it never quoted).
"""

from __future__ import annotations

import collections
import itertools
import logging
import re
from dataclasses import dataclass, field

from kiosk.audio.format import Samples, level_dbfs
from kiosk.text import normalize, spell_numbers

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GuardParams:
    enabled: bool = True  # off: every chunk passes (the echo bench's baseline)
    margin_db: float = 10.0  # the visitor's voice must stand this far above the expected echo
    drop_db: float = 9.0  # ...and the cancellation (microphone over residual) must fall by
    # this much below what it usually achieves: a new voice is not cancelled, echo is
    silent_ref_dbfs: float = -60.0  # a reference quieter than this is silence
    tail_ms: int = 400  # an echo rings on for the room's reverberation and the buffers
    start_echo_db: float = 0.0  # before anything is learned: echo as loud as the reference
    learn_up: float = 0.1  # the echo estimate rises faster (a louder room is dangerous)...
    learn_down: float = 0.03  # ...than it falls
    level_step_db: float = 6.0  # both are also learned per band of playback level (a
    # loudspeaker driven harder distorts more, and distortion is not cancelled)...
    level_min_chunks: int = 50  # ...and used once the band has been heard this long
    young_db: float = 6.0  # extra margin while little of the avatar has been heard: a young
    young_s: float = 20.0  # canceller leaves an echo that swings widely (fades out over this
    # much of the avatar's speech, about what speex takes to converge on speech)
    doubt_db: float = 4.5  # a chunk cancelled this much worse than usual may hold the
    # visitor's voice: the echo level is not learned from it...
    doubt_rate: float = 0.005  # ...and the usual cancellation follows it only slowly (a
    # moved microphone, while the canceller re-learns the room)
    hold_ms: int = 400  # once the visitor is heard over the avatar, their words' quieter
    # parts pass too, and are not learned as echo
    confirm: tuple[int, int] = (3, 5)  # chunks above the margin, of the last ones, to believe
    # it: echo crosses the margin now and then, a voice stays above it
    min_evidence: float = 0.3  # of an utterance heard over the avatar, the share of chunks
    # that stood above the expected echo; less is an echo that slipped through
    repeat_overlap: float = 0.6  # share of a transcript's 2-grams found in the reply
    repeat_min_grams: int = 3


_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_WORD = re.compile(r"[a-z0-9]+")


def echo_grams(text: str) -> set[str]:
    """The 2-grams a transcript and a reply are compared by."""
    norm = spell_numbers(normalize(text))
    if _CJK_CHAR.search(norm):
        chars = [c for c in norm if c.isalnum()]
        return {a + b for a, b in itertools.pairwise(chars)}
    words = [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(norm)]
    return {f"{a} {b}" for a, b in itertools.pairwise(words)}


@dataclass
class LevelBand:
    echo_db: float
    cancel_db: float
    chunks: int = 0


@dataclass
class EchoGuard:
    params: GuardParams = field(default_factory=GuardParams)
    # learned while the avatar talks alone: the residual level minus the reference level, and
    # the microphone level minus the residual level; overall, and per band of playback level
    echo_db: float = 0.0
    cancel_db: float = 0.0
    bands: dict[int, LevelBand] = field(default_factory=dict)
    level_band: int = 0  # the band of the latest chunk
    gated_chunks: int = 0
    dropped_transcripts: int = 0
    weak_utterances: int = 0
    last_above: bool = False  # the latest chunk stood above the expected echo
    learned_ms: int = 0  # how much of the avatar alone the estimates come from
    _hold_ms: int = 0
    _above: collections.deque[bool] = field(default_factory=collections.deque)
    _recent_ref_db: collections.deque[float] = field(default_factory=collections.deque)

    def __post_init__(self) -> None:
        self.echo_db = self.params.start_echo_db

    def restart(self) -> None:
        """The canceller started afresh (a restored echo path was dropped): what was learnt
        about its residual echo no longer holds, and it is learnt again, young margin and
        all. The counters stay."""
        self.echo_db = self.params.start_echo_db
        self.cancel_db = 0.0
        self.bands.clear()
        self.learned_ms = 0
        self._hold_ms = 0
        self._above.clear()

    @property
    def recent_above(self) -> int:
        """Of the last chunks the confirmation looks at, those above the expected echo."""
        return sum(self._above)

    def expected(self) -> tuple[float, float]:
        """At the latest playback level: the residual echo relative to the playback, and
        what the canceller takes away (the band's once it has been heard long enough)."""
        band = self.bands.get(self.level_band)
        if band is None or band.chunks < self.params.level_min_chunks:
            return self.echo_db, self.cancel_db
        return band.echo_db, band.cancel_db

    def reference_db(self) -> float:
        """The loudest recent playback: echo arrives late and rings on."""
        return max(self._recent_ref_db, default=-120.0)

    @property
    def holding(self) -> bool:
        """The visitor has been heard over the avatar and is still being let through."""
        return self._hold_ms > 0

    def echo_active(self) -> bool:
        return self.reference_db() > self.params.silent_ref_dbfs

    def judge(self, residual: Samples, reference: Samples, probability: float,
              mic: Samples | None = None, chunk_ms: int = 20) -> float:
        """The speech probability to use: unchanged when nothing plays, 0 for echo. `mic`:
        the chunk before cancellation (without it only the level test is made)."""
        p = self.params
        self._recent_ref_db.append(level_dbfs(reference))
        while len(self._recent_ref_db) > max(1, p.tail_ms // chunk_ms):
            self._recent_ref_db.popleft()
        self.last_above = False
        if not p.enabled:
            return probability
        if not self.echo_active():
            self._hold_ms = 0
            self._above.clear()
            return probability
        ref_db = self.reference_db()
        self.level_band = int(ref_db // p.level_step_db)
        echo_db, cancel_db = self.expected()
        residual_db = level_dbfs(residual)
        excess_db = residual_db - ref_db - echo_db
        cancelled_db = level_dbfs(mic) - residual_db if mic is not None else 0.0
        needed, window = p.confirm
        # the cancellation test needs an echo to cancel: with none at the microphone (an array
        # that cancels, headphones, a recording) the level test decides alone
        cancels = mic is not None and cancel_db >= p.drop_db
        young = max(0.0, 1.0 - self.learned_ms / (p.young_s * 1000.0))
        self.last_above = excess_db >= p.margin_db + young * p.young_db and (
            not cancels or cancel_db - cancelled_db >= p.drop_db)
        self._above.append(self.last_above)
        while len(self._above) > window:
            self._above.popleft()
        if sum(self._above) >= needed:
            self._hold_ms = p.hold_ms
        if self._hold_ms > 0:
            self._hold_ms -= chunk_ms
            return probability  # the visitor, over the avatar
        if self.last_above:
            return 0.0  # not sure yet: neither passed nor learned
        # the avatar alone: learn how loud its echo is after cancellation, and how much the
        # canceller takes away (falls fast, rises slowly) - unless the cancellation fell, the
        # first sign of a voice the canceller has never heard
        doubt = cancels and cancel_db - cancelled_db >= p.doubt_db
        self.learned_ms += chunk_ms
        observed = residual_db - ref_db
        band = self.bands.setdefault(self.level_band, LevelBand(self.echo_db, self.cancel_db))
        band.chunks += 1
        for learner in (self, band):
            if not doubt:
                rate = p.learn_up if observed > learner.echo_db else p.learn_down
                learner.echo_db += rate * (observed - learner.echo_db)
            if mic is not None:
                rate = (p.doubt_rate if doubt else
                        p.learn_up if cancelled_db < learner.cancel_db else p.learn_down)
                learner.cancel_db += rate * (cancelled_db - learner.cancel_db)
        if probability >= 0.5:
            self.gated_chunks += 1
        return 0.0

    def convinced(self, evidence: float) -> bool:
        """Enough of an utterance over the avatar (share of its chunks) stood above the
        expected echo to be someone else's voice."""
        return not self.params.enabled or evidence >= self.params.min_evidence

    def is_weak(self, evidence: float) -> bool:
        """An utterance heard over the avatar with too few chunks above the expected echo."""
        if self.convinced(evidence):
            return False
        self.weak_utterances += 1
        log.info("guard: dropped an utterance over the avatar (%.0f%% of it above the echo; "
                 "%d so far)", evidence * 100, self.weak_utterances)
        return True

    def is_repeat(self, transcript: str, reply: str, said_before: str = "") -> bool:
        """The recognizer heard the avatar's own reply: drop the transcript (and count it).
        `said_before`: the visitor's own words the transcript begins with (a visitor who went
        on after a pause is heard whole): only the rest is judged, as a reply to those words
        often repeats them."""
        grams = echo_grams(transcript) - echo_grams(said_before)
        if not self.params.enabled or len(grams) < self.params.repeat_min_grams:
            return False
        share = len(grams & echo_grams(reply)) / len(grams)
        if share >= self.params.repeat_overlap:
            self.dropped_transcripts += 1
            log.info("guard: dropped a transcript that repeats the reply (overlap %.2f; %d so "
                     "far)", share, self.dropped_transcripts)
            return True
        return False
