"""English texts (the module names are the parts of the app; see i18n/__init__.py)."""
