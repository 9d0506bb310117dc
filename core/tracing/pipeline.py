"""From text to a trace: tokenizer + model + settings, the one path the app (and a notebook) uses.

    from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=64))
    run = run_pipeline(pipe, "注意力就是一切 Attention is all you need", target="")
    run.src_tokens, run.trace.encoder[0].self_attn.weights

Weights (``core.names.Weights``): "trained" (the 汉字→拼音 checkpoint, assets/pinyin.pt), "random" (the
chosen sizes over a byte-level BPE of the shipped corpus: any text has tokens, the attention is noise),
"session" (trained in the app, ``pipeline_from_model``), "gpt" (the small GPT, assets/gpt.pt, a decoder
only), "minilm" (all-MiniLM-L6-v2, an encoder only reading WordPiece tokens, an optional extra), and
"hf" (a model folder, ``folder_pipeline``). Missing or unreadable weights fall back to random ones and
``Pipeline.warning`` says why. ``load_pipeline`` reads the weights on every call: the app keeps
pipelines in ``ui.caches.cache``, under its byte budget.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from core.model.config import ModelConfig
from core.model.trace import DecodeResult, ModelTrace, SourceTrace
from core.model.transformer import Transformer
from core.names import Weights
from core.tokenizers.bpe import BPETokenizer, token_bytes
from core.tokenizers.vocab import BOS, BOS_ID, EOS, EOS_ID, SPECIAL_TOKENS, UNK, UNK_ID, Vocab
from core.training.checkpoint import CheckpointError, load_checkpoint
from core.training.pairs import encode_source

ROOT = Path(__file__).resolve().parents[2]
CORPUS_PATH = ROOT / "assets" / "corpus" / "en_zh.txt"
CHECKPOINT_PATH = ROOT / "assets" / "pinyin.pt"
GPT_PATH = ROOT / "assets" / "gpt.pt"
GPT_NAME = "Glassbox GPT"
# Greedy decoding keeps the trace of every step (each shows the cross-attention so far). They are views
# of one run's trace, but a copied decode (pickled, deep-copied) holds each step's own copy, and a model
# whose guessed tokens miss runs the decoder once per token: at 512 source tokens an uncapped decode
# of a model that never writes [EOS] would take seconds and, copied, gigabytes.
MAX_DECODE_STEPS = 64
RANDOM_VOCAB_MERGES = 1000  # enough for common English words and Chinese characters to be one token
MINILM_NAME = "all-MiniLM-L6-v2"
NEW_TOKENS = 16  # a decoder-only model writes this many tokens after the sentence, by default


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """What the sidebar chooses; frozen and hashable so the app can cache a pipeline by it."""

    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 256
    seed: int = 0
    norm: str = "post"
    weights: Weights = Weights.TRAINED
    # random weights: how positions reach attention (core.model.config.POSITIONS)
    positions: str = "sinusoidal"
    tag: str = ""  # "session" weights (a model trained in the app): which ones; part of cache keys
    model: str = ""  # "hf" weights (a model folder, core/loading): the model's name ("hf:gpt2"); a cache key
    # parts switched off (core/interventions: the URL's ablate=, canonical ids) and how ("zero" | "mean");
    # "" : the model as it is. A pipeline with them is made from the intact one (``ablated``)
    ablate: str = ""
    ablate_mode: str = "zero"

    def __post_init__(self) -> None:
        if self.weights not in tuple(Weights):
            raise ValueError(f"weights={self.weights!r} must be one of {tuple(map(str, Weights))}")
        object.__setattr__(self, "weights", Weights(self.weights))


@dataclass
class Pipeline:
    settings: PipelineSettings
    model: Transformer
    weights: Weights  # what is really on screen (after any fallback: the settings may ask for other)
    label: str  # one line for the badge every page shows
    src_encode: Callable[[str], tuple[list[str], list[int]]]  # text -> (display tokens, ids)
    tgt_encode: Callable[[str], tuple[list[str], list[int]]]
    tgt_labels: list[str]  # display label of every target id
    src_labels: list[str]
    warning: str | None = None  # set when the trained checkpoint could not be used
    metrics: dict = field(default_factory=dict)
    task: str = ""  # what the weights learned ("pinyin", "copy", "reverse"); "" for random and MiniLM
    merges: int = 0  # random weights: merges of the byte-level BPE vocabulary
    problem: str = ""  # why the checkpoint could not be used (``warning`` without its English preamble)
    name: str = ""  # the model's own name where it has one ("all-MiniLM-L6-v2", "hf:gpt2")
    family: str = ""  # a model folder's family (loading.folder.FAMILIES: "gpt2", "bert", "llama", "qwen2")
    architecture: str = ""  # a model folder's architecture, as its config.json names it
    tokenizer_kind: str = ""  # a model folder's tokenizer, one line ("byte-level BPE (vocab.json + ...)")
    eos_id: int | None = None  # a decoder-only model's end-of-text token: generation stops there
    # with_norm's pipelines sharing these weights, by norm: they live exactly as long as this one
    twins: dict = field(default_factory=dict, repr=False, compare=False)
    # a pipeline with parts switched off (core/interventions/runs.py: ablated): the intact one it is made from
    intact: Pipeline | None = field(default=None, repr=False, compare=False)

    @property
    def config(self) -> ModelConfig:
        return self.model.config

    @property
    def src_embedding(self):
        """The ``Embedding`` (lookup, scaling, positions) of the first stack's input: all that
        ``source_trace`` needs. A decoder-only model's input is its target side."""
        model = self.model
        return model.src_embed if model.src_embed is not None else model.tgt_embed

    @property
    def encoder_model(self) -> Transformer:
        """A model whose source side is there (``encoder_trace`` reads no more): here, the model."""
        return self.model

    def first_layers_model(self, n: int) -> Transformer:
        """The model's first ``n`` layers on each side (``Transformer.first_layers``: what it computes
        exactly is said there)."""
        return self.model.first_layers(n)

    def release(self) -> None:
        """The app's cache dropped this pipeline. Loaded weights cannot be made again: kept while
        anything holds the pipeline (``RandomPipeline`` lets its drawn weights go)."""

    @property
    def drawn(self) -> bool:
        """Whether the weights exist yet: loaded weights are whole from the start."""
        return True


