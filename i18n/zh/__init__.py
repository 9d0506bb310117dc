"""中文 texts: the same keys as i18n/en, each translated (see i18n/__init__.py)."""
