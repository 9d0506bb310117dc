"""The Tokenization page's sections: BPE learned merge by merge (classic ``</w>`` and GPT-2
byte-level), ids, special tokens, and WordPiece (all-MiniLM-L6-v2's tokenizer) beside byte-level BPE.

WordPiece: with weights=minilm the model reads WordPiece, so that section comes first; with other
weights it is a comparison in an expander, when the optional package is installed (its vocab.txt
is read once, cached). "Ours" is the byte-level BPE of the random-weights model (1,000 merges).
A model that reads a tokenizer of its own (a model folder's, or the byte-level BPE a language model
learned on its training text: the small GPT) gets its pieces and ids first, before this page's BPE.

Training: one shared tokenizer per text, merges and kind (``ui.caches.cache.trained_bpe``). The bytes of a
text do not bound the work of training on it (it grows with merges × the length of each word), so each
training is planned within ``WORK_BUDGET`` first (``ui.caches.cache.plan_bpe``): past it, long words are cut
and if need be only the beginning of the text is learned from, and the page says so before training.
"""

from dataclasses import dataclass

import streamlit as st

import ui
from core.names import Weights
from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.wordpiece import SPECIALS
from figures import tokenization as ft
from ui.caches.cache import model_bpe, plan_bpe, trained_bpe, wordpiece_tokenizer
from ui.page.settings import literal
from ui.sections import tokenization_tables as ut

# Units of core.tokenizers.bpe.training_work one training may cost (calibrated with
# benchmarks/bpe_upload.py): the page trains both kinds, and an upload must not keep a page view
# waiting more than a few seconds.
WORK_BUDGET = 150_000_000


@dataclass(frozen=True)
class Tokenizers:
    """Both kinds learned from the training text: ``tok`` of the chosen kind, ``other`` the other."""

    tok: BPETokenizer
    other: BPETokenizer
    kind: str
    mode: str
    lang: str


def wordpiece_section(sentence: str, lang: str) -> None:
    """WordPiece (all-MiniLM-L6-v2) beside our byte-level BPE, on the sidebar's sentence."""
    wp = wordpiece_tokenizer()
    if wp is None:
        st.info(ui.t("minilm.missing"))
        return
    st.markdown(ui.t("tokenization.wp.intro"))
    if not sentence.strip():
        st.info(ui.t("tokenization.wp.empty"))
        return
    wordpiece_beside_bpe(wp, sentence, lang)
    st.markdown(ui.t("tokenization.wp.how"))
    st.latex(r"j^{\ast} = \max\{\, j > i \;:\; w_{i:j} \in V \,\}")
    st.markdown(ui.t("tokenization.wp.input"))
    st.latex(r"x = \big(\,[\mathrm{CLS}],\ t_1,\ t_2,\ \dots,\ t_n,\ [\mathrm{SEP}]\,\big)")
    st.markdown(ui.t("tokenization.wp.differs"))
    wordpiece_words(wp, sentence, lang)


def wordpiece_beside_bpe(wp, sentence: str, lang: str) -> None:
    bpe = model_bpe()
    wp_ids = wp.encode(sentence)
    wp_tokens = wp.convert_ids_to_tokens(wp_ids)
    bpe_tokens, bpe_ids = bpe.tokenize(sentence), bpe.encode(sentence)
    ut.dataframe(ft.compare_rows(bpe_tokens, wp_tokens, len(bpe.vocab), len(wp), lang=lang), lang)
    left, right = st.columns(2)
    with left:
        st.markdown(ui.t("tokenization.wp.left", n=len(wp_tokens)))
        ui.show_themed_figure(
            ft.wordpiece_figure(wp_tokens, wp_ids, row_units=38, lang=lang),
            key="tok_wp_boxes",
            name="wordpiece-tokens",
        )
        ui.show_tokens(wp_tokens, ui.t("tokenization.wp.tokens", n=len(wp_tokens)))
        ut.show_ids(wp_ids, ui.t("tokenization.wp.ids", n=len(wp_ids)))
    with right:
        st.markdown(ui.t("tokenization.wp.right", n=len(bpe_tokens), merges=len(bpe.merges)))
        labels = ft.box_texts(bpe, bpe_tokens, "text")
        ui.show_themed_figure(
            ft.token_boxes(bpe_tokens, ids=bpe_ids, labels=labels, row_units=38, lang=lang),
            key="tok_wp_bpe",
            name="bpe-tokens",
        )
        ui.show_tokens(labels, ui.t("tokenization.wp.tokens", n=len(bpe_tokens)))
        ut.show_ids(bpe_ids, ui.t("tokenization.wp.ids", n=len(bpe_ids)))