class RandomPipeline(Pipeline):
    """A pipeline of random weights drawn on first use of ``model``, not when it is made.

    Its label, weights, tokenizers and ``config`` need no weights: the sidebar (on every page) and the
    Tokenization page use only those, so a new seed or size there never waits for every weight to be
    drawn (46M numbers at d_model 512, 6 layers).
    Made with the model's ``ModelConfig`` where a Pipeline takes the model. One model, made undrawn
    (``Transformer.undrawn``): ``src_embedding``, ``encoder_model`` and ``first_layers_model`` draw the
    parts they read, ``model`` whatever is left, each number once and the same as ``Transformer(config)``
    gives it; under this pipeline's own lock (the cached pipeline is shared by every session's
    thread; sessions building other models do not wait for it).
    """

    @property
    def model(self) -> Transformer:
        built = self.__dict__["_built"]
        if built is None:
            built = self._drawn(lambda m: [m], whole=True)
        return built

    @property
    def encoder_model(self) -> Transformer:
        """The model with (at least) its source side drawn: enough for ``encoder_trace``. Before the
        whole model is, ~40 % of the numbers; a later ``model`` draws the rest into the same tensors."""
        built = self.__dict__["_built"]
        return built if built is not None else self._drawn(lambda m: [m.src_embed, m.encoder])

    @property
    def src_embedding(self):
        """The model's source embedding, drawn alone if nothing else is yet (the same numbers): a table,
        not the whole model."""
        built = self.__dict__["_built"]
        return (built if built is not None else self._drawn(lambda m: [m.src_embed])).src_embed

    def first_layers_model(self, n: int) -> Transformer:
        """``model.first_layers(n)``, drawing only those layers (and the embeddings, final norms and
        output layer) if the whole model is not drawn yet: ~20 % of the numbers for n=1 at
        d_model=512, 6 layers."""
        built = self.__dict__["_built"]
        model = built if built is not None else self._drawn(lambda m: [m.first_layers(n)])
        return model.first_layers(n)

    def _drawn(self, parts, whole: bool = False) -> Transformer:
        """The one model of this pipeline, made undrawn on first use, with the modules ``parts(model)``
        lists drawn; under this pipeline's lock (the cached pipeline is shared by every session).
        ``whole``: all of it is drawn, kept as ``model`` (under the lock: ``release`` may run meanwhile)."""
        with self.__dict__["_lock"]:
            model = self.__dict__["_lazy"]
            if model is None:
                model = self.__dict__["_lazy"] = Transformer.undrawn(self.__dict__["_config"])
            model.draw(*parts(model))
            if whole:
                self.__dict__["_built"] = model
            return model

    def release(self) -> None:
        """Let go of the drawn weights and the twins made of them: the app's cache calls this when it
        drops the pipeline. A later use draws them again (the very same numbers), so an old page still
        holding this pipeline keeps working, while the memory is free as soon as no run uses the model:
        pages keep their pipeline in their script's namespace, which only Python's cyclic collector
        frees (a script and the functions it defines refer to each other), and Streamlit's collection
        after every run is off (.streamlit/config.toml). ``core.model.weight_init.SLABS`` hands the memory
        to the
        next model drawn."""
        with self.__dict__["_lock"]:
            self.__dict__.update(_built=None, _lazy=None)
            twins, self.twins = list(self.twins.values()), {}
        for twin in twins:
            if isinstance(twin, Pipeline):  # (the others are encoder-side Transformers)
                twin.release()

    @model.setter
    def model(self, value: Transformer | ModelConfig) -> None:  # a config: drawn later
        config = value if isinstance(value, ModelConfig) else value.config
        self.__dict__.setdefault("_lock", threading.Lock())
        self.__dict__.update(_config=config, _built=None if isinstance(value, ModelConfig) else value,
                             _lazy=None)

    @property
    def config(self) -> ModelConfig:
        return self.__dict__["_config"]

    @property
    def drawn(self) -> bool:
        """Whether the weights exist yet."""
        return self.__dict__["_built"] is not None


