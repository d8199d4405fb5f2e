"""The runner's stop signals with the real handler, in this process: SIGINT, SIGTERM and SIGHUP
each raise the same Interrupted (exit 130, "stopped by …"), after which further signals are
ignored until the clean-up is done, and the handlers before the run are put back.

Because all three go through this one handler, the real interrupted runs of the integration
tests each send one of them (at rest SIGHUP, in transit SIGTERM, operations SIGINT) instead
of repeating a whole run per signal."""

from __future__ import annotations

import os
import signal
import time

import pytest

from encbench.engine.runner import STOP_SIGNALS, stop_on_signals
from encbench.errors import Interrupted


def test_the_three_stop_signals_are_closing_the_terminal_ctrl_c_and_kill() -> None:
    assert set(STOP_SIGNALS) == {signal.SIGHUP, signal.SIGINT, signal.SIGTERM}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_raises_interrupted_then_further_ones_are_ignored(
    sig: signal.Signals,
) -> None:
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    with stop_on_signals():
        assert all(signal.getsignal(s) not in (before[s], signal.SIG_IGN) for s in STOP_SIGNALS)
        with pytest.raises(Interrupted) as caught:
            os.kill(os.getpid(), sig)
            time.sleep(10)  # the handler raises in the main thread, cutting this short
        assert str(caught.value) == f"stopped by {sig.name}; what was measured is kept"
        assert caught.value.exit_code == 130
        # During the clean-up every stop signal, a second one of its own kind too, is ignored:
        # this process (the run) survives them.
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in STOP_SIGNALS)
        for other in STOP_SIGNALS:
            os.kill(os.getpid(), other)
        time.sleep(0.05)
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before
