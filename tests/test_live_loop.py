"""The live turn loop on a real clocked device (JACK dummy): a visitor's question is played
into the kiosk's microphone by another program over a JACK connection; the loop hears it,
answers, and speaks the reply on the loudspeaker."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from kiosk.audio import jack
from kiosk.audio.format import RATE_HZ
from kiosk.audio.wav import write_wav

pytestmark = pytest.mark.slow

VISITOR = """
import sys, wave, numpy as np, sounddevice as sd
with wave.open(sys.argv[1]) as w:
    data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
queue = [data[i:i + 160] for i in range(0, len(data), 160)]
go = []
def callback(outdata, frames, time, status):
    piece = queue.pop(0) if go and queue else np.zeros(frames, dtype=np.int16)
    outdata[:len(piece), 0] = piece
    outdata[len(piece):, 0] = 0
stream = sd.OutputStream(samplerate=16000, channels=1, dtype="int16", device="system",
                         blocksize=160, callback=callback)
stream.start()
print("ready", flush=True)
sys.stdin.readline()
go.append(True)
while queue:
    sd.sleep(20)
print("done", flush=True)
"""


def _ports() -> set[str]:
    return set(jack.ports())


def test_a_spoken_question_gets_a_spoken_answer(jack_server: None, models_dir: Path,
                                                tmp_path: Path) -> None:
    from kiosk.app import TurnRecord, VoiceLoop, run_recording
    from kiosk.asr.pocketsphinx import PocketsphinxRecognizer
    from kiosk.audio.duplex import DuplexStream
    from kiosk.audio.vad import SileroVad
    from kiosk.brain import Brain
    from kiosk.config import DEMO_SITE
    from kiosk.models import load_manifest, model_path
    from kiosk.retrieval.embedder import load_embedder
    from kiosk.retrieval.index import build_index
    from kiosk.tts import spoken
    from kiosk.tts.piper import PiperSynthesizer

    manifest = load_manifest()
    embedder = load_embedder(manifest["e5-small-int8"], models_dir)
    brain = Brain(build_index(DEMO_SITE, embedder), embedder)
    tts = PiperSynthesizer.from_manifest(manifest["piper-joe-en"], models_dir)
    question = spoken(tts, "Where can I park my car?")
    recording = np.concatenate([np.zeros(RATE_HZ // 2, dtype=np.int16), question,
                                np.zeros(RATE_HZ, dtype=np.int16)])
    wav = tmp_path / "question.wav"
    write_wav(wav, recording)
    vad = SileroVad(model_path(manifest["silero-vad"], models_dir))
    # the same audio through the recorded-audio turn: what the live loop must also hear
    _, offline = run_recording(recording, brain, vad, PocketsphinxRecognizer(),
                               {"en": tts, "ja": tts})
    assert len(offline) == 1

    before = _ports()
    stream = DuplexStream("system", "system")
    stream.start()
    ours = sorted(p for p in _ports() - before if p.endswith("in_0") or "in" in p.split(":")[1])
    states: list[str] = []
    turns: list[TurnRecord] = []
    loop = VoiceLoop(stream, brain, vad, PocketsphinxRecognizer(), {"en": tts, "ja": tts},
                     on_state=states.append, on_turn=turns.append)
    stop = asyncio.Event()
    runner = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: runner.run_until_complete(loop.run(stop)),
                              daemon=True)
    thread.start()
    visitor = subprocess.Popen([sys.executable, "-c", VISITOR, str(wav)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert visitor.stdout is not None and visitor.stdout.readline().strip() == "ready"
        theirs = sorted(p for p in _ports() - before - set(ours) if "out" in p.split(":")[1])
        assert ours and theirs, (ours, theirs)
        subprocess.run(["jack_connect", theirs[0], ours[0]], check=True)
        assert visitor.stdin is not None
        visitor.stdin.write("go\n")
        visitor.stdin.flush()
        deadline = time.monotonic() + 30
        while not turns and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        visitor.kill()
        runner.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)
        loop.close()
        stream.stop()
    assert len(turns) == 1, f"turns {turns}; states {states}"
    turn = turns[0]
    # identical audio, identical engines, but the visitor's playback starts on a 10 ms JACK
    # period, half a 20 ms chunk off the recording's grid now and then: the utterance is cut a
    # chunk apart and the recognizer may hear a word differently ("park" / "parked"); the
    # answer is the same page
    from kiosk.bench.voice import word_errors

    assert turn.page == offline[0].page
    assert word_errors(offline[0].utterance, turn.utterance)[0] <= 1, (turn.utterance,
                                                                      offline[0].utterance)
    assert states[:3] == ["listening", "thinking", "speaking"]
    assert turn.eos_decision_ms == 400 and turn.first_audio_ms < 2000
