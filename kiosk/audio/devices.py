"""Sound devices by name, through PortAudio (sounddevice). Errors name the device and list
the ones that exist, so an installer can fix the setting in one step."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kiosk.audio.format import RATE_HZ, Samples, level_dbfs, resample, to_int16
from kiosk.errors import KioskError


def portaudio() -> Any:
    try:
        import sounddevice
    except OSError as exc:  # PortAudio itself is missing
        raise KioskError("audio", f"PortAudio is not available ({exc})",
                         "install it: apt-get install libportaudio2") from exc
    return sounddevice


def rescan() -> None:
    """PortAudio lists devices (and sound servers such as JACK) once, when initialized: start
    it again to see a replugged microphone or a server started since. No stream may be open."""
    sd = portaudio()
    sd._terminate()
    sd._initialize()


def device_names(kind: str) -> list[str]:
    channels = "max_input_channels" if kind == "input" else "max_output_channels"
    return [d["name"] for d in portaudio().query_devices() if d[channels] > 0]


def find_device(name: str, kind: str) -> int | None:
    """PortAudio's index of a device by (part of) its name; None for the system default."""
    sd = portaudio()
    names = device_names(kind)
    setting = f"audio.{kind}_device"
    if not names:
        raise KioskError("audio", f"no {kind} device at all (is a sound card or JACK running?)",
                         f"plug one in; then set {setting} NAME")
    if name in ("", "default"):
        return None
    for index, device in enumerate(sd.query_devices()):
        channels = device["max_input_channels" if kind == "input" else "max_output_channels"]
        if channels > 0 and name.lower() in device["name"].lower():
            return index
    listed = ", ".join(f'"{n}"' for n in names)
    raise KioskError("audio", f'{setting} "{name}" not found; available: {listed}',
                     f"set {setting} NAME")


def device_rate(device: int | None, kind: str) -> int:
    """16 kHz when the device takes it, else its own default rate (resampled at the edge)."""
    sd = portaudio()
    check = sd.check_input_settings if kind == "input" else sd.check_output_settings
    try:
        check(device=device, samplerate=RATE_HZ, channels=1, dtype="int16")
        return RATE_HZ
    except Exception:  # PortAudio says no to 16 kHz: use the device's own rate
        info = sd.query_devices(device, kind)
        return int(info["default_samplerate"])


def play(samples: Samples, device_name: str) -> float:
    """Play 16 kHz audio on the named device; returns the seconds it took (clocked by it)."""
    sd = portaudio()
    device = find_device(device_name, "output")
    rate = device_rate(device, "output")
    data = resample(samples, RATE_HZ, rate) if rate != RATE_HZ else samples
    start = time.monotonic()
    sd.play(data, samplerate=rate, device=device, blocking=True)
    return time.monotonic() - start


def record(seconds: float, device_name: str) -> Samples:
    sd = portaudio()
    device = find_device(device_name, "input")
    rate = device_rate(device, "input")
    data = sd.rec(int(seconds * rate), samplerate=rate, channels=1, dtype="int16",
                  device=device, blocking=True)
    samples = to_int16(np.asarray(data).reshape(-1))
    return resample(samples, rate) if rate != RATE_HZ else samples


def level_report(samples: Samples, device_name: str) -> str:
    rms = level_dbfs(samples)
    peak_value = int(np.abs(samples.astype(np.int32)).max(initial=0))
    peak = -120.0 if peak_value == 0 else 20.0 * float(np.log10(peak_value / 32768.0))
    bar = "#" * max(0, min(40, round((rms + 80.0) / 2)))
    clip = "  CLIPPING" if peak_value >= 32767 else ""
    return (f"mic {device_name or 'default'}: level {rms:.1f} dBFS, peak {peak:.1f} dBFS "
            f"[{bar:<40}]{clip}")