def wordpiece_words(wp, sentence: str, lang: str) -> None:
    """Each word's pieces, and the greedy longest-match of one word, step by step."""
    st.markdown(ui.t("tokenization.wp.words.title"))
    rows = ft.wordpiece_word_rows(wp, sentence)
    ut.dataframe(rows, lang, height=min(38 + 35 * len(rows), 280))
    words = list(dict.fromkeys(r["word"] for r in rows if r["word"] not in SPECIALS))
    if not words:
        return
    if st.session_state.get("tok_wp_word") not in words:  # a new sentence: the word cut into the most pieces
        st.session_state["tok_wp_word"] = max(words, key=lambda w: (len(wp.word_pieces(w)), len(w)))
    word = st.selectbox(ui.t("tokenization.wp.word"), words, key="tok_wp_word")
    steps = ft.greedy_steps(wp, word)
    pieces = literal(" ".join(wp.word_pieces(word)))
    st.caption(ui.t("tokenization.wp.greedy", word=literal(word), pieces=pieces))
    ut.dataframe(steps, lang, height=min(38 + 35 * len(steps), 280))


def train(text: str, choice: ut.Choice, lang: str) -> Tokenizers:
    """Both kinds learned from ``text`` within the work budget; what the plans limited is said first."""
    other_kind = "classic" if choice.kind == "byte" else "byte"
    works = {k: plan_bpe(text, choice.merges, k, WORK_BUDGET) for k in (choice.kind, other_kind)}
    limits = ut.limits_text(text, works)
    if limits:  # said before the training starts
        st.warning(limits, icon=":material/speed:")
    tok = trained_bpe(text, choice.merges, choice.kind, works[choice.kind])
    other = trained_bpe(text, choice.merges, other_kind, works[other_kind])
    n = len(tok.merges)
    learned = text[: works[choice.kind].chars]
    size = len(learned.encode("utf-8", "surrogatepass"))
    st.caption(
        ui.t(
            "tokenization.vocab.byte" if tok.byte_level else "tokenization.vocab.classic",
            chars=f"{len(learned):,}",
            kb=f"{size / 1000:,.1f}",
            n=n,
            vocab=len(tok.vocab),
            base=len(tok.vocab) - 5 - n,
        )
    )
    if n < choice.merges:
        st.info(ui.t("tokenization.ran_out", n=n, asked=choice.merges))
    if choice.source == "corpus" and choice.kind == "byte" and choice.merges == ut.MAX_MERGES:
        st.caption(ui.t("tokenization.same_as_model"))
    return Tokenizers(tok, other, choice.kind, choice.mode, lang)


