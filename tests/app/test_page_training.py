"""The Training page: a tiny real run in the background, then its model on every page of the session."""

from apphelpers import PAGE_SCRIPTS, assert_clean, badges, messages, open_app, plotly_specs


def train_tiny(at):
    at.radio(key="train_task").set_value("reverse")
    at.slider(key="train_steps").set_value(50)
    at.selectbox(key="d_model").set_value(16).run()
    at.button(key="train_start").click().run()
    assert_clean(at)
    job = at.session_state["train_job"]
    job.wait(timeout=120)
    at.run()
    assert_clean(at)
    return job


def test_a_tiny_run_shows_curves_and_results():
    at = open_app(page="pages/training.py")
    assert any("No training in this session yet" in m for m in messages(at))
    job = train_tiny(at)
    assert job.result is not None and job.result.metrics["steps"] == 50
    curves = [s for s in plotly_specs(at) if any(t.get("name") == "loss" for t in s["data"])]
    assert curves, "the loss curve is drawn"
    loss = next(t for t in curves[0]["data"] if t["name"] == "loss")
    assert loss["x"][-1] == 50 and len(loss["y"]) == len(job.history)
    assert any(s.value.startswith("Training finished after 50 steps") for s in at.success)


def test_use_this_model_puts_it_on_every_page_of_this_session_only():
    at = open_app(page="pages/training.py")
    train_tiny(at)
    at.button(key="train_use").click().run()
    assert_clean(at)
    assert at.radio(key="weights").value == "session"
    # side by side: the session's model and a random one of the same sizes, on the same digits
    titles = [(s, s["layout"].get("title", {}).get("text", "")) for s in plotly_specs(at)]
    compare = [s for s, title in titles if "weights: last decoder layer" in title]
    assert [s["layout"]["title"]["text"].split()[0] for s in compare] == ["trained", "random"]
    for spec in compare:
        assert "3" in spec["layout"]["xaxis"]["ticktext"]
    for page in PAGE_SCRIPTS:
        at.switch_page(page).run()
        assert_clean(at)
        assert any("trained in this session on the 'reverse' task" in b for b in badges(at)), page
    # the session's model reads digits: 1 2 3 are tokens, a letter is [UNK]
    at.sidebar.text_area(key="sentence").set_value("1 2 3 x").run()
    at.switch_page("pages/attention.py").run()
    assert_clean(at)
    ticks = [t for s in plotly_specs(at) for ax in ("xaxis", "yaxis")
             for t in (s["layout"].get(ax, {}).get("ticktext") or [])]
    assert "1" in ticks and "[UNK]" in ticks
    # another browser session keeps its own weights
    other = open_app()
    assert other.radio(key="weights").value != "session"
    assert not any("session" in b for b in badges(other))


def test_the_url_cannot_ask_for_a_session_model_that_does_not_exist():
    at = open_app({"weights": "session"})
    assert_clean(at)
    assert at.radio(key="weights").value in ("random", "trained")
    assert any(m.startswith("Ignored weights=`session`") for m in messages(at))
