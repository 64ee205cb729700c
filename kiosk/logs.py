"""Logging for an appliance in a public place: levels the journal understands, and a turn
record per visitor turn that carries no visitor words unless the installer enables it.

Under systemd (JOURNAL_STREAM set) each line starts with its syslog priority, `<3>` for an
error, so `journalctl -p warning` works without a journal library. Visitors' words, when
stored at all, go to one JSON-lines file a day in the logs folder, deleted after
logging.retention_days; never to the journal, whose retention the venue does not control.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3,
             logging.CRITICAL: 2}

# Words of the visitor and the avatar: kept out of the journal.
WORD_FIELDS = ("utterance", "query", "reply")


class JournalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        priority = _PRIORITY.get(record.levelno, 6)
        return f"<{priority}>{record.name}: {super().format(record)}"


def setup_logging(level: int, environ: dict[str, str] | None = None) -> None:
    env = os.environ if environ is None else environ
    handler = logging.StreamHandler(sys.stderr)
    if env.get("JOURNAL_STREAM"):
        handler.setFormatter(JournalFormatter("%(message)s"))
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def logs_dir(state_dir: Path, environ: dict[str, str] | None = None) -> Path:
    """systemd's LogsDirectory when the service runs, else logs/ in the state folder."""
    env = os.environ if environ is None else environ
    given = env.get("LOGS_DIRECTORY", "").split(":")[0]
    return Path(given) if given else state_dir / "logs"


# What `kiosk report` counts, kept for every turn: no words, only what kind of turn it was,
# which page answered it (a page of the venue's own site, not something a visitor said) and
# whether it was cut off and asked again.
STAT_FIELDS = ("lang", "act", "kind", "page", "unclear")
STATS_RETENTION_DAYS = 400


class TurnLog:
    def __init__(self, folder: Path, *, store_transcripts: bool, retention_days: int,
                 clock: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self.store_transcripts = store_transcripts
        self.retention_days = retention_days
        self._clock = clock
        self.turns = 0
        self._pruned_day = ""  # files expire by the day: one look a day is enough

    def record(self, turn: dict[str, Any]) -> None:
        self.turns += 1
        public = {k: v for k, v in turn.items() if k not in WORD_FIELDS}
        public.update({f"{k}_chars": len(str(turn.get(k) or "")) for k in WORD_FIELDS})
        log.info("turn %d: %s", self.turns, json.dumps(public, ensure_ascii=False))
        try:
            self._append("stats", {k: turn.get(k) for k in STAT_FIELDS})
            if self.store_transcripts:
                self._append("turns", turn)
        except OSError as exc:
            log.warning("logs: cannot write the turn to %s (%s); check the logs folder's "
                        "space and permissions", self.folder, exc)
            return
        today = time.strftime("%Y-%m-%d", time.gmtime(self._clock()))
        if today != self._pruned_day:
            self._pruned_day = today
            self.prune()

    def _append(self, kind: str, record: dict[str, Any]) -> None:
        now = self._clock()
        self.folder.mkdir(parents=True, exist_ok=True)
        day = time.strftime("%Y-%m-%d", time.gmtime(now))
        line = json.dumps({"time": round(now, 3), **record}, ensure_ascii=False)
        with (self.folder / f"{kind}-{day}.jsonl").open("a", encoding="utf-8") as out:
            out.write(line + "\n")

    def prune(self) -> list[Path]:
        """Delete transcript files older than the retention period (and word-free counts
        older than STATS_RETENTION_DAYS); returns them.

        Days are read as dates, not compared as names. A file whose name is no date was not
        written by a turn log: its age cannot be told, so it goes. A transcript dated after
        today was written under a clock that was wrong, and goes too: visitors' words are
        never kept longer than promised. Counts dated after today stay (a Pi without a clock
        battery starts behind the real time until NTP answers, and they hold no words)."""
        if not self.folder.is_dir():
            return []
        removed = []
        now = self._clock()
        today = dt.datetime.fromtimestamp(now, dt.UTC).date()
        for kind, days in (("turns", self.retention_days), ("stats", STATS_RETENTION_DAYS)):
            cutoff = dt.datetime.fromtimestamp(now - days * 86_400, dt.UTC).date()
            for path in sorted(self.folder.glob(f"{kind}-*.jsonl")):
                try:
                    day: dt.date | None = dt.date.fromisoformat(
                        path.stem.removeprefix(f"{kind}-"))
                except ValueError:
                    day = None
                if day is None or day < cutoff or (kind == "turns" and day > today):
                    if day is None:
                        log.warning("logs: %s is named by no date; deleted", path.name)
                    elif day > today:
                        log.warning("logs: %s is dated after today (the clock was wrong when "
                                    "it was written); deleted", path.name)
                    path.unlink(missing_ok=True)
                    removed.append(path)
        if removed:
            log.info("logs: deleted %d file(s) past retention (transcripts: %d days)",
                     len(removed), self.retention_days)
        return removed
