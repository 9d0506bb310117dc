"""The multi-server deployment: ``deploy/local.py`` (one machine, no Docker) and its Docker Compose twin."""
