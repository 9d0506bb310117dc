"""Every page but Attention and Training with the small GPT on screen (weights=gpt), in both languages:
a trained decoder-only language model (task "lm"), never a model folder or random weights. Its numbers
are read from the checkpoint or computed here on the loaded model, never written down: assets/gpt.pt
may be retrained with other sizes (issue 30).
"""

import apphelpers
import pytest
import torch
from apphelpers import assert_clean, badges, messages
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.tracing.generate import greedy
from core.tracing.pipeline import GPT_PATH, PipelineSettings, gpt_pipeline, read_gpt
from core.tracing.run import SentenceRun
from figures.model import decoded_ids, labels_text
from figures.positional import MAX_TABLE_ROWS
from i18n import t

pytestmark = pytest.mark.skipif(not GPT_PATH.is_file(), reason="no small GPT at assets/gpt.pt")

SENTENCE = "To be, or not to be. 床前明月光"
LANGS = ("en", "zh")
ONE_STACK = ["overview", "tokens", "embeddings", "positional", "decoder", "masks", "residual", "ffn",
             "output", "greedy", "ablation"]  # fmt: skip


@pytest.fixture(scope="module")
def gpt():
    """(model, tokenizer, metrics) as the app loads them, and the pipeline around them (read once)."""
    torch.set_num_threads(1)
    model, tokenizer, metrics = read_gpt(GPT_PATH)
    return model, tokenizer, metrics, gpt_pipeline(PipelineSettings(weights="gpt"), model, tokenizer, metrics)


def open_page(page: str, lang: str, **query: str) -> AppTest:
    at = apphelpers.open_page(page, {"lang": lang, "sentence": SENTENCE, **query}, weights="gpt")
    assert_clean(at)
    assert at.radio(key="weights").value == "gpt"
    return at


def texts(at: AppTest) -> list[str]:
    return [
        *messages(at),
        *(c.value for c in at.caption),
        *(m.value for m in at.markdown),
        *(h.value for h in at.header),
        *(h.value for h in at.subheader),
    ]


def codes(at: AppTest) -> list[str]:
    return [c.value for c in at.code]


def assert_badge(at: AppTest, lang: str, gpt) -> None:
    """The badge names the small GPT ("short badge; details"): its short part, in ``lang``."""
    _, _, metrics, pipe = gpt
    c = pipe.config
    label = t(
        "weights.label.gpt",
        lang,
        layers=c.num_layers,
        heads=c.num_heads,
        d_model=c.d_model,
        ppl=f"{metrics['test']['perplexity']:.1f}",
        merges=f"{metrics['merges']:,}",
    )
    short = label.replace("；", ";").split(";")[0]
    assert any(short in b for b in badges(at)), badges(at)


def never_random_or_folder(said: list[str], lang: str) -> None:
    """No sentence of random weights or of a model folder (whose training nobody knows)."""
    for key in (
        "embeddings.rows.random",
        "embeddings.rows.folder",
        "embeddings.similarity.folder",
        "positional.curves.random",
        "positional.curves.folder",
        "positional.schemes.example",
        "tokenization.model.folder",
    ):
        lead = t(key, lang).replace("：", ":").split(":")[0][:20]
        assert not any(lead in s for s in said), key


# -- Overview --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_overview_shows_one_causal_stack_with_its_positions(gpt, lang):
    at = open_page("streamlit_app.py", lang)
    assert_badge(at, lang, gpt)
    said = texts(at)
    positions = t(f"overview.explain.positions.{gpt[0].config.positions}", lang)
    assert t("overview.explain.stack", lang, positions=positions) in said
    never_random_or_folder(said, lang)


# -- Tokenization ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_tokenization_shows_the_gpts_own_pieces_first(gpt, lang):
    _, tokenizer, metrics, pipe = gpt
    at = open_page("pages/tokenization.py", lang)
    assert_badge(at, lang, gpt)
    # its own section opens the page, before the BPE this page learns
    assert at.subheader[0].value == t("tokenization.model.folder_title", lang, name=pipe.name)
    ids = tokenizer.encode(SENTENCE, allow_special=False)
    assert " ".join(map(str, ids)) in codes(at)
    said = texts(at)
    what = t("tokenization.model.lm", lang, merges=f"{metrics['merges']:,}")
    assert t("tokenization.model.caption", lang, what=what, n=len(ids)) in said
    assert t("tokenization.model.lm_note", lang) in said
    for key in ("tokenization.model.trained_task", "tokenization.model.random"):
        other = t("tokenization.model.caption", lang, what=t(key, lang, task="lm"), n=len(ids))
        assert other not in said, key


