"""Model folders on disk: found and described by name (models.py), their pipeline (hf_pipeline.py)
and their tokenizer.json (hf_tokenizer.py)."""
