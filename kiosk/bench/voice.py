"""`kiosk bench voice --lang en|ja [--noise-db N]`: hearing, measured.

The questions are the demo dialogues' visitor turns in one language, spoken twice by the
project's own voice (piper for English, Open JTalk for Japanese; the second time higher and
quicker), optionally under crowd babble (other questions of the set, several at once) at
`noise_db` below the speech.

- Recognition: word error rate (English) or character error rate (Japanese, also on the kana
  reading, so homophone kanji are told apart from misheard sounds), clean and in babble.
- What recognition costs the brain: page top-1 of the dialogues with the transcripts in place
  of the typed turns, against the typed dialogues.
- Latency: a few questions through the voice loop at the recording's own speed (the wall clock,
  so work done during the visitor's pause counts as it would on a device): end of speech ->
  first reply sample, with the stages.
- End of turn: questions said with a pause of 300-900 ms in the middle; the share cut at the
  pause by the configured end-of-turn rule, and by the fixed silence alone. The same questions
  through the voice loop: the share answered on their opening words alone (a visitor who goes
  on soon after a cut is heard whole, `asr.resume_within_ms`), and the share whose opening the
  avatar began to answer before the visitor went on.
- Peak RSS of this process, with both languages' recognizers, the embedder, the index and both
  voices loaded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import resource
import unicodedata
from collections.abc import Iterator
from typing import Any

import numpy as np

from kiosk.app import TurnRecord, VoiceLoop
from kiosk.asr import Speculative
from kiosk.asr.whisper import WhisperRecognizer
from kiosk.audio.format import CHUNK_MS, RATE_HZ, AudioChunk, Samples
from kiosk.audio.logmel import log_mel
from kiosk.audio.recorded import RecordedStream
from kiosk.audio.turn import TurnModel, pause_verdict
from kiosk.audio.vad import Paused, Segmenter, SegmenterParams, Utterance, VoiceActivity
from kiosk.bench import percentiles, rss_split_mb
from kiosk.bench.room import mix, other_voice, rms
from kiosk.config import DEMO_DIR, Config
from kiosk.eval import Dialogue, evaluate, load_dialogues
from kiosk.text import japanese_words
from kiosk.tts import spoken
from kiosk.wiring import (
    answer_hold,
    load_brain,
    recognizer,
    segmenter,
    synthesizer,
    turn_model,
    venue_spelling,
    voice_activity,
)

TIMED_GAP_S = 10  # after a timed question: the reply plays out before the next one
PAUSED_GAP_S = 3  # after a paused question (the next one talks over a reply still playing)


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()


def _edits(ref: list[str], hyp: list[str]) -> int:
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[len(hyp)]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(edit distance in words, reference length)."""
    ref = _words(reference)
    return _edits(ref, _words(hypothesis)), len(ref)