@dataclass
class WholeRun:
    """One sentence through the whole model (``run_pipeline``): what a ``core.tracing.run.SentenceRun`` reads
    once a page needs more than the tokens, the encoder's input or the encoder."""

    src_tokens: list[str]  # labels of the encoder's input, one per source position
    tgt_tokens: list[str]  # labels of the decoder's input, starting with [BOS]
    predicted: list[str]  # the most probable next token at each decoder position
    trace: ModelTrace
    truncated: bool  # the sentence had more than max_tokens tokens
    total_tokens: int  # before truncation
    target_given: bool  # False: trained weights decode greedily; random ones get the sentence itself
    decoded: DecodeResult | None  # the greedy decoding step by step (trained weights, no target given)

    @property
    def answer_kind(self) -> str:
        """Where ``answer`` comes from: "greedy" (the model wrote it, decoding its own output), "teacher"
        (a target was given: the next token the model expects after each of its prefixes), "sentence"
        (random weights read the sentence, and the same) or "next" (a decoder-only model reads the
        sentence: the next token it expects after each of its prefixes)."""
        if self.trace.encoder == [] and self.trace.src_ids is None:
            return "next"
        return "greedy" if self.decoded is not None else "teacher" if self.target_given else "sentence"

    @property
    def answer(self) -> list[str]:
        """The model's output for the sentence: what greedy decoding wrote ([BOS] left out, up to
        [EOS]); with a given decoder input, the most probable next token at each of its positions."""
        if self.decoded is None:
            return list(self.predicted)
        written = self.predicted[: len(self.decoded.steps)]  # step i chose token i + 1 (argmax)
        return written[: written.index(EOS)] if EOS in written else written


class EmptyInput(ValueError):
    """The sentence has no token the model can take; ``index``: which one, in a batch (0-based)."""

    def __init__(self, message: str, index: int = 0) -> None:
        super().__init__(message)
        self.index = index


class MinilmUnavailable(ImportError):
    """The optional all-MiniLM-L6-v2 package is not installed (or its files are unusable)."""


# -- tokenizers ------------------------------------------------------------------------------------


def display_token(tok: BPETokenizer, token: str) -> str:
    """A byte-level token as a label: its text, a leading space as ␣, a partial character as bytes."""
    if token in SPECIAL_TOKENS:
        return token
    text = tok.readable(token)
    if "\ufffd" in text:  # a piece of a multi-byte character: show the bytes themselves
        # thin spaces: a plain space would be drawn as ␣, the mark of a real space token
        return "⟨" + "\u2009".join(f"{b:02x}" for b in token_bytes(token)) + "⟩"
    return text.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥")


@functools.lru_cache(maxsize=1)
def corpus_tokenizer() -> BPETokenizer:
    """Byte-level BPE learned from the shipped bilingual corpus: the random model's vocabulary."""
    return BPETokenizer.train(CORPUS_PATH.read_text(encoding="utf-8"), RANDOM_VOCAB_MERGES, byte_level=True)


@functools.cache
def corpus_labels() -> list[str]:
    """The display label of every id of :func:`corpus_tokenizer`'s vocabulary."""
    tok = corpus_tokenizer()
    return [display_token(tok, tok.vocab[i]) for i in range(len(tok.vocab))]


# -- loading ---------------------------------------------------------------------------------------


def load_pipeline(
    settings: PipelineSettings, checkpoint: Path = CHECKPOINT_PATH, gpt: Path = GPT_PATH
) -> Pipeline:
    """The pipeline these settings name, intact: parts are switched off on a pipeline
    (``core.interventions.runs.ablated(pipe, settings.ablate, settings.ablate_mode)``)."""
    if settings.ablate:
        raise ValueError("load the intact pipeline, then core.interventions.runs.ablated(pipe, ablate, mode)")
    if settings.weights == Weights.SESSION:
        raise ValueError("session weights are not loaded by settings: build them with pipeline_from_model")
    if settings.weights == Weights.HF:
        raise ValueError("a model folder is not loaded by settings: build it with folder_pipeline")
    if settings.weights == Weights.TRAINED:
        return _or_random(settings, "The trained checkpoint", lambda: _trained_pipeline(settings, checkpoint))
    if settings.weights == Weights.GPT:
        return _or_random(settings, "The small GPT", lambda: _gpt_pipeline(settings, gpt))
    if settings.weights == Weights.MINILM:
        return _or_random(settings, MINILM_NAME, lambda: _minilm_pipeline(settings))
    return _random_pipeline(settings)