# -- Embeddings ------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_embeddings_say_trained_here_as_a_language_model(gpt, lang):
    model, *_ = gpt
    at = open_page("pages/embeddings.py", lang)
    assert_badge(at, lang, gpt)
    said = texts(at)
    assert t("embeddings.rows.lm", lang) in said
    assert t("embeddings.similarity.lm", lang) in said
    positions = model.config.positions  # no × √d_model: a learned row added, or positions inside attention
    caption = f"embeddings.caption.unscaled.{'learned' if positions == 'learned' else 'in_attention'}"
    scheme = {"rope": "RoPE", "alibi": "ALiBi"}.get(positions, "")
    assert t(caption, lang, model=gpt[3].name, rows=f"{model.config.max_len:,}", scheme=scheme) in said
    for key in ("embeddings.rows.trained_task", "embeddings.similarity.trained_task"):
        assert t(key, lang, task="lm") not in said, key
    never_random_or_folder(said, lang)


# -- Positional ------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_positional_trained_length_is_the_training_window(gpt, lang):
    model, _, metrics, _ = gpt
    context, rows, c = metrics["context"], model.config.max_len, model.config
    at = open_page("pages/positional.py", lang, pe_tab=c.positions)
    assert_badge(at, lang, gpt)
    said = texts(at)
    scheme = t(f"positional.tab.{c.positions}", lang)
    assert (
        t("positional.curves.trained_lm", lang, n=context, last=context - 1)
        + t("positional.curves.lm_own", lang, scheme=scheme)
    ) in said
    assert t("positional.schemes.sizes.lm", lang, d=c.d_model, h=c.num_heads, d_k=c.d_k, L=context) in said
    step = -(-rows // MAX_TABLE_ROWS)  # every step-th row drawn, as the page says
    reach = t("positional.learned.reach.lm", lang, rows=rows, d=c.d_model, step=step, n=context,
              last=context - 1)
    assert (reach in said) == (c.positions == "learned")  # its own table, only when it has one
    assert t("positional.learned.relative.minilm", lang).strip() not in " ".join(said)
    never_random_or_folder(said, lang)
    # the curves shade positions 0 … context - 1 as seen in training, not the pinyin phrases' length
    seen = t("positional.fig.seen_in_training", lang, last=context - 1)
    shaded = [a["text"] for s in specs(at) for a in s["layout"].get("annotations", [])]
    # the sinusoids' curves, and the learned table's "beyond" when the model has a table
    assert shaded.count(seen) >= (2 if c.positions == "learned" else 1), shaded


# -- Masks -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_masks_show_the_one_causal_stack(gpt, lang):
    pipe = gpt[3]
    at = open_page("pages/masks.py", lang)
    assert_badge(at, lang, gpt)
    assert at.radio(key="mask_kind").options == [t("masks.kind.decoder", lang)]
    assert t("masks.one_stack.batch", lang, model=pipe.name) in texts(at)


# -- Full model ------------------------------------------------------------------------------------


def next_token_by_hand(model, ids: list[int]) -> tuple[int, float]:
    """The most probable token after the first one, and its probability: the model itself, at T = 1."""
    with torch.no_grad():
        logits = model(torch.tensor([ids]))  # (1, L, V)
    probs = torch.softmax(logits[0, 0].double(), dim=-1)
    best = int(probs.argmax())
    return best, float(probs[best])


@pytest.mark.parametrize("lang", LANGS)
def test_model_page_next_token_table_is_the_models_own(gpt, lang):
    model, tokenizer, _, pipe = gpt
    at = open_page("pages/model.py", lang, model_view="output")
    assert_badge(at, lang, gpt)
    ids = tokenizer.encode(SENTENCE, allow_special=False)
    best, p = next_token_by_hand(model, ids)
    table = at.dataframe[0].value
    assert len(table) == len(ids)
    row = table.iloc[0]
    assert row.iloc[2] == pipe.tgt_labels[best]
    assert row.iloc[3] == pytest.approx(p, rel=1e-4)
    said = texts(at)
    assert t("model.decoder_only", lang, model=pipe.name, norm=model.config.norm, kind="LayerNorm") in said


@pytest.mark.parametrize("lang", LANGS)
def test_generation_at_temperature_zero_is_greedy(gpt, lang):
    model, tokenizer, _, pipe = gpt
    new = 8
    at = open_page("pages/model.py", lang, model_view="decoding", gen_temperature="0.0", gen_tokens=str(new))
    ids = tokenizer.encode(SENTENCE, allow_special=False)
    result = greedy(model, torch.tensor([ids]), new, eos_id=pipe.eos_id)
    written = [pipe.tgt_labels[i] for i in decoded_ids(result)[len(ids) :]]
    assert written and " ".join(written) in codes(at)
    stopped = decoded_ids(result)[-1] == pipe.eos_id  # it stops at [EOS]
    text = tokenizer.decode(decoded_ids(result)[len(ids) : len(decoded_ids(result)) - stopped])
    assert (text or t("model.gen.no_text", lang)) in codes(at)  # what it wrote, as text
    key = "model.gen.output_eos" if stopped else "model.gen.output"
    assert t(key, lang, n=len(written), how=t("model.gen.greedy", lang)) in texts(at)


@pytest.mark.parametrize("lang", LANGS)
def test_generation_with_temperature_shows_what_the_model_writes(gpt, lang):
    at = open_page("pages/model.py", lang, model_view="decoding", gen_temperature="1.0", gen_seed="3")
    how = t("model.gen.sampled", lang, seed=3)
    assert any(how in s for s in texts(at)), texts(at)
    table = at.dataframe[0].value  # one row per written token, each drawn from the whole vocabulary
    assert len(table) >= 1 and set(table.iloc[:, 3]) == {len(gpt[3].tgt_labels)}


def test_labels_read_back_as_the_text_they_spell(gpt):
    """The generation's text is read from labels (figures.model.labels_text): for the GPT's own tokens
    of a sentence with characters split across tokens, exactly the sentence."""
    _, tokenizer, _, pipe = gpt
    text = SENTENCE + "\n\t🙂 ok"
    ids = tokenizer.encode(text, allow_special=False)
    assert any(pipe.tgt_labels[i].startswith("⟨") for i in ids)  # a character split across tokens
    assert labels_text([pipe.tgt_labels[i] for i in ids]) == text == tokenizer.decode(ids)


# -- Lecture, quiz and exercises -------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "steps"), [("en", range(1, len(ONE_STACK) + 1)), ("zh", (1, 4, 10))])
def test_lecture_goes_through_the_one_stack(gpt, lang, steps):
    pipe = gpt[3]
    for step in steps:
        name = ONE_STACK[step - 1]
        at = open_page("pages/lecture.py", lang, step=str(step))
        title = t(f"lecture.{name}.title", lang)
        assert at.header[0].value == t("lecture.heading", lang, step=step, total=len(ONE_STACK), title=title)
        said = texts(at)
        assert t("lecture.skipped_decoder", lang, model=pipe.name, n=2) in said
        if name == "positional" and pipe.config.positions == "learned":  # trained: not the folder's text
            assert any(t("lecture.positional.text_learned", lang) in s for s in said)
            folder = t("lecture.positional.text_learned_folder", lang, rows=pipe.config.max_len)
            assert not any(folder in s for s in said)
        elif name == "positional":  # RoPE: the model's own pairs and base
            pairs = t(f"lecture.positional.pairs_{pipe.config.rope_pairing}", lang)
            own = t("lecture.positional.text_rope_one_stack", lang, pairs=pairs,
                    theta=f"{pipe.config.rope_theta:g}")
            assert any(own in s for s in said), said


def test_quiz_and_exercises_ask_only_of_the_one_stack(gpt):
    from core.teaching.exercises import exercises_for
    from core.teaching.questions import questions_for

    run = SentenceRun(gpt[3], SENTENCE)
    questions = questions_for(run, 0)
    assert {q.kind for q in questions} >= {"self_attention", "next_token"}
    assert {q.params.get("attn_kind") for q in questions if q.kind == "self_attention"} == {"decoder"}
    sources = [(e.params.get("source") or {}).get("attn_kind") for e in exercises_for(run, 0)]
    assert "encoder" not in sources and "cross" not in sources


# -- a tampered link -------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_without_the_file_weights_gpt_falls_back_with_a_message(monkeypatch, tmp_path, lang):
    monkeypatch.setattr("ui.page.settings.GPT_PATH", tmp_path / "missing.pt")
    at = apphelpers.open_page("pages/embeddings.py", {"lang": lang, "sentence": SENTENCE}, weights="gpt")
    assert_clean(at)
    why = t("settings.why.no_gpt", lang)
    assert any(why in m and "weights" in m for m in messages(at)), messages(at)
    assert at.radio(key="weights").value != "gpt"
    assert t("sidebar.weights.gpt", lang) not in at.radio(key="weights").options
