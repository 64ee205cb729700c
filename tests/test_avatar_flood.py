"""Issue 17, item 8 end to end: the service's own loop (`kiosk run --realtime`, a child
process) while a local program opens 1,000 WebSockets and offers 100 MB of frames to the avatar
socket. The timings' ratio is a benchmark figure (`kiosk bench socket`); here what must hold
whatever the machine's speed: every turn answered, no traceback, no journal flood, memory and
the process's own CPU time while serving near the quiet run's."""

from __future__ import annotations

import pytest

from kiosk.bench import avatar_load

pytestmark = [pytest.mark.slow, pytest.mark.realtime]  # bounds on CPU time and RSS


def test_a_flood_on_the_avatar_socket_leaves_the_voice_loop_alone() -> None:
    report = avatar_load.run(seconds=40.0, connections=1000, megabytes=100.0)
    quiet, loaded, flood = report["quiet"], report["loaded"], report["flood"]
    assert flood["attempts"] == 1000 and flood["bytes_offered"] >= 99_000_000
    assert quiet["turns"] >= 2 and loaded["turns"] == quiet["turns"]
    assert quiet["tracebacks"] == loaded["tracebacks"] == 0
    # one line per kind of refusal per 30 s: the flood adds a few lines, not one per client
    assert loaded["log_bytes"] <= quiet["log_bytes"] + 1000
    # what stays resident (the median over the second half) must not hold the 100 MB offered;
    # the engines alone move it by -24 to +33 MB between two runs with no flood kept (measured
    # over five runs), so a 30 MB bound failed now and then on noise
    assert report["rss_growth_mb"] <= 60.0
    # the CPU spent serving (from the avatar page's opening, when the flood begins; loading
    # the engines is no part of it): the quiet run's own moves from 4.9 to 6.4 s between runs
    # (speculative recognition follows the wall clock), and 1,000 handshakes cost a second or
    # two; a loop that spins on the flood, or does work per frame, costs tens of seconds
    assert loaded["serving_cpu_s"] <= quiet["serving_cpu_s"] * 1.5 + 3.0, report