def _or_random(settings: PipelineSettings, what: str, build: Callable[[], Pipeline]) -> Pipeline:
    """``build()``, or random weights of the same settings when its weights cannot be used (a missing or
    broken checkpoint, MiniLM not installed): ``problem`` and ``warning`` say why."""
    try:
        return build()
    except (CheckpointError, MinilmUnavailable) as e:
        random = _random_pipeline(settings)
        random.problem = str(e)
        random.warning = f"{what} could not be used, showing random weights instead. {e}"
        return random


def _random_pipeline(s: PipelineSettings) -> Pipeline:
    tok = corpus_tokenizer()
    vocab = len(tok.vocab)
    config = ModelConfig(
        vocab,
        vocab,
        d_model=s.d_model,
        num_heads=s.num_heads,
        num_layers=s.num_layers,
        d_ff=s.d_ff,
        dropout=0.0,
        norm=s.norm,
        positions=s.positions,
        seed=s.seed,
    )
    labels = corpus_labels()

    def encode(text: str) -> tuple[list[str], list[int]]:
        ids = tok.encode(text)
        return [labels[i] for i in ids], ids

    label = (
        f"Weights: random initialisation (seed {s.seed}), untrained — attention patterns are noise; "
        f"vocabulary: byte-level BPE, {len(tok.merges)} merges on the shipped corpus"
    )
    return RandomPipeline(s, config, Weights.RANDOM, label, encode, encode, labels, labels,
                          merges=len(tok.merges))


def with_norm(pipe: Pipeline, norm: str) -> Pipeline:
    """The same pipeline with the other residual arrangement ("post" / "pre") and the very same
    weights: what ``load_pipeline`` gives for random weights with that ``norm``, built without drawing
    any weight again, and no second copy of them in memory.

    Kept in ``pipe.twins``: whoever caches ``pipe`` caches its twin for exactly as long (a cache of
    its own would keep the weights of pipelines already dropped alive).
    """
    if norm == pipe.config.norm:
        return pipe
    twin = pipe.twins.get(norm)
    if twin is None:  # two threads may both build one: the same numbers, the last one is kept
        settings, model = replace(pipe.settings, norm=norm), pipe.model.sharing_weights(norm=norm)
        twin = pipe.twins[norm] = replace(pipe, settings=settings, model=model, twins={})
    return twin


def _trained_pipeline(s: PipelineSettings, path: Path) -> Pipeline:
    model, (src_vocab, tgt_vocab), task, metrics = load_checkpoint(path)
    if task != "pinyin":
        raise CheckpointError(f"{path}: trained on task {task!r}, the app needs a 'pinyin' checkpoint")
    return pipeline_from_model(model, src_vocab, tgt_vocab, task, metrics, settings=s)


def gpt_pipeline(s: PipelineSettings, model: Transformer, tokenizer: BPETokenizer, metrics: dict,
                 weights: Weights = Weights.GPT, label: str | None = None) -> Pipeline:
    """A pipeline around a language model of core/training/language.py: the shipped one (GPT) or one
    trained in the app (SESSION). Text is read as it was in training: byte-level BPE, a typed "[EOS]"
    stays text."""
    labels = [display_token(tokenizer, tokenizer.vocab[i]) for i in range(len(tokenizer))]

    def encode(text: str) -> tuple[list[str], list[int]]:
        ids = tokenizer.encode(text, allow_special=False)
        return [labels[i] for i in ids], ids

    c = model.config
    if label is None:
        test = metrics.get("test", {})
        score = f"; test perplexity {test['perplexity']:.1f}" if "perplexity" in test else ""
        label = (f"Weights: {GPT_NAME}, trained here on English and Chinese quotations, poems and songs "
                 f"(Debian's fortune files), {STACKS[c.stack]}: {c.num_layers} layers × {c.num_heads} heads, "
                 f"d_model {c.d_model}{score}; vocabulary: byte-level BPE, {len(tokenizer.merges):,} merges")
    return Pipeline(s, model.eval(), weights, label, encode, encode, labels, labels, metrics=metrics,
                    task="lm", name=GPT_NAME if weights == Weights.GPT else "", family="gpt",
                    architecture="GPT", tokenizer_kind=f"byte-level BPE, {len(tokenizer.merges):,} merges",
                    eos_id=EOS_ID)


