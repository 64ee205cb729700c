"""Whether a follow-up's context rides at all: a small logistic model, fitted across sites.

The resolver reads a turn's words ("it", "that", a follow-up's shape) and adds the exchange
they seem to point at. Visitors also change topic with words that look like references ("who
else uses it", "what if I lose my security key instead"): then the previous page wins a search
it should not. The gate weighs what the bare search of the turn's own words says against the
reference: how strongly those words find a page on their own, whether that page is the one
the conversation was on, how much of the words and of their meaning that page holds. Its
weights are fitted on real sites' dialogues (scripts/fit_gate.py) and kept in gate.toml; they
are validated leave-one-site-out (`kiosk eval --all --cv site`).

Pure: features in, a probability and the features' shares of it out. No I/O but reading the
weights file.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

GATE_FILE = Path(__file__).resolve().parent / "gate.toml"

# What the brain measures for a follow-up before its context search (kiosk.brain).
FEATURES = (
    "immediate",  # the resolver's reading: a follow-up of the last exchange (else: a question
    # too weak alone, leaning on the last topic; "the X from earlier" is never gated)
    "deictic",  # a word that points back ("it", "that", それ), not a follow-up's shape alone
    "strength",  # how much the words carry of their own (content strength, capped, 0..1)
    "bare_best",  # the bare search's best page score
    "bare_lead",  # its lead over the second page (relative)
    "prev_top",  # the bare search's best page is the page the reference points at
    "prev_share",  # that page's bare score as a share of the best
    "held",  # the share of the words that page holds, against the best page's
    "meaning_gap",  # meaning: how much closer the words are to the best page than to it
    "on_screen",  # the page the reference points at is still on the screen
)


@dataclass(frozen=True)
class ContextGate:
    """p(the turn's own words alone find the page better than with the context)."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float = 0.5

    def _z(self, features: dict[str, float]) -> npt.NDArray[np.float64]:
        x = np.array([features[name] for name in FEATURES], dtype=np.float64)
        z: npt.NDArray[np.float64] = (x - np.array(self.mean)) / np.array(self.scale)
        return z

    def p_alone(self, features: dict[str, float]) -> float:
        logit = float(self._z(features) @ np.array(self.weights)) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logit))))

    def alone(self, features: dict[str, float]) -> bool:
        return self.p_alone(features) > self.threshold

    def shares(self, features: dict[str, float]) -> list[tuple[str, float]]:
        """Each feature's part of the logit, largest first: what decided."""
        return _ranked(self._z(features) * np.array(self.weights))


def _ranked(parts: npt.NDArray[np.float64]) -> list[tuple[str, float]]:
    return sorted(((name, round(float(v), 2)) for name, v in zip(FEATURES, parts, strict=True)),
                  key=lambda item: -abs(item[1]))


