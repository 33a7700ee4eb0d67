"""Bundled published measurements (installed as the package ``mmcost.data``).

One folder per source: ``<id>/source.toml`` (provenance) and
``<id>/measurements.csv`` (tidy rows). Read them with :mod:`mmcost.datasets`.
"""