def read_gpt(path: Path = GPT_PATH) -> tuple[Transformer, BPETokenizer, dict]:
    """(model, tokenizer, metrics) of a language model's checkpoint (the sizes are its own);
    CheckpointError for a checkpoint of another task."""
    model, tokenizer, task, metrics = load_checkpoint(path)
    if task != "lm":
        raise CheckpointError(f"{path}: task {task!r}, not a language model (task lm)")
    return model, tokenizer, metrics


def _gpt_pipeline(s: PipelineSettings, path: Path) -> Pipeline:
    return gpt_pipeline(s, *read_gpt(path))


def read_minilm():
    """(model, WordPiece tokenizer) of all-MiniLM-L6-v2 (~90 MB of weights), read from its files.

    MinilmUnavailable (with core.loading.bert.MINILM_MISSING) when the package is absent or its files
    cannot be read.
    """
    from core.loading.bert import MINILM_MISSING, load_minilm

    try:
        return load_minilm()
    except ImportError as e:  # not installed: the message is MINILM_MISSING (or says what to reinstall)
        raise MinilmUnavailable(str(e) or MINILM_MISSING) from e
    except (OSError, ValueError, KeyError, RuntimeError) as e:  # installed but broken files
        raise MinilmUnavailable(f"{MINILM_MISSING} (its files could not be read: {e})") from e


def _minilm_pipeline(s: PipelineSettings) -> Pipeline:
    model, tok = read_minilm()

    def encode(text: str) -> tuple[list[str], list[int]]:
        ids = tok.encode(text)  # [CLS] ... [SEP]
        return tok.convert_ids_to_tokens(ids), ids  # labels as WordPiece spells them: "##ing"

    def no_target(text: str) -> tuple[list[str], list[int]]:
        return [], []

    c = model.config
    label = (
        f"Weights: pretrained {MINILM_NAME} (sentence-transformers), an encoder only: "
        f"{c.num_layers} layers × {c.num_heads} heads, d_model {c.d_model}; "
        f"vocabulary: WordPiece (BERT, uncased), {len(tok):,} tokens"
    )
    return Pipeline(s, model, Weights.MINILM, label, encode, no_target, [], list(tok.itos), name=MINILM_NAME)


STACKS = {"encoder": "an encoder only", "decoder": "a decoder only", "encoder_decoder": "an encoder-decoder"}


def folder_pipeline(
    settings: PipelineSettings,
    model: Transformer,
    encode: Callable[[str], tuple[list[str], list[int]]],
    labels: list[str],
    *,
    architecture: str,
    family: str,
    tokenizer_kind: str,
    eos_id: int | None = None,
) -> Pipeline:
    """A pipeline around a model read from a Hugging Face folder (``load_folder``), with its own
    tokenizer: ``encode`` text -> (labels, ids) with the special tokens it adds, ``labels`` the display
    label of every id. ``settings.model`` names it ("hf:gpt2").

    The label says where the weights come from and nothing it cannot know: a folder may hold a
    pretrained model or random weights saved by a test, so it never says "pretrained".
    """
    c = model.config
    kv = c.num_kv_heads or c.num_heads
    heads = f"{c.num_heads} heads"
    if kv != c.num_heads:  # grouped-query attention
        heads = f"{c.num_heads} query heads sharing {kv} key/value heads"
    label = (
        f"Weights: loaded from the model folder {settings.model.removeprefix('hf:')} ({architecture}, "
        f"{family} family), {STACKS[c.stack]}: {c.num_layers} layers × {heads}, d_model {c.d_model}; "
        f"vocabulary: {tokenizer_kind}"
    )
    return Pipeline(settings, model.eval(), Weights.HF, label, encode, encode, labels, labels,
                    name=settings.model, family=family, architecture=architecture,
                    tokenizer_kind=tokenizer_kind, eos_id=eos_id)


def pipeline_from_model(
    model: Transformer,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    task: str,
    metrics: dict,
    settings: PipelineSettings | None = None,
    label: str | None = None,
    weights: Weights = Weights.TRAINED,
) -> Pipeline:
    """A pipeline around a trained model (the shipped checkpoint, or one just trained in the app).

    ``weights``: TRAINED for the shipped checkpoint, SESSION for a model trained in the app.
    Source tokens are characters (whitespace dropped, unknown ones [UNK]); a target is
    whitespace-separated tokens (pinyin syllables, or digits for the toy tasks).
    """

    def encode_src(text: str) -> tuple[list[str], list[int]]:
        enc = encode_source(text, src_vocab)
        return enc.tokens, enc.ids

    def encode_tgt(text: str) -> tuple[list[str], list[int]]:
        pieces = text.split()
        ids = tgt_vocab.encode(pieces)
        return [UNK if i == UNK_ID else t for t, i in zip(pieces, ids, strict=True)], ids

    if label is None:
        acc = metrics.get("test_token_acc")
        quality = f", test syllable accuracy {acc:.1%}" if isinstance(acc, float) else ""
        name = {"pinyin": "汉字→拼音 (characters → pinyin)"}.get(task, f"{task!r} task")
        label = f"Weights: trained {name} checkpoint{quality}"
    return Pipeline(
        settings or PipelineSettings(weights=weights),
        model.eval(),
        weights,
        label,
        encode_src,
        encode_tgt,
        tgt_vocab.to_list(),
        src_vocab.to_list(),
        metrics=metrics,
        task=task,
    )


