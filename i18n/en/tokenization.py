"""The Tokenization page (pages/tokenization.py) and its figures (figures/tokenization.py)."""

STRINGS = {
    "tokenization.caption": (
        "Byte Pair Encoding (BPE): start from characters (or bytes); repeatedly glue the most frequent "
        "pair of neighbours in the training text into one new token. The ordered list of glue steps, the "
        "*merges*, is the tokenizer. Tokenizing comes before the model: the weights play no part here."
    ),
    "tokenization.caption.minilm": (
        "A model can only read the tokens of its own vocabulary. The pretrained all-MiniLM-L6-v2 reads "
        "**WordPiece** tokens (BERT's tokenizer), shown first; below it, Byte Pair Encoding (BPE), the "
        "tokenizer of our own models, learned merge by merge. Tokenizing comes before the model: no "
        "weight is used here."
    ),
    "tokenization.training": "Learning the merges…",
    "tokenization.url.ignored": "Ignored {key}={raw} from the URL (not a valid value); using the default.",
    "tokenization.url.step": (
        "Ignored tok_step={raw} from the URL (must be a whole number from 0 to {n}); showing step {n}."
    ),
    # training text and settings
    "tokenization.source": "Training text",
    "tokenization.source.corpus": "en_zh.txt (shipped)",
    "tokenization.source.corpus_all": "all shipped corpus files",
    "tokenization.source.textbook": "textbook example",
    "tokenization.source.paste": "pasted text",
    "tokenization.source.upload": "uploaded .txt",
    "tokenization.source.help": (
        "en_zh.txt: English paragraphs, each followed by its Chinese version (13 KB). All files adds "
        "2,600 Chinese phrases with their pinyin. Textbook: low ×5, lower ×2, newest ×6, widest ×3."
    ),
    "tokenization.kind": "BPE kind (film, merges)",
    "tokenization.kind.byte": "byte-level",
    "tokenization.kind.classic": "classic",
    "tokenization.kind.help": (
        "byte-level: GPT-2's BPE over UTF-8 bytes. classic: Sennrich et al.'s BPE over characters, "
        "each word ending in </w>."
    ),
    "tokenization.kind_name.byte": "Byte-level BPE (GPT-2)",
    "tokenization.kind_name.classic": "Classic BPE (</w>)",
    "tokenization.labels": "Box labels",
    "tokenization.labels.text": "text",
    "tokenization.labels.spelling": "spelling",
    "tokenization.labels.help": (
        "The text a token stands for (a piece of a character as its bytes, e.g. ⟨e4 b8⟩), or the "
        "token as GPT-2's vocabulary spells it (a space is Ġ, 中 is ä¸Ń). Classic tokens are "
        "always shown as they are."
    ),
    "tokenization.merges": "Number of merges to learn",
    "tokenization.merges.help": "Each merge adds one token to the vocabulary. Training stops early if no pair is left.",
    "tokenization.paste": "Training text (paste anything: English, 中文, code…)",
    "tokenization.paste.empty": "The pasted text is empty: paste some text above. Meanwhile the textbook example is used.",
    "tokenization.upload": "A plain-text file (.txt, UTF-8, at most {mb} MB)",
    "tokenization.upload.fallback": "Meanwhile the shipped corpus is used.",
    "tokenization.upload.none": "No file uploaded yet.",
    "tokenization.upload.none_limit": (
        "No file uploaded yet. A file over {mb} MB never reaches the server: your browser refuses it "
        "(the red note under the box says so). Upload a shorter .txt file, or paste an excerpt."
    ),
    "tokenization.limit": (
        "**Training was limited** so that it takes a few seconds on this shared server: the work of "
        "BPE training grows with the number of merges × the length of each word, and a text without "
        "spaces is one very long word. What changed:"
    ),
    "tokenization.limit.cut": (
        "- {kind}: words longer than {n} {unit} are cut into pieces of at most {n} {unit} (the longest "
        "word of this text has {longest} {unit}); no merge crosses a cut."
    ),
    "tokenization.limit.prefix": "- {kind}: only the first {used} of the {total} characters are learned from.",
    "tokenization.limit.unit.byte": "bytes",
    "tokenization.limit.unit.classic": "characters",
    "tokenization.upload.too_big": (
        "This file is {size} MB; training here is limited to {limit} MB. "
        "Upload a shorter .txt file (or paste an excerpt)."
    ),
    "tokenization.upload.binary": "This file is not UTF-8 text (it looks binary): upload a plain .txt file saved as UTF-8.",
    "tokenization.upload.not_utf8": "This file is not UTF-8 text: upload a plain .txt file saved as UTF-8.",
    "tokenization.upload.nul": "This file contains NUL characters: it is not plain text.",
    "tokenization.upload.empty": "This file is empty (or only whitespace): there is nothing to learn from.",
    "tokenization.vocab.byte": (
        "Training text: {chars} characters ({kb} KB) · learned {n} merges · "
        "vocabulary {vocab} tokens = 5 special + 256 bytes + {n} merged."
    ),
    "tokenization.vocab.classic": (
        "Training text: {chars} characters ({kb} KB) · learned {n} merges · "
        "vocabulary {vocab} tokens = 5 special + {base} characters and </w> + {n} merged."
    ),
    "tokenization.ran_out": "The training text ran out of pairs after {n} merges (asked for {asked}).",
    "tokenization.same_as_model": "This is exactly the vocabulary of the random-weights model on the other pages.",
    # the film
    "tokenization.film.title": "Merge by merge: your sentence",
    "tokenization.empty": "The sentence is empty: type a sentence in the sidebar (any language) to see it tokenized.",
    "tokenization.film.explain": (
        "**How BPE learns.** Write the training text as small pieces (bytes, or characters). Count every "
        "pair of neighbours, e.g. `t` followed by `h`. The most frequent pair becomes one new token (`th`), "
        "everywhere in the text. Repeat: each repetition is one **merge**, and adds one token to the "
        "vocabulary $V$. To tokenize a new sentence, apply the same merges in the same order. "
        "The slider below replays them on your sentence."
    ),
    "tokenization.film.formula_byte": (
        "Each merge picks the most frequent neighbour pair. The vocabulary: 5 special tokens, "
        "the 256 byte values, and one token per merge (k merges)."
    ),
    "tokenization.film.formula_classic": (
        "Each merge picks the most frequent neighbour pair. The vocabulary: 5 special tokens, the "
        "characters Σ of the training text, the end-of-word symbol </w>, and one token per merge (k merges)."
    ),
    "tokenization.film.cut": (
        "The film shows the first {n} characters of the sentence (at most {boxes} boxes at step 0); "
        "the ids below cover the whole sentence."
    ),
    "tokenization.play": "Play",
    "tokenization.pause": "Pause",
    "tokenization.play.help": "Jumps from one merge that changes the sentence to the next, every {s} s.",
    "tokenization.step": "Merges applied (step)",
    "tokenization.step.help": "Step k applies the first k merges. The box the k-th merge created is orange.",
    "tokenization.no_merges": "No merges learned (0 merges): the sentence stays as bare symbols.",
    "tokenization.curve.explain": (
        "Each merge can only make the sentence shorter (or leave it alone): with $n_k$ tokens after "
        "$k$ merges, $n_k$ never grows. {changed} of the {n} merges change this sentence; **Play** jumps "
        "between them."
    ),
    "tokenization.curve.legend": "Orange box: the token the current merge created. Number under a box: its id.",
    "tokenization.textbook.title": "The textbook example, step by step (classic BPE)",
    "tokenization.textbook.explain": (
        "Word counts: {counts}. Every word starts as characters plus the end-of-word symbol `</w>` "
        "(`l o w </w>`). The pair `e s` occurs 6 + 3 = 9 times (newest, widest): it is merged first; "
        "then `es t` (9), then `est </w>` (9), then `l o` (7) and `lo w` (7). Ties go to the "
        "alphabetically smaller pair. A new word like *lowest* is then cut into known pieces: "
        "`low` + `est</w>`, although it never occurred."
    ),
    "tokenization.merges.title": "The merges, in the order learned",
    "tokenization.merges.caption": "{kind} · step k glues left + right into the new token, which gets the next free id.",
    # classic vs byte-level
    "tokenization.versus.title": "Classic vs byte-level, same text, same number of merges",
    "tokenization.versus.byte": "**Byte-level**: {n} tokens, {unknown} unknown, vocabulary {vocab}",
    "tokenization.versus.classic": "**Classic**: {n} tokens, {unknown} unknown, vocabulary {vocab}",
    "tokenization.versus.explain": (
        "Classic BPE cuts at spaces and ends every word with `</w>`; a character it never saw becomes "
        "`[UNK]`. Byte-level BPE starts from the 256 byte values, so nothing is ever unknown: a Chinese "
        "character is 3 bytes, an emoji 4, and each byte is *spelled* with one printable character "
        "(GPT-2's table; a space is `Ġ`). Merges then rebuild frequent characters and words. Chinese "
        "has no spaces, so for the classic kind a whole run of 汉字 is one \"word\"."
    ),
    "tokenization.bytes.yours": "**The bytes behind each non-ASCII character** of your sentence (UTF-8 uses 1 to 4 bytes per character)",
    "tokenization.bytes.example": (
        "**The bytes behind each non-ASCII character** (your sentence has none: an example; "
        "UTF-8 uses 1 to 4 bytes per character)"
    ),
    # ids and special tokens
    "tokenization.ids.title": "Token ids and special tokens",
    "tokenization.ids.explain": (
        "The model never sees text, only ids: the position of each token in the vocabulary. The "
        "embedding layer (next page) then looks up row $x_i$ of its table $E$. Five "
        "**special tokens** take the first ids in every vocabulary of Glassbox. They are never split "
        "and never learned from text: `[PAD]` fills a short sentence in a batch, `[UNK]` stands for an "
        "unknown character, `[BOS]`/`[EOS]` mark the beginning and end of a sequence (the decoder starts "
        "from `[BOS]`), `[MASK]` hides a token (BERT-style training)."
    ),
    "tokenization.ids.figure": "[BOS] + sentence + [EOS], {kind}",
    "tokenization.ids.encode": "encode(...): {n} ids",
    "tokenization.ids.plain": "The same “[BOS]” read as ordinary text (allow_special=False): {n} tokens, not one",
    "tokenization.ids.roundtrip_yes": "decode(encode(text)) gives the text back exactly: yes",
    "tokenization.ids.roundtrip_no": "decode(encode(text)) gives the text back exactly: no",
    "tokenization.ids.empty": "Type a sentence in the sidebar to see it encoded between [BOS] and [EOS].",
    # the model's tokenizer
    "tokenization.model.title": "What the model on the other pages reads",
    "tokenization.model.trained": "characters of the trained 汉字→拼音 vocabulary",
    "tokenization.model.trained_task": "the characters of the {task!r} task's vocabulary",
    "tokenization.model.random": "byte-level BPE with its own merges, learned from the shipped corpus",
    "tokenization.model.caption": "The model's source tokenizer: {what}. {n} tokens.",
    "tokenization.model.folder_title": "What {name} reads: its own tokenizer",
    "tokenization.model.folder": "the model folder's own tokenizer, {kind}",
    "tokenization.model.folder_note": (
        "These are the pieces and ids the model reads, as its own tokenizer gives them (with the special "
        "tokens it adds). The sections below learn a BPE from a training text, to show how such a "
        "vocabulary is made."
    ),
    "tokenization.model.figure": "Model input tokens and ids",
    # WordPiece beside BPE
    "tokenization.wp.title.model": "What all-MiniLM-L6-v2 reads: WordPiece, beside our byte-level BPE",
    "tokenization.wp.title.compare": "Compare: WordPiece (BERT, all-MiniLM-L6-v2) on the same sentence",
    "tokenization.wp.intro": (
        "**WordPiece** is the tokenizer of BERT and of all-MiniLM-L6-v2: a fixed vocabulary of 30,522 "
        "pieces of English words (lowercase), punctuation and some characters of other scripts. The "
        "paper itself used both kinds: byte-pair encoding (about 37,000 tokens) for English–German "
        "and a 32,000 word-piece vocabulary for English–French. Here is the sidebar's sentence in "
        "both: WordPiece on the left, our byte-level BPE (the random-weights model's 1,000 merges) "
        "on the right."
    ),
    "tokenization.wp.empty": "The sentence is empty: type a sentence in the sidebar to compare the two tokenizers.",
    "tokenization.wp.name.bpe": "byte-level BPE (ours)",
    "tokenization.wp.name.wordpiece": "WordPiece (all-MiniLM-L6-v2)",
    "tokenization.wp.left": "**WordPiece**: {n} tokens, with [CLS] and [SEP]",
    "tokenization.wp.right": "**Byte-level BPE** ({merges} merges): {n} tokens",
    "tokenization.wp.tokens": "The {n} tokens:",
    "tokenization.wp.ids": "Their {n} ids:",
    "tokenization.wp.how": (
        "**How WordPiece cuts a word.** First the text is cleaned: lowercased, accents removed "
        "(é → e), every punctuation mark and every Chinese character made a word of its own. Then each "
        "word is cut from the left, taking each time the **longest** piece that is in the vocabulary $V$ "
        "(greedy longest-match-first). A piece that does not start the word is written with `##` "
        "(`token` + `##izing`). If at some point not even one character matches, the whole word "
        "becomes `[UNK]` (unknown)."
    ),
    "tokenization.wp.input": (
        "The model's input always starts with `[CLS]` (\"classification\": a summary position) and "
        "ends with `[SEP]` (\"separator\"):"
    ),
    "tokenization.wp.differs": (
        "**How it differs from BPE.** BPE *builds up*: it starts from bytes and replays learned merges, "
        "in the order they were learned. WordPiece *cuts down*: it looks up the longest piece it knows, "
        "with no merge list at all. Byte-level BPE can spell anything from bytes, so nothing is ever "
        "unknown; WordPiece has `[UNK]` for characters outside its vocabulary (many 汉字, most emoji). "
        "BPE keeps case and spaces (a token can be `␣is`); WordPiece lowercases and drops the spaces, "
        "marking instead with `##` a piece that continues a word. The ids mean different things too: "
        "id 101 is `[CLS]` in WordPiece but an ordinary byte in our BPE, so a model can only read the "
        "ids of the tokenizer it was trained with."
    ),
    "tokenization.wp.words.title": "**Word by word**: each word after cleaning, and the pieces WordPiece cut it into",
    "tokenization.wp.word": "Follow the greedy search on one word",
    "tokenization.wp.greedy": (
        "Every attempt for {word}, longest candidate first: ✓ is the piece taken, ✗ a candidate not in "
        "the vocabulary. Result: {pieces}."
    ),
    # figures
    "tokenization.fig.hover.token": "token {i}: {token}",
    "tokenization.fig.hover.reads": "reads as: {text}",
    "tokenization.fig.hover.id": "id: {id}",
    "tokenization.fig.first_n": " (first {n} of {total} tokens)",
    "tokenization.fig.step0": "Step 0 of {total}: bare {start}, {n} tokens",
    "tokenization.fig.step0.bytes": "bytes (GPT-2 spelling)",
    "tokenization.fig.step0.chars": "characters + {eow}",
    "tokenization.fig.step": "Step {step} of {total}: {a} + {b} → {new}{reads}{what} · {n} tokens",
    "tokenization.fig.not_here": " (not in this sentence)",
    "tokenization.fig.count.x": "merges applied",
    "tokenization.fig.count.y": "tokens",
    "tokenization.fig.count.hover": "after {x} merges: {y} tokens",
    "tokenization.fig.count.now": "step {x}: {y} tokens",
    # table headers
    "tokenization.col.step": "step",
    "tokenization.col.left": "left",
    "tokenization.col.right": "right",
    "tokenization.col.new_token": "new token",
    "tokenization.col.id": "id",
    "tokenization.col.reads_as": "reads as",
    "tokenization.col.character": "character",
    "tokenization.col.code_point": "code point",
    "tokenization.col.utf8": "UTF-8 bytes (hex)",
    "tokenization.col.gpt2": "GPT-2 spelling",
    "tokenization.col.byte_tokens": "byte tokens",
    "tokenization.col.token": "token",
    "tokenization.col.tokenizer": "tokenizer",
    "tokenization.col.tokens": "tokens",
    "tokenization.col.unknown": "unknown ([UNK])",
    "tokenization.col.vocabulary": "vocabulary size",
    "tokenization.col.word": "word (after cleaning)",
    "tokenization.col.pieces": "WordPiece pieces",
    "tokenization.col.ids": "ids",
    "tokenization.col.try": "attempt",
    "tokenization.col.candidate": "candidate",
    "tokenization.col.in_vocab": "in the vocabulary?",
    # a language model trained here (task "lm"): the byte-level BPE it learned on its own training text
    "tokenization.model.lm": "byte-level BPE with {merges} merges, learned on its own training text",
    "tokenization.model.lm_note": (
        "These are the pieces and ids the model reads and writes: the byte-level BPE learned on the text it "
        "was trained on, with the same algorithm as the sections below, which learn one from a training text "
        "of your choice."
    ),
}
