"""Pretrained models read into our Transformer: one module per model family, one folder loader.

    folder.py       load_folder(path): config.json's model_type -> the family's loader (FAMILIES)
    files.py        FolderFiles, the one reader of a folder's files (inside its root, a cap per kind),
                    and the weights (safetensors or torch's weights-only pickle, shards included)
    safetensors.py  the safetensors format, read by core itself
    gpt2.py         GPT-2: config, tensor names, its byte-level BPE
    bert.py         BERT: config, tensor names, its WordPiece; all-MiniLM-L6-v2 (load_minilm)
    llama.py        Llama and Qwen2: config, tensor names (their tokenizer.json is the app's)

Nothing is executed from a folder, and nothing here is imported by the model or the tokenizers.
"""