# -- running ---------------------------------------------------------------------------------------


def run_pipeline(pipe: Pipeline, sentence: str, target: str = "", max_tokens: int = 64) -> WholeRun:
    """Tokenize, encode, decode (teacher-forced on ``target``, or greedily when it is empty) and trace.

    A decoder-only model (GPT-2, Llama) reads the sentence through its one causal stack: the run's
    source and decoder tokens are both the sentence's, ``target`` is not read, and ``predicted`` is
    the most probable next token after each prefix.
    """
    if pipe.config.stack == "decoder":
        return _run_decoder_only(pipe, sentence, max_tokens)
    if pipe.config.stack == "encoder":
        return _run_encoder_only(pipe, *source_tokens(pipe, sentence), max_tokens)
    total, limit, src_labels, src_ids = _cut_source(pipe, sentence, max_tokens)
    src = torch.tensor([src_ids], dtype=torch.long)  # (1, S)
    model = pipe.model

    given = bool(target.strip())
    teacher = _teacher_input(pipe, src_labels, src_ids, target, limit)
    decoded = None
    if teacher is not None:
        labels, tgt_ids = teacher
        trace = model.trace(src, torch.tensor([tgt_ids], dtype=torch.long))
    else:
        # The trained model's own output as the decoder's input: greedy decoding, one step per token.
        decoded = greedy(pipe, src_ids, limit)
        trace = decoded.steps[-1]  # the prefix that produced the last token: every decoder position
        labels = [pipe.tgt_labels[i] for i in trace.tgt_ids[0].tolist()]
    predicted_ids = trace.logits[0].argmax(-1).tolist()
    return WholeRun(
        src_tokens=list(src_labels),
        tgt_tokens=labels,
        predicted=[pipe.tgt_labels[i] for i in predicted_ids],
        trace=trace,
        truncated=total > limit,
        total_tokens=total,
        target_given=given,
        decoded=decoded,
    )


def _teacher_input(pipe: Pipeline, src_labels: list[str], src_ids: list[int], target: str, limit: int):
    """-> ([BOS] + labels, [BOS_ID] + ids) that ``run_pipeline`` feeds the decoder when they are not
    the model's own output, at most ``limit``; None when they are (greedy decoding)."""
    given = bool(target.strip())
    tgt_labels, tgt_ids = pipe.tgt_encode(target) if given else ([], [])
    if not given and pipe.weights == Weights.RANDOM:
        # An untrained model's own output is noise ("q q q q ..."), and fed back it fills every decoder
        # view with junk; the sentence itself gives readable rows. The decoding page decodes on demand.
        tgt_labels, tgt_ids = src_labels, src_ids
    if not tgt_ids:
        return None
    return [BOS] + tgt_labels[: limit - 1], [BOS_ID] + tgt_ids[: limit - 1]


def decoder_tokens(pipe: Pipeline, sentence: str, target: str = "", max_tokens: int = 64) -> list[str] | None:
    """``run_pipeline(pipe, sentence, target, max_tokens).tgt_tokens`` without running the model, when
    they do not come from it (a target given; random weights read the sentence): for views that need
    only the tokens (the Overview's shapes). None: they are the model's own greedy output. An
    encoder-only model reads no target: []; a decoder-only model reads the sentence."""
    if pipe.config.stack == "encoder":
        return []
    if pipe.config.stack == "decoder":
        return cut(pipe, sentence, max_tokens).labels
    _, limit, src_labels, src_ids = _cut_source(pipe, sentence, max_tokens)
    teacher = _teacher_input(pipe, src_labels, src_ids, target, limit)
    return None if teacher is None else teacher[0]


def source_trace(pipe: Pipeline, sentence: str, max_tokens: int = 64) -> SourceTrace | ModelTrace:
    """``run_pipeline``'s ``src_*`` tensors (same cut, same numbers) without running a layer: the encoder's
    input, which the Embeddings and Positional pages show (the tokens are ``cut``'s).

    With random weights not yet drawn only the embedding table is (``Pipeline.src_embedding``): a new
    seed or size on the pages that show the encoder's input no longer waits for the whole model
    (46M numbers at d_model=512, 6 layers). An encoder-only model takes run_pipeline's way ([CLS] …
    [SEP], its own cut). A decoder-only model's input is its one stack's: the same embedding, read by
    ``trace.tgt_*`` in the whole run, is shown as ``src_*`` here.
    """
    if pipe.config.stack == "encoder":  # run_pipeline's own run: a ModelTrace
        return run_pipeline(pipe, sentence, max_tokens=max_tokens).trace
    source = cut(pipe, sentence, max_tokens)  # an encoder-decoder's source, or a decoder-only's input
    src = torch.tensor([source.ids], dtype=torch.long)  # (1, S)
    embed = pipe.src_embedding
    with torch.no_grad():
        embedded, lookup = embed(src)
    return SourceTrace(src_ids=src, src_token_embedding=lookup, src_embedded=embedded,
                       positional=embed.positional(len(source.ids)).detach())  # fmt: skip


