"""Training in the background of a Streamlit session: one job per session, a few per server.

Training runs in a thread so the page stays responsive: a fragment polls the job and redraws the
curves, and Stop sets an event that the training callback reads (``core.train.train`` stops when
``on_progress`` returns False and still returns the model trained so far). A process-wide
semaphore caps how many trainings run at once, so forty students pressing Start cannot starve
the server's two cores. Nothing here imports Streamlit: the page owns the session state.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field

from i18n import t

MAX_CONCURRENT_TRAININGS = 2  # per server process; each one wants a core
COOLDOWN = 0.3  # the rate falls linearly to 0 over the last 30% of the budget (core.train's cooldown)


@dataclass
class TrainingJob:
    task: str
    config: dict
    steps: int
    minutes: float
    history: list[dict] = field(default_factory=list)
    result: object | None = None  # core.train.TrainResult once finished
    error: str | None = None
    started: float = field(default_factory=time.time)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def stopped_by_user(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


class ServerBusy(RuntimeError):
    pass


_slots = threading.BoundedSemaphore(MAX_CONCURRENT_TRAININGS)


def start_training(task: str, config: dict, steps: int, minutes: float) -> TrainingJob:
    """Start a training thread, or raise ServerBusy when the server's trainings are all taken."""
    if not _slots.acquire(blocking=False):
        # English here (logs); the page shows the same key in the visitor's language
        raise ServerBusy(t("training.busy", "en", n=MAX_CONCURRENT_TRAININGS))
    job = TrainingJob(task, dict(config), steps, minutes)

    def on_progress(progress) -> bool:
        job.history.append(asdict(progress))
        return not job._stop.is_set()

    def work() -> None:
        from core.train import train

        try:
            # num_threads=None: torch's thread count is process-wide, a session must not change it for all
            job.result = train(task, config, steps=steps, minutes=minutes, num_threads=None,
                               log_every=max(1, min(50, steps // 40)), eval_every=max(steps // 4, 1),
                               cooldown=COOLDOWN, eval_limit=200, on_progress=on_progress,
                               seed=int(config.get("seed", 0)))
        except Exception as exc:  # shown on the page; the session stays usable
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            _slots.release()

    job._thread = threading.Thread(target=work, name=f"glassbox-train-{task}", daemon=True)
    job._thread.start()
    return job