def _chars(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    return [ch for ch in text if unicodedata.category(ch)[0] in "LN"]


def char_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(edit distance in characters, reference length), punctuation and spaces left out."""
    ref = _chars(reference)
    return _edits(ref, _chars(hypothesis)), len(ref)


def kana(text: str) -> str:
    """The katakana reading (Open JTalk's), so 駐車場 and 中車場 differ by one sound."""
    import pyopenjtalk

    return str(pyopenjtalk.g2p(text, kana=True)) if text.strip() else ""


def _error_rate(pairs: list[tuple[str, str]], lang: str, reading: bool = False) -> float:
    errors = total = 0
    for ref, hyp in pairs:
        if reading:
            ref, hyp = kana(ref), kana(hyp)
        e, n = word_errors(ref, hyp) if lang == "en" else char_errors(ref, hyp)
        errors += e
        total += n
    return round(errors / max(total, 1), 4)


def _dialogues(lang: str, utterances: int) -> list[Dialogue]:
    """Whole demo dialogues (not off-topic ones) until `utterances` turns are covered."""
    chosen: list[Dialogue] = []
    count = 0
    for dialogue in load_dialogues(DEMO_DIR / "dialogues" / f"{lang}.jsonl"):
        if count >= utterances:
            break
        if any(t.kind == "offtopic" for t in dialogue.turns):
            continue
        chosen.append(dialogue)
        count += len(dialogue.turns)
    return chosen


def babble(pool: list[Samples], length: int, level_rms: float, rng: np.random.Generator,
           talkers: int = 6) -> np.ndarray:
    """Several other questions at once, looped to `length`, scaled to `level_rms`."""
    total = np.zeros(length)
    for _ in range(talkers):
        voice = pool[int(rng.integers(len(pool)))].astype(np.float64)
        reps = np.tile(voice, length // max(len(voice), 1) + 2)
        start = int(rng.integers(len(voice)))
        total += reps[start:start + length]
    return total * (level_rms / max(rms(total), 1e-9))


def _noisy(speech: Samples, pool: list[Samples], noise_db: float | None,
           rng: np.random.Generator) -> Samples:
    if noise_db is None:
        return speech
    level = rms(speech) / (10 ** (noise_db / 20))
    return mix(speech.astype(np.float64), babble(pool, len(speech), level, rng))


def page_top1(brain: Any, dialogues: list[Dialogue],
              pairs: list[tuple[str, str]] | None = None) -> float:
    """The brain's page top-1 on the dialogues as typed, or with each visitor turn replaced
    by its transcript in `pairs` (text said, text heard; of a text said twice, by both voices,
    the first voice's transcript goes to the brain)."""
    if pairs is not None:
        heard: dict[str, str] = {}
        for text, hyp in pairs:
            heard.setdefault(text, hyp)
        dialogues = [dataclasses.replace(d, turns=tuple(
            dataclasses.replace(t, user=heard[t.user]) for t in d.turns)) for d in dialogues]
    top1: float = evaluate(brain, dialogues)["strategies"]["resolved"]["page_top1"]
    return top1


def _recognize(asr: Any, samples: Samples) -> str:
    asr.start()
    asr.accept(samples)
    return str(asr.finish())


def _cut_at_pauses(samples_list: list[Samples], vad: VoiceActivity, params: SegmenterParams,
                   model: TurnModel | None, asr: Any) -> dict[int, list[dict[str, Any]]]:
    """The (paused) utterances ended more than once, by position, each with the pauses the
    turn model judged: the words heard so far, the model's probability and the verdict; the
    segmenter as the loop drives it, the turn model judging each pause when there is one."""
    cut: dict[int, list[dict[str, Any]]] = {}
    for at, samples in enumerate(samples_list):
        vad.reset()
        seg = Segmenter(params)
        ended = 0
        judged: list[dict[str, Any]] = []
        padded = np.concatenate([samples, np.zeros(RATE_HZ * 2, dtype=np.int16)])
        step = RATE_HZ * CHUNK_MS // 1000
        for i in range(0, len(padded) - step + 1, step):
            chunk = AudioChunk(padded[i:i + step], i * 1000 // RATE_HZ)
            for event in seg.feed(chunk, vad.probability(chunk.samples)):
                ended += isinstance(event, Utterance)
                if isinstance(event, Paused) and model is not None:
                    heard = seg.heard_so_far()
                    words = _recognize(asr, heard) if isinstance(asr, Speculative) else ""
                    probability = model.complete(heard)
                    verdict = pause_verdict(probability, words)
                    judged.append({"heard": words, "model": round(probability, 2),
                                   "verdict": round(verdict, 2)})
                    seg.decide(verdict)
        if ended > 1:
            cut[at] = judged
    return cut


@dataclasses.dataclass(frozen=True)
class _Withdrawn:
    """The paused questions through the loop (`_through_the_loop`)."""

    questions: int
    partial: int  # answered on their opening words alone
    begun: int  # whose opening words' answer began before the visitor went on
    acknowledged: int  # whose opening words got an acknowledgement (`AnswerHold`) first
    heard_ms: list[float]  # for each reply to an opening: its sound the visitor heard...
    answer_heard_ms: list[float]  # ...and of it, the answer's (the acknowledgement's not)


def _through_the_loop(cfg: Config, paused: list[Samples], brain: Any, vad: VoiceActivity,
                      asr: Any, voices: dict[str, Any], turns_model: Any) -> _Withdrawn:
    """The paused questions through the voice loop at the recording's own speed, as a
    visitor would say them. A question cut at its pause and gone on with within
    `asr.resume_within_ms` is answered whole; the reply to its opening may have begun
    meanwhile, and what the loudspeaker played of it before it gave way is what the visitor
    heard (the 20 ms periods with sound)."""
    spans: list[tuple[int, int]] = []  # stream ms of each question, as `_timed` plays them
    at_ms = 0
    for speech in paused:
        at_ms += 1000
        spans.append((at_ms, at_ms + len(speech) * 1000 // RATE_HZ))
        at_ms = spans[-1][1] + PAUSED_GAP_S * 1000
    played: list[Samples] = []
    turns = _timed(cfg, paused, brain, vad, asr, voices, turns_model, PAUSED_GAP_S, played)
    speaker = played[0] if played else np.zeros(0, dtype=np.int16)
    chunk = RATE_HZ * CHUNK_MS // 1000

    def sounding_ms(lo_ms: int, hi_ms: int) -> float:
        lo, hi = lo_ms * RATE_HZ // 1000, max(lo_ms, hi_ms) * RATE_HZ // 1000
        heard = speaker[lo:hi][: (hi - lo) // chunk * chunk].reshape(-1, chunk)
        return float(np.count_nonzero(np.any(heard != 0, axis=1)) * CHUNK_MS)

    heard_ms: list[float] = []
    answer_heard_ms: list[float] = []
    partial = begun = acknowledged = 0
    for start_ms, end_ms in spans:
        mine = [t for t in turns if start_ms <= t.last_voiced_ms <= end_ms + 300]
        if not mine:
            partial += 1  # not answered at all
            continue
        last = mine[-1]
        partial += last.last_voiced_ms < end_ms - 300 or last.speech_start_ms > start_ms + 300
        went_on = last.went_on_ms or end_ms
        early = [t for t in mine[:-1] if t.reply_start_ms < went_on]
        if not early:
            continue
        answers = [t for t in early if 0 < t.answer_start_ms < went_on]
        acknowledged += any(t.acknowledged for t in early)
        begun += bool(answers)
        # the whole's own reply starts where the opening's ended at the latest
        heard_ms.append(sounding_ms(early[0].reply_start_ms, last.reply_start_ms))
        answer_heard_ms.append(sounding_ms(answers[0].answer_start_ms, last.reply_start_ms)
                               if answers else 0.0)
    return _Withdrawn(len(spans), partial, begun, acknowledged, heard_ms, answer_heard_ms)


def _halves(question: str, lang: str) -> tuple[str, str] | None:
    """The question split where a speaker could stop to think, nearest its middle: between
    words (English) or between accent phrases (Japanese, Open JTalk's analysis)."""
    if lang == "ja":
        pieces = [(m["string"], m["chain_flag"] != 1) for m in japanese_words(question)]
    else:
        pieces = [(" " * bool(i) + w, True) for i, w in enumerate(question.split())]
    cuts = [i for i in range(1, len(pieces)) if pieces[i][1]]
    if not cuts:
        return None
    middle = len(question) / 2
    at = min(cuts, key=lambda i: abs(len("".join(p for p, _ in pieces[:i])) - middle))
    return "".join(p for p, _ in pieces[:at]).strip(), "".join(p for p, _ in pieces[at:]).strip()


def _paused(tts: Any, question: str, lang: str, rng: np.random.Generator) -> Samples | None:
    """The question with a 300-900 ms pause between two words, as a visitor who stops to
    think. The sentence is synthesized whole (the halves apart would give the first one a
    sentence's falling end, which no thinking visitor has); the pause goes at the quietest
    moment within 60 ms of where the first half ends in it (`_end_in`)."""
    halves = _halves(question, lang)
    if halves is None:
        return None
    speech = _trimmed(spoken(tts, question))
    guess = _end_in(speech, _trimmed(spoken(tts, halves[0])))
    frame = RATE_HZ * CHUNK_MS // 1000
    reach = RATE_HZ * 60 // 1000
    lo, hi = max(frame, guess - reach), min(len(speech) - frame, guess + reach)
    if hi <= lo:
        return None
    starts = range(lo, hi - frame + 1, frame // 4)
    at = min(starts, key=lambda i: rms(speech[i:i + frame])) + frame // 2
    pause = np.zeros(int(RATE_HZ * rng.uniform(0.3, 0.9)), dtype=np.int16)
    return np.concatenate([speech[:at], pause, speech[at:]])


def _end_in(whole: Samples, part: Samples) -> int:
    """Where in `whole` the words of `part` (its opening words, said alone) end, in samples:
    dynamic time warping of their log-mel frames, open at the end of `whole`. Said alone, the
    last word is drawn out as a sentence's end is, so its length overshoots into the next word
    (placed by length, 16 of the 33 English first halves were heard ending at their last word
    and 6 of 32 Japanese; by this alignment 24 and 15)."""
    def frames(samples: Samples) -> np.ndarray:
        mel = log_mel(samples.astype(np.float32) / 32768.0).T
        out: np.ndarray = (mel - mel.mean(0)) / (mel.std(0) + 1e-5)
        return out

    a, b = frames(part), frames(whole)
    # squared distances by the product (the frames' differences at once would be a 3-D array
    # of ~80 MB for a long sentence, and the bench measures peak memory)
    cost = ((a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T) / a.shape[1]
    total = np.cumsum(cost[0])  # the first row: `whole` may begin faster
    for i in range(1, len(a)):
        row = cost[i] + np.minimum(total, np.concatenate([[np.inf], total[:-1]]))
        for j in range(1, len(row)):  # a step along `whole` alone
            row[j] = min(row[j], row[j - 1] + cost[i, j])
        total = row
    # open end: the frame of `whole` where the cheapest path per step leaves the last frame
    end = int(np.argmin(total / (len(a) + np.arange(len(b)) + 1)))
    return min(len(whole), (end + 1) * RATE_HZ // 100)


def _trimmed(samples: Samples, floor: int = 300) -> Samples:
    """Without the synthesizer's own leading and trailing silence (the pause is the bench's)."""
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > floor)
    return samples[loud[0]:loud[-1] + 1] if len(loud) else samples


def _timed(cfg: Config, asked: list[Samples], brain: Any, vad: VoiceActivity, asr: Any,
           voices: dict[str, Any], turns_model: Any,
           gap_s: int = TIMED_GAP_S, played: list[Samples] | None = None) -> list[TurnRecord]:
    """The questions through the voice loop in real time: 1 s of quiet before each, `gap_s`
    after it. `played`: given, what the loudspeaker played is put in it (from the start)."""
    quiet = np.zeros(RATE_HZ, dtype=np.int16)

    def recording() -> Iterator[Samples]:
        for speech in asked:
            yield quiet
            yield speech
            yield from [quiet] * gap_s

    turns: list[TurnRecord] = []
    stream = RecordedStream(recording(), keep_speaker=played is not None, realtime=True)
    loop = VoiceLoop(stream, brain, vad, asr, voices, on_turn=turns.append,
                     segmenter=segmenter(cfg), turn_model=turns_model, hold=answer_hold(cfg))
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    if played is not None:
        played.append(stream.speaker())
    return turns


def heard_recordings(tts: Any, texts: list[str], noise_db: float | None,
                     rng: np.random.Generator
                     ) -> tuple[list[Samples], list[Samples], list[tuple[str, Samples]]]:
    """The bench's recordings of these questions: each said by the project's voice, then by
    the other voice (higher, quicker), under babble of all of them at `noise_db` (none when
    None), in that order: (the first voice's, the babble pool, each text with its mix)."""
    said = [spoken(tts, text) for text in texts]
    second = [other_voice(s) for s in said]
    pool = said + second
    mixed = [(text, _noisy(samples, pool, noise_db, rng))
             for text, voice_a, voice_b in zip(texts, said, second, strict=True)
             for samples in (voice_a, voice_b)]
    return said, pool, mixed


def run(cfg: Config, lang: str = "en", utterances: int = 35, noise_db: float | None = None,
        timed: int = 8, with_pause: int | None = None) -> dict[str, Any]:
    """`with_pause`: how many questions are said with a pause for the turn-taking figures (all
    of the dialogues' questions when None; they play in real time, CI's short run says few)."""
    fixed = dataclasses.replace(cfg, brain=dataclasses.replace(cfg.brain, language=lang))
    # without VITS sampling noise: the same questions, the same figures, run after run
    voices = {code: synthesizer(cfg, code, deterministic=True) for code in ("en", "ja")}
    # both voices really loaded (Open JTalk reads its dictionary at its first sentence): the
    # peak RSS counts both languages whichever the bench listens in
    spoken(voices["en"], "Welcome.")
    spoken(voices["ja"], "ようこそ。")
    tts = voices[lang]
    brain = load_brain(cfg)
    vad = voice_activity(cfg)
    # both languages' recognizers loaded once (the peak RSS counts them); the bench listens
    # in its own language, as a kiosk with brain.language fixed does
    auto = recognizer(dataclasses.replace(cfg, brain=dataclasses.replace(cfg.brain,
                                                                          language="auto")))
    asr = (WhisperRecognizer({lang: auto.models[lang]}, spelling=venue_spelling(cfg))
           if isinstance(auto, WhisperRecognizer)
           and lang in auto.models else recognizer(fixed))
    rng = np.random.default_rng(11)
    dialogues = _dialogues(lang, utterances)
    said, pool, recordings = heard_recordings(
        tts, [t.user for d in dialogues for t in d.turns], noise_db, rng)
    pairs = [(text, _recognize(asr, samples)) for text, samples in recordings]
    detection: dict[str, Any] = {}
    if isinstance(auto, WhisperRecognizer) and len(auto.models) > 1:
        # brain.language auto: each utterance's language told on Whisper base's encoding
        right, costs = 0, []
        for samples in said:
            lang_heard = auto.recognize(samples.astype(np.float32) / 32768.0)[1]
            right += lang_heard == lang
            costs.append(auto.detect_ms)
        detection = {"right": right, "of": len(said), "cost_ms": percentiles(costs, 0)}
    typed = page_top1(brain, dialogues)
    spoken_top1 = page_top1(brain, dialogues, pairs)

    questions = [t.user for d in dialogues for t in d.turns if t.act is None]
    timed_audio = [_noisy(spoken(tts, q), pool, noise_db, rng) for q in questions[:timed]]
    judge = turn_model(cfg)  # one, as the service loads it
    turns = _timed(cfg, timed_audio, brain, vad, asr, voices, judge)
    eos_first = [float(t.reply_start_ms - t.last_voiced_ms) for t in turns]
    eos_answer = [float((t.answer_start_ms or t.reply_start_ms) - t.last_voiced_ms)
                  for t in turns]
    stages = {
        "eos_decision": percentiles([float(t.eos_decision_ms) for t in turns], 0),
        "recognition_after_decision": percentiles([t.asr_ms for t in turns], 0),
        "brain": percentiles([t.brain_ms for t in turns], 0),
        "first_audio": percentiles([t.first_audio_ms for t in turns], 0),
    }
    asked = [(q, a) for q in questions[:with_pause]
             if (a := _paused(tts, q, lang, rng)) is not None]
    paused = [a for _, a in asked]
    params = segmenter(cfg).params
    cut_pauses = _cut_at_pauses(paused, vad, params, judge, asr)
    cut, cut_fixed = len(cut_pauses), len(_cut_at_pauses(paused, vad, params, None, asr))
    loop_run = _through_the_loop(cfg, paused, brain, vad, asr, voices, judge)
    whole_of = loop_run.questions

    def spread(values: list[float]) -> dict[str, Any]:
        return {"count": len(values), **(percentiles(values, 0) if values
                                         else {"p50": None, "p95": None})}

    report: dict[str, Any] = {
        "lang": lang,
        "noise_db": noise_db,
        "utterances": len(pairs),
        "error_rate": _error_rate(pairs, lang),
        "eos_to_first_audio_ms": percentiles(eos_first, 0),
        # the answer itself, when an acknowledgement goes first (tts.answer_hold_ms)
        "eos_to_answer_ms": percentiles(eos_answer, 0),
        "answer_hold_ms": cfg.tts.answer_hold_ms,
        "stages_ms": stages,
        "timed_turns": len(turns),
        "premature_cut_rate": round(cut / max(len(paused), 1), 3),
        "premature_cut_rate_fixed_silence": round(cut_fixed / max(len(paused), 1), 3),
        # through the loop: answered on the opening words after all (the visitor went on
        # later than asr.resume_within_ms, or was not heard going on), and begun to be
        "premature_answer_rate": round(loop_run.partial / max(whole_of, 1), 3),
        "opening_reply_begun_rate": round(loop_run.begun / max(whole_of, 1), 3),
        "opening_acknowledged_rate": round(loop_run.acknowledged / max(whole_of, 1), 3),
        # of the replies to an opening that began (acknowledgement or answer): how much of
        # that reply the visitor heard before it gave way, and of that, the answer's words
        "withdrawn_audio_ms": spread(loop_run.heard_ms),
        "withdrawn_answer_ms": spread(loop_run.answer_heard_ms),
        # what the turn model heard where it cut: a misheard opening, or one that ends as a
        # finished question can
        "cut_at": [{"question": asked[at][0], "pauses": judged}
                   for at, judged in cut_pauses.items()],
        "paused_utterances": len(paused),
        "spoken_top1": spoken_top1,
        "typed_top1": typed,
        "language_detection": detection,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        # what the peak is made of, read at the end: heap vs mapped model and dictionary files
        "rss_at_end_mb": rss_split_mb(),
        "examples": [{"said": ref, "heard": hyp} for ref, hyp in pairs[:6]],
    }
    if lang == "ja":
        report["error_rate_kana"] = _error_rate(pairs, lang, reading=True)
    return report