def source_limit(pipe: Pipeline, max_tokens: int) -> int:
    """How many source tokens an encoder-decoder reads: ``max_tokens``, leaving room for [BOS] and
    [EOS] within the model's positions. (Decoding is cut at the same length.)"""
    return min(max_tokens, pipe.config.max_len - 2)


def source_tokens(pipe: Pipeline, sentence: str) -> tuple[list[str], list[int]]:
    """(labels, ids) of the sentence. Byte-level BPE would give whitespace tokens for "  \n", but a
    blank sentence is no sentence."""
    return pipe.src_encode(sentence) if sentence.strip() else ([], [])


@dataclass(frozen=True)
class Cut:
    """The source as the model reads it: ``labels`` and ``ids``, the first of ``total`` tokens."""

    labels: list[str]
    ids: list[int]
    total: int


def cut(pipe: Pipeline, sentence: str, max_tokens: int = 64) -> Cut:
    """The sentence's source tokens as ``run_pipeline`` reads them, without running anything.
    ``EmptyInput`` when there are none."""
    if pipe.config.stack == "encoder":
        return _cut_encoder_only(*source_tokens(pipe, sentence), pipe.config.max_len, max_tokens)
    if pipe.config.stack == "decoder":
        return _cut_decoder_only(*source_tokens(pipe, sentence), pipe.config.max_len, max_tokens)
    total, _, labels, ids = _cut_source(pipe, sentence, max_tokens)
    return Cut(list(labels), list(ids), total)


def _cut_encoder_only(labels: list[str], ids: list[int], max_len: int, max_tokens: int) -> Cut:
    """[CLS] sentence [SEP], cut at the model's positions (512 for BERT) as Hugging Face truncates:
    the end of the sentence goes, [CLS] and [SEP] stay, so a cut run still ends in [SEP]."""
    if len(ids) <= 2:  # nothing between [CLS] and [SEP] (e.g. only control characters)
        raise EmptyInput("The sentence has no tokens: type some text.")
    limit = max(3, min(max_tokens, max_len))
    if len(ids) > limit:
        return Cut(labels[: limit - 1] + labels[-1:], ids[: limit - 1] + ids[-1:], len(ids))
    return Cut(list(labels), list(ids), len(ids))


def _cut_decoder_only(labels: list[str], ids: list[int], max_len: int, max_tokens: int) -> Cut:
    """A decoder-only model's input: the sentence's first tokens, at most ``max_tokens`` and the
    model's positions (GPT-2's learned table has ``max_len`` rows)."""
    if not ids:
        raise EmptyInput("The sentence has no tokens: type some text.")
    limit = min(max_tokens, max_len)
    return Cut(list(labels[:limit]), list(ids[:limit]), len(ids))


def _cut_source(pipe: Pipeline, sentence: str, max_tokens: int):
    """-> (total, limit, labels, ids): an encoder-decoder's source as the model sees it, at most
    ``source_limit`` of its ``total`` tokens."""
    labels, ids = source_tokens(pipe, sentence)
    if not ids:
        raise EmptyInput("The sentence has no tokens: type some text.")
    limit = source_limit(pipe, max_tokens)
    return len(ids), limit, labels[:limit], ids[:limit]


def greedy_sentence(pipe: Pipeline, sentence: str, max_tokens: int = 64) -> DecodeResult:
    """Greedy decoding of ``sentence``, its source cut as ``run_pipeline`` cuts it (for pages that
    decode on demand: random weights, or a target given). A decoder-only model continues the
    sentence by ``NEW_TOKENS`` tokens (:func:`generate`)."""
    if pipe.config.stack == "decoder":
        return generate(pipe, sentence, max_tokens)
    _, limit, _, ids = _cut_source(pipe, sentence, max_tokens)
    return greedy(pipe, ids, limit)


