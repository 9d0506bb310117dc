"""Interventions in the app: switches.py the parts switched off (``ablate=``) on every page (the
sidebar's control, the badge, the switches beside a head or a layer); views.py the model with them off
beside the intact one, patching and every layer's guess (the Interventions page's sections)."""
