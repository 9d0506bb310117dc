"""Training in the background of a Streamlit session: one job per session, a few per server.

Training runs in a thread so the page stays responsive: a fragment polls the job and redraws the
curves, and Stop sets an event that ``core.training.loop.train`` reads after every step (``should_stop``; it
then still returns the model trained so far, measured on the test set). A process-wide semaphore caps
how many trainings run at once, so forty students pressing Start cannot starve the server's two
cores. A training belongs to the session that started it: when that session ends (its tab closed
for longer than Streamlit keeps it for a reconnect), the run stops at its next step and frees its
slot, since nobody is left to see its model. Only ``session_watch`` reads Streamlit's runtime; the
page owns the session state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from core.training.settings import RECIPES
from i18n import t

MAX_CONCURRENT_TRAININGS = 2  # per server process; each one wants a core
COOLDOWN = 0.3  # the rate falls linearly to 0 over the last 30% of the budget (TrainingSettings.cooldown)

# The language model the Training page trains live ("lm"): smaller than the shipped one
# (RECIPES["lm"]) so that its induction heads form within minutes on one core. A passage repeated
# in every window (repeat 1.0) and short windows give the look-back a strong, frequent reward, and
# RoPE, whose scores depend on the distance between tokens only, lets the probe's 81 tokens
# (core.training.language.PROBE) be read by a model trained on windows of 48; learned positions past
# the window would be untrained rows and hide the heads. Tests replace it with something tinier.
LM_LIVE = replace(
    RECIPES["lm"],
    sizes=dict(RECIPES["lm"].sizes, d_model=64, num_heads=4, num_layers=2, d_ff=256, dropout=0.0,
               positions="rope"),
    merges=500, context=48, batch_size=32, lr=5e-3, warmup=50, repeat=1.0, copies=2, eval_every=100,
)
LM_BUDGET = (5000, 8)  # steps, minutes the Training page proposes for it: room for the phase change


@dataclass
class TrainingJob:
    task: str
    config: dict
    steps: int
    minutes: float
    history: list[dict] = field(default_factory=list)
    result: object | None = None  # core.training.loop.TrainResult once finished
    error: str | None = None
    started: float = field(default_factory=time.time)
    ended_with_session: bool = False  # its session ended first: stopped, no model kept
    missing_corpus: bool = False  # "lm" only: the text to learn from is not installed (``error`` says which)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        """The thread is alive (training, or measuring the model it trained): it holds a slot."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        """Stop was pressed and the run is finishing: its current step, then the test-set measures."""
        return self.running and self._stop.is_set()

    @property
    def stopped_by_user(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        if self.running:  # a Stop that arrives after the end changes nothing ("finished" stays true)
            self._stop.set()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


class ServerBusy(RuntimeError):
    pass


class SessionEnded(Exception):
    """Raised in the training thread when the job's session has ended: the run stops without
    measuring a model nobody will see."""


class SessionWatch:
    """Whether a session still lives, asked by the training thread after every step.

    Connected: yes. Disconnected (tab closed, network lost): for ``grace`` seconds more, as long as
    Streamlit keeps a disconnected session for a reconnect (``server.disconnectedSessionTTL``); a
    reconnect within that time resumes the same session id, and the clock restarts at the next
    disconnect. ``is_connected(session_id)`` must be safe to call from any thread.
    """

    def __init__(self, session_id: str, is_connected: Callable[[str], bool], grace: float,
                 clock: Callable[[], float] = time.monotonic):
        self.session_id, self.grace = session_id, grace
        self._is_connected, self._clock = is_connected, clock
        self._gone_since: float | None = None

    def __call__(self) -> bool:
        if self._is_connected(self.session_id):
            self._gone_since = None
            return True
        now = self._clock()
        if self._gone_since is None:
            self._gone_since = now
        return now - self._gone_since < self.grace


def session_watch() -> SessionWatch | None:
    """A watch on the session whose script is running now; None where there is no server whose
    sessions end (a bare script, AppTest, whose sessions live as long as the test holds them)."""
    import streamlit as st
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists() or st.get_option("global.appTest"):
        return None
    # Runtime.is_active_session: "Threading: SAFE. May be called on any thread." (Streamlit 1.67)
    return SessionWatch(ctx.session_id, Runtime.instance().is_active_session,
                        float(st.get_option("server.disconnectedSessionTTL")))


_slots = threading.BoundedSemaphore(MAX_CONCURRENT_TRAININGS)


def start_training(task: str, config: dict, steps: int, minutes: float,
                   owner_alive: Callable[[], bool] | None = None) -> TrainingJob:
    """Start a training thread, or raise ServerBusy when the server's trainings are all taken.

    ``owner_alive`` (``session_watch()``): asked after every step; once it says False the run stops,
    keeps no model (``ended_with_session``) and frees its slot.
    """
    if task == "lm":
        config = dict(lm_live_config(), seed=int(config.get("seed", 0)))
    seed = int(config.get("seed", 0))
    if not _slots.acquire(blocking=False):
        # English here (logs); the page shows the same key in the visitor's language
        raise ServerBusy(t("training.busy", "en", n=MAX_CONCURRENT_TRAININGS))
    job = TrainingJob(task, dict(config), steps, minutes)

    def on_progress(progress) -> None:
        job.history.append(asdict(progress))

    def should_stop() -> bool:
        if owner_alive is not None and not owner_alive():
            raise SessionEnded
        return job._stop.is_set()

    def work() -> None:
        from core.training.loop import train
        from core.training.text import MissingCorpus

        try:
            # num_threads=None: torch's thread count is process-wide, a session must not change it for all
            if task == "lm":
                job.result = _train_lm(steps, minutes, on_progress, should_stop, seed)
                return
            job.result = train(task, config, steps=steps, minutes=minutes, num_threads=None,
                               log_every=max(1, min(50, steps // 40)), eval_every=max(steps // 4, 1),
                               cooldown=COOLDOWN, eval_limit=200, on_progress=on_progress,
                               should_stop=should_stop, seed=seed)
        except SessionEnded:
            job.ended_with_session = True
        except MissingCorpus as exc:  # the fortune packages are not installed: a sentence, no traceback
            job.error, job.missing_corpus = str(exc), True
        except Exception as exc:  # shown on the page; the session stays usable
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            _slots.release()

    job._thread = threading.Thread(target=work, name=f"glassbox-train-{task}", daemon=True)
    job._thread.start()
    return job


def lm_live_config() -> dict:
    """The sizes of the live language model (the sidebar's do not apply: :data:`LM_LIVE` is tuned), its
    context, merges, and how often it is measured."""
    named = ("d_model", "num_heads", "num_layers", "d_ff", "dropout", "positions")
    sizes = {k: LM_LIVE.sizes[k] for k in named}
    return dict(sizes, context=LM_LIVE.context, merges=LM_LIVE.merges, eval_every=LM_LIVE.eval_every)


def _train_lm(steps: int, minutes: float, on_progress, should_stop, seed: int):
    """The language model of :data:`LM_LIVE` trained on the fortune files; its progress, with the
    induction probe every ``eval_every`` steps, goes to ``on_progress``."""
    from core.training.loop import train
    from core.training.text import corpus

    parts = corpus()  # MissingCorpus before a slot's worth of work is spent
    return train("lm", settings=LM_LIVE, data=parts, steps=steps, minutes=minutes, num_threads=None,
                 log_every=max(1, min(LM_LIVE.eval_every, 25)), on_progress=on_progress,
                 should_stop=should_stop, seed=seed)