def fit(rows: list[dict[str, float]], labels: list[int], l2: float = 1.0,
        threshold: float = 0.5) -> ContextGate:
    """L2-regularized logistic regression by Newton's method, on standardized features.
    `labels`: 1 where the words alone found the page and the context did not, 0 the other
    way round (turns where both or neither did teach nothing)."""
    x = np.array([[row[name] for name in FEATURES] for row in rows], dtype=np.float64)
    y = np.array(labels, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not shrunk
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return ContextGate(tuple(float(v) for v in w[:-1]), float(w[-1]),
                       tuple(float(v) for v in mean), tuple(float(v) for v in scale), threshold)


@dataclass(frozen=True)
class GateCommittee:
    """Gates fitted on the same follow-ups with every L2 weight and threshold of a grid,
    deciding by majority. One gate chosen from the grid by leaving sites out moved with any
    change to the sites' follow-ups (a threshold 0.6 -> 0.7 on a tie of one turn), and a
    left-out site with it; the majority of all of them moves only on the turns they split on.
    The probability and the features' shares said are the members' means."""

    members: tuple[ContextGate, ...]

    @cached_property
    def _arrays(self) -> tuple[npt.NDArray[np.float64], ...]:
        # (the members as arrays, read once: a follow-up is judged in ~20 us, not ~250)
        return (np.array([m.weights for m in self.members]),
                np.array([m.bias for m in self.members]),
                np.array([m.mean for m in self.members]),
                np.array([m.scale for m in self.members]),
                np.array([m.threshold for m in self.members]))

    def _parts(self, features: dict[str, float]) -> npt.NDArray[np.float64]:
        weights, _, mean, scale, _ = self._arrays
        x = np.array([features[name] for name in FEATURES], dtype=np.float64)
        parts: npt.NDArray[np.float64] = (x - mean) / scale * weights
        return parts

    def _p(self, features: dict[str, float]) -> npt.NDArray[np.float64]:
        logits = self._parts(features).sum(axis=1) + self._arrays[1]
        p: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))
        return p

    def p_alone(self, features: dict[str, float]) -> float:
        return float(self._p(features).mean())

    def alone(self, features: dict[str, float]) -> bool:
        return 2 * int((self._p(features) > self._arrays[4]).sum()) > len(self.members)

    def shares(self, features: dict[str, float]) -> list[tuple[str, float]]:
        return _ranked(self._parts(features).mean(axis=0))


Gate = ContextGate | GateCommittee


def fit_committee(rows: list[dict[str, float]], labels: list[int], l2s: tuple[float, ...],
                  thresholds: tuple[float, ...]) -> GateCommittee:
    """A gate per L2 weight and threshold, on the same follow-ups (`fit`)."""
    fitted = [fit(rows, labels, l2) for l2 in l2s]
    return GateCommittee(tuple(ContextGate(g.weights, g.bias, g.mean, g.scale, t)
                               for g in fitted for t in thresholds))


def dumps(gate: Gate, note: str) -> str:
    """gate.toml: the fitted weights, by feature name, and how they were fitted (`note`); a
    committee as its members, each fit once with the thresholds it votes at."""
    lines = [f"# {line}" for line in note.splitlines()]
    if isinstance(gate, GateCommittee):
        first = gate.members[0]
        lines += _table("mean", first.mean) + _table("scale", first.scale)
        fits: dict[tuple[tuple[float, ...], float], list[float]] = {}
        for m in gate.members:
            fits.setdefault((m.weights, m.bias), []).append(m.threshold)
        for (weights, bias), thresholds in fits.items():
            lines += ["", "[[member]]", f"bias = {bias!r}", f"thresholds = {thresholds!r}"]
            lines += _table("member.weights", weights)[1:]
    else:
        lines += ["", f"bias = {gate.bias!r}", f"threshold = {gate.threshold!r}"]
        lines += _table("weights", gate.weights) + _table("mean", gate.mean)
        lines += _table("scale", gate.scale)
    return "\n".join(lines) + "\n"


def _table(name: str, values: tuple[float, ...]) -> list[str]:
    """A TOML table of one number per feature, after a blank line."""
    return ["", f"[{name}]", *(f"{f} = {v!r}" for f, v in zip(FEATURES, values, strict=True))]


def load_gate(path: Path = GATE_FILE) -> Gate | None:
    """The fitted gate, or None when there is no weights file (the context always rides)."""
    if not path.is_file():
        return None
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if "member" in data:
        mean = tuple(float(data["mean"][n]) for n in FEATURES)
        scale = tuple(float(data["scale"][n]) for n in FEATURES)
        return GateCommittee(tuple(
            ContextGate(tuple(float(m["weights"][n]) for n in FEATURES), float(m["bias"]),
                        mean, scale, float(t))
            for m in data["member"] for t in m["thresholds"]))
    return ContextGate(tuple(float(data["weights"][n]) for n in FEATURES), float(data["bias"]),
                       tuple(float(data["mean"][n]) for n in FEATURES),
                       tuple(float(data["scale"][n]) for n in FEATURES),
                       float(data.get("threshold", 0.5)))
