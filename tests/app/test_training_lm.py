"""The Training page's language model ("lm"): a tiny live run through the page, its prefix-matching
curve, and its model on every page of the session — in English and Chinese.

The recipe (ui.sections.training_jobs.LM_LIVE) and the text (core.training.text.corpus) are replaced by tiny
ones:
the real recipe needs minutes, and the test must not depend on the fortune packages being installed.
"""

import re
from dataclasses import replace

import pytest
from apphelpers import assert_clean, badges, messages, open_app, plotly_specs, start_and_wait

from i18n import t
from ui.sections import training_jobs as tj

TINY_LM = replace(
    tj.LM_LIVE,
    sizes=dict(tj.LM_LIVE.sizes, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0,
               positions="rope"),
    merges=20, context=32, batch_size=4, lr=3e-3, warmup=5, repeat=0.5, copies=3, eval_every=10,
)
LINES = [
    "the cat sat on the mat",
    "a bird in the hand",
    "白日依山尽，黄河入海流",
    "to be or not to be",
    "欲穷千里目，更上一层楼",
    "all that glitters is not gold",
]
PARTS = {"train": LINES * 20, "valid": LINES[:3] * 4, "test": LINES[3:] * 4}


@pytest.fixture
def tiny_lm(monkeypatch):
    import core.training.text

    monkeypatch.setattr(tj, "LM_LIVE", TINY_LM)
    monkeypatch.setattr(core.training.text, "corpus", lambda: PARTS)


@pytest.fixture
def zh_reruns(monkeypatch):
    """As in test_page_training.py: AppTest formats the sidebar's radios outside the session."""
    import ui.page.lang

    monkeypatch.setattr(ui.page.lang, "current_lang", lambda: "zh")


def train_lm_tiny(at, steps=50):
    at.radio(key="train_task").set_value("lm").run()
    at.slider(key="train_steps").set_value(steps).run()
    job = start_and_wait(at, timeout=180)
    assert job.error is None, job.error
    return job


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_language_model_trains_live_and_its_prefix_matching_is_plotted(lang, tiny_lm, request):
    if lang == "zh":
        request.getfixturevalue("zh_reruns")
    at = open_app({"lang": lang}, page="pages/training.py")
    job = train_lm_tiny(at)
    assert job.task == "lm" and job.config["d_model"] == 16  # the recipe's sizes, not the sidebar's
    assert job.result.task == "lm" and job.result.metrics["steps"] == 50
    probed = [h for h in job.history if h["heads"]]
    assert [h["step"] for h in probed] == [10, 20, 30, 40, 50]
    assert all(0.0 <= h["heads"]["best_pm"] <= 1.0 for h in probed)
    # the curves: the measured best prefix-matching score at the eval steps, next to the loss
    (curves,) = [
        s
        for s in plotly_specs(at)
        if any(tr.get("name") == t("training.fig.best_pm", lang) for tr in s["data"])
    ]
    pm = next(tr for tr in curves["data"] if tr["name"] == t("training.fig.best_pm", lang))
    assert pm["x"] == [10, 20, 30, 40, 50] and pm["y"] == [h["heads"]["best_pm"] for h in probed]
    names = {tr["name"] for tr in curves["data"]}
    assert names >= {t("training.fig.loss", lang), t("training.fig.val_ppl", lang)}
    assert any(t("training.lm.curves", lang, every=10) == c.value for c in at.caption)
    m = job.result.metrics
    ppl = m["test"]["perplexity"]
    best, (i, h) = max(
        (score, (i, h))
        for i, row in enumerate(m["induction"]["prefix_matching"])
        for h, score in enumerate(row)
    )
    head = t("induction.where", lang, layer=i + 1, head=h + 1)  # layers and heads from 1, as everywhere
    done = t(
        "training.done.lm.finished",
        lang,
        steps=50,
        seconds=m["seconds"],
        ppl=f"{ppl:.1f}",
        pm=f"{best:.2f}",
        head=head,
    )
    assert [s.value for s in at.success] == [done]
    # "use this model": the session's weights are this GPT, with its own badge and sentence
    at.button(key="train_use").click().run()
    assert_clean(at)
    assert at.radio(key="weights").value == "session"
    want = t("training.badge.session_lm", lang, steps=50, ppl=f"{ppl:.1f}")
    assert any(want in b for b in badges(at))
    assert t(
        "training.compare.lm", lang, page=t("nav.attention.title", lang), button=t("induction.repeat", lang)
    ) in messages(at)
    at.switch_page("pages/attention.py").run()
    assert_clean(at)
    assert any(want in b for b in badges(at))
    # the page the comparison points to: this model's heads, and the button that repeats a sequence
    assert at.button(key="repeat_sequence").label == t("induction.repeat", lang)


def test_the_page_states_the_language_model_s_loss_schedule_and_sizes(tiny_lm):
    at = open_app(page="pages/training.py")
    at.radio(key="train_task").set_value("lm").run()
    assert_clean(at)
    # choosing it proposes the budget its heads need; leaving it gives the usual one back
    assert (at.slider(key="train_steps").value, at.slider(key="train_minutes").value) == tj.LM_BUDGET
    latex = " ".join(m.value for m in at.latex)
    assert r"\log p_\theta(x_{t+1} \mid x_{\le t})" in latex
    assert r"\varepsilon" not in latex and "d_{model}^{-0.5}" not in latex  # no smoothing, no noam
    assert r"\cos \pi s" in latex
    assert [h.value for h in at.header][:2] == [t("training.loss.header.lm"), t("training.lr.header")]
    assert any(
        c.value.startswith(
            t(
                "training.sizes.lm",
                d_model=16,
                h=2,
                n=1,
                d_ff=32,
                positions=t("sidebar.positions.rope"),
                context=32,
                merges=20,
                seed=0,
                steps=tj.LM_BUDGET[0],
                minutes=tj.LM_BUDGET[1],
                limit=tj.MAX_CONCURRENT_TRAININGS,
            )
        )
        for c in at.caption
    )
    (schedule,) = [
        s for s in plotly_specs(at) if any(tr.get("name") == t("training.fig.lr_planned") for tr in s["data"])
    ]
    y = schedule["data"][0]["y"]
    assert max(y) == pytest.approx(TINY_LM.lr)
    at.radio(key="train_task").set_value("copy").run()
    assert (at.slider(key="train_steps").value, at.slider(key="train_minutes").value) == (400, 2)


def test_without_the_fortune_files_the_page_says_which_package_to_install(monkeypatch):
    import core.training.text

    def missing():
        raise core.training.text.MissingCorpus(
            "/usr/share/games/fortunes/fortunes is missing: install the Debian "
            "package fortunes (apt-get install fortunes fortunes-zh)"
        )

    monkeypatch.setattr(tj, "LM_LIVE", TINY_LM)
    monkeypatch.setattr(core.training.text, "corpus", missing)
    at = open_app(page="pages/training.py")
    at.radio(key="train_task").set_value("lm").run()
    at.button(key="train_start").click().run()
    at.session_state["train_job"].wait(timeout=30)
    at.run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(t("training.lm.missing", error=""))
    assert "apt-get install fortunes fortunes-zh" in errors[0] and "Traceback" not in errors[0]
    assert not re.search(r"MissingCorpus|FileNotFoundError", errors[0])