def film_section(tokenizers: Tokenizers, sentence: str) -> None:
    """The film: the sentence re-segmented after each merge, with a play button."""
    tok = tokenizers.tok
    st.subheader(ui.t("tokenization.film.title"))
    if not sentence.strip():
        st.info(ui.t("tokenization.empty"))
    explain, formula = st.columns([3, 2])
    with explain:
        st.markdown(ui.t("tokenization.film.explain"))
    with formula:  # two short lines: one long one is cut off in this column at 1280×720
        st.latex(r"(a,\, b) = \arg\max_{(x,\, y)}\ \mathrm{count}(x\;y)")
        st.latex(r"a\;b \;\to\; ab")
        st.latex(r"|V| = 5 + 256 + k" if tok.byte_level else r"|V| = 5 + |\Sigma| + 1 + k")
        st.caption(ui.t(f"tokenization.film.formula_{'byte' if tok.byte_level else 'classic'}"))
    if not sentence.strip():
        return
    text, cut = ft.film_text(sentence, tok.byte_level)
    if not text.strip():  # a single huge "word": cut inside it
        text, cut = sentence[: ft.MAX_BOXES // 4], True
    if cut:
        st.caption(ui.t("tokenization.film.cut", n=len(text), boxes=ft.MAX_BOXES))
    ut.play_film(tok, text, tokenizers.mode, tokenizers.lang)


def textbook_section(source: str, lang: str) -> None:
    with st.expander(ui.t("tokenization.textbook.title"), expanded=(source == "textbook")):
        golden = trained_bpe(ft.TEXTBOOK_CORPUS, 10, "classic")
        counts = ", ".join(f"*{w}* × {c}" for w, c in ft.TEXTBOOK_COUNTS)
        st.markdown(ui.t("tokenization.textbook.explain", counts=counts))
        ut.dataframe(ft.merge_rows(golden), lang, height=250)
        st.code("lowest → " + " ".join(golden.tokenize("lowest")), language=None)


def merges_section(tokenizers: Tokenizers) -> None:
    st.subheader(ui.t("tokenization.merges.title"))
    st.caption(ui.t("tokenization.merges.caption", kind=ui.t(f"tokenization.kind_name.{tokenizers.kind}")))
    ut.dataframe(ft.merge_rows(tokenizers.tok), tokenizers.lang, height=280)


def versus_section(tokenizers: Tokenizers, sentence: str) -> None:
    """Classic beside byte-level on the sentence, then the sentence's UTF-8 bytes."""
    lang = tokenizers.lang
    st.subheader(ui.t("tokenization.versus.title"))
    if sentence.strip():
        columns = st.columns(2)
        both = sorted((tokenizers.tok, tokenizers.other), key=lambda x: x.byte_level)
        for col, tk in zip(columns, both, strict=True):
            with col:
                tokens = tk.tokenize(sentence)
                unknown = sum(1 for x in tokens if x == "[UNK]")
                st.markdown(
                    ui.t(
                        "tokenization.versus.byte" if tk.byte_level else "tokenization.versus.classic",
                        n=len(tokens),
                        unknown=unknown,
                        vocab=len(tk.vocab),
                    )
                )
                ui.show_themed_figure(
                    ft.encoded_figure(tk, sentence, row_units=38, mode=tokenizers.mode, lang=lang),
                    key=f"tok_side_{int(tk.byte_level)}",
                    name="bpe-byte-level" if tk.byte_level else "bpe-classic",
                )
        st.markdown(ui.t("tokenization.versus.explain"))
    rows = ft.byte_rows(sentence) if sentence.strip() else []
    example = not rows
    if example:
        rows = ft.byte_rows("中文é😀")
    st.markdown(ui.t("tokenization.bytes.example" if example else "tokenization.bytes.yours"))
    st.latex(r"\text{UTF-8}:\quad \text{中} = \text{U+4E2D} \;\to\; \texttt{E4}\ \texttt{B8}\ \texttt{AD}")
    ut.dataframe(
        [{k: v for k, v in r.items() if k != "bytes"} for r in rows],
        lang,
        height=min(38 + 35 * len(rows), 300),
    )


def ids_section(tokenizers: Tokenizers, sentence: str) -> None:
    """Ids and special tokens: the table of specials, the sentence between [BOS] and [EOS]."""
    tok, lang = tokenizers.tok, tokenizers.lang
    st.subheader(ui.t("tokenization.ids.title"))
    st.markdown(ui.t("tokenization.ids.explain"))
    st.latex(
        r"x_i = \mathrm{id}(t_i) \in \{0, 1, \dots, |V| - 1\}, \qquad "
        r"e_i = E[\,x_i\,] \in \mathbb{R}^{d_{\text{model}}}"
    )
    sp_left, sp_right = st.columns([1, 3])
    with sp_left:
        ut.dataframe(ft.special_rows(tok), lang)
    with sp_right:
        if not sentence.strip():
            st.info(ui.t("tokenization.ids.empty"))
            return
        wrapped = "[BOS]" + sentence + "[EOS]"
        title = ui.t("tokenization.ids.figure", kind=ui.t(f"tokenization.kind_name.{tokenizers.kind}"))
        ui.show_themed_figure(
            ft.encoded_figure(tok, wrapped, title=title, row_units=60, mode=tokenizers.mode, lang=lang),
            key="tok_special",
            name="bpe-special-tokens",
        )
        ids = tok.encode(wrapped)
        ut.show_ids(ids, ui.t("tokenization.ids.encode", n=len(ids)))
        plain = tok.tokenize("[BOS]", allow_special=False)
        ui.show_tokens(plain, ui.t("tokenization.ids.plain", n=len(plain)))
        if tok.byte_level:
            back = tok.decode(ids)
            st.caption(ui.t(f"tokenization.ids.roundtrip_{'yes' if back == wrapped else 'no'}"))


def own_tokenizer(pipe) -> bool:
    """The model reads pieces of a tokenizer of its own (a model folder's, or the byte-level BPE a
    language model learned on its training text), not this page's: its section comes first."""
    return pipe is not None and bool(pipe.tokenizer_kind) and pipe.weights != Weights.MINILM


def model_section(pipe, sentence: str, lang: str) -> None:
    """What the model on the other pages reads (MiniLM's WordPiece is the section at the top; a model's
    own tokenizer is too, drawn by this function)."""
    if pipe is None or not sentence.strip() or pipe.weights == Weights.MINILM:
        return
    folder, own = pipe.weights == Weights.HF, own_tokenizer(pipe)
    name = pipe.name.removeprefix("hf:")
    # a model with a name of its own: "What Glassbox GPT reads: its own tokenizer"
    titled = own and name
    st.subheader(ui.t("tokenization.model.folder_title" if titled else "tokenization.model.title", name=name))
    labels, model_ids = pipe.src_encode(sentence)
    if folder:
        what = ui.t("tokenization.model.folder", kind=pipe.tokenizer_kind)
    elif pipe.task == "lm":  # a language model trained here: the BPE it learned on its own text
        what = ui.t("tokenization.model.lm", merges=f"{pipe.metrics.get('merges', 0):,}")
    elif pipe.task == "pinyin":
        what = ui.t("tokenization.model.trained")
    elif pipe.task:
        what = ui.t("tokenization.model.trained_task", task=pipe.task)
    else:
        what = ui.t("tokenization.model.random")
    st.caption(ui.t("tokenization.model.caption", what=what, n=len(labels)))
    ui.show_themed_figure(
        ft.token_boxes(labels, ids=model_ids, title=ui.t("tokenization.model.figure"), lang=lang),
        key="tok_model",
        name="model-input-tokens",
    )
    if own:
        ut.show_ids(model_ids, ui.t("tokenization.wp.ids", n=len(model_ids)))
        st.caption(ui.t("tokenization.model.folder_note" if folder else "tokenization.model.lm_note"))