def encoder_trace(pipe: Pipeline, sentence: str, max_tokens: int = 64, norm: str | None = None) -> ModelTrace:
    """The encoder half of ``run_pipeline(pipe, sentence, max_tokens=...).trace`` (same tokens, same
    numbers; ``decoder`` empty, no logits): for views of the encoder alone, without a decoder pass.

    ``norm``: that of ``with_norm(pipe, norm)`` (the same weights, the other residual arrangement);
    random weights not yet drawn draw only their source side for it too. A decoder-only model has no
    encoder: its whole run (in its own arrangement only)."""
    if pipe.config.stack == "decoder":
        if norm not in (None, pipe.config.norm):
            raise ValueError(f"{pipe.name or 'this model'} is loaded as it was trained: norm={norm!r} is not")
        return run_pipeline(pipe, sentence, max_tokens=max_tokens).trace
    if pipe.config.stack == "encoder":
        return run_pipeline(pipe, sentence, max_tokens=max_tokens).trace
    *_, ids = _cut_source(pipe, sentence, max_tokens)
    return _encoder_side(pipe, norm or pipe.config.norm).trace(torch.tensor([ids], dtype=torch.long), None)


def _encoder_side(pipe: Pipeline, norm: str) -> Transformer:
    """``with_norm(pipe, norm).model``, or for random weights not yet drawn a twin of
    ``pipe.encoder_model`` (sharing its tensors; its decoder stays on "meta"), kept in ``pipe.twins``
    beside the whole twins (which ``with_norm`` hands out: those must be whole)."""
    if norm == pipe.config.norm:
        return pipe.encoder_model
    if pipe.drawn:
        return with_norm(pipe, norm).model
    key = f"encoder-{norm}"
    twin = pipe.twins.get(key)
    if twin is None:  # two threads may both build one: the same numbers, the last one is kept
        twin = pipe.twins[key] = pipe.encoder_model.sharing_weights(norm=norm)
    return twin


def _run_encoder_only(pipe: Pipeline, labels: list[str], ids: list[int], max_tokens: int) -> WholeRun:
    """An encoder-only model (BERT): [CLS] sentence [SEP] through the encoder; no target side."""
    source = _cut_encoder_only(labels, ids, pipe.config.max_len, max_tokens)
    trace = pipe.model.trace(torch.tensor([source.ids], dtype=torch.long), None)  # (1, S): encoder only
    return WholeRun(
        src_tokens=source.labels,
        tgt_tokens=[],
        predicted=[],
        trace=trace,
        truncated=source.total > len(source.ids),
        total_tokens=source.total,
        target_given=False,  # there is no decoder to read a target
        decoded=None,
    )


def _run_decoder_only(pipe: Pipeline, sentence: str, max_tokens: int) -> WholeRun:
    """The sentence through a decoder-only model's one causal stack: logits at every position."""
    source = cut(pipe, sentence, max_tokens)
    trace = pipe.model.trace(torch.tensor([source.ids], dtype=torch.long))  # (1, L): decoder only
    predicted = trace.logits[0].argmax(-1).tolist()
    return WholeRun(
        src_tokens=source.labels,
        tgt_tokens=list(source.labels),  # the one stack reads the sentence
        predicted=[pipe.tgt_labels[i] for i in predicted],
        trace=trace,
        truncated=source.total > len(source.ids),
        total_tokens=source.total,
        target_given=False,
        decoded=None,
    )


def generate(
    pipe: Pipeline,
    sentence: str,
    max_tokens: int = 64,
    new_tokens: int = NEW_TOKENS,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
) -> DecodeResult:
    """A decoder-only model continues the sentence (cut as ``run_pipeline`` cuts it) by at most
    ``new_tokens`` tokens (and ``MAX_DECODE_STEPS``), stopping at its end-of-text token:
    ``core.tracing.generate.sample`` (``temperature=0``: greedy). ``tokens`` holds the sentence first."""
    from core.tracing.generate import sample

    source = cut(pipe, sentence, max_tokens)
    ids = torch.tensor([source.ids], dtype=torch.long)  # (1, L)
    n = min(new_tokens, MAX_DECODE_STEPS)
    return sample(pipe.model, ids, n, temperature=temperature, top_k=top_k, top_p=top_p, seed=seed,
                  eos_id=pipe.eos_id)


def greedy(pipe: Pipeline, src_ids: list[int], limit: int = 64) -> DecodeResult:
    """Greedy decoding of one sentence's ids.

    The trained tasks (pinyin, copy, reverse) write one output token per input token, so decoding
    stops after len(src) tokens at the latest: on phrases longer than most of its training phrases
    the pinyin model sometimes does not emit [EOS] and would repeat its last syllable (…yī qiè qiè).
    The model still chooses every token; only the overrun is cut. Random weights get len + 2 steps.
    At most MAX_DECODE_STEPS steps are taken (each keeps its trace).
    """
    src = torch.tensor([src_ids], dtype=torch.long)
    steps = len(src_ids) if pipe.task else len(src_ids) + 2
    steps = min(steps, limit, MAX_DECODE_STEPS)
    return pipe.model.greedy_decode(src, max_new_tokens=steps, bos_id=BOS_ID, eos_id=EOS_ID)
