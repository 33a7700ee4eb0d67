"""Tables the docs read from the package itself, so a page cannot drift from the code.

``.. mmcost-fields:: mmcost.swap.SwapModel`` lists every field of a mechanism
(its default, unit, prior with its source, and meaning) from ``describe()``;
``.. mmcost-kernel-changes::`` with ``:read-by: swap`` lists the kernel
changes a mechanism switches on, from :func:`mmcost.kernel.changes`;
``.. mmcost-cpu-presets::`` lists :data:`mmcost.cpu_models.PRESETS`.

The cells are built as docutils nodes, not reST text, so a prior's source
(``try_charge_memcg ... *``) is never read as markup.
"""

from __future__ import annotations

import importlib
import math

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective


def _text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def table(headers: list[str], rows: list[list], widths: list[int]) -> nodes.table:
    """A docutils table of plain-text cells."""
    tgroup = nodes.tgroup(cols=len(headers))
    for w in widths:
        tgroup += nodes.colspec(colwidth=w)

    def row(cells) -> nodes.row:
        r = nodes.row()
        for c in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=_text(c))
            r += entry
        return r

    thead = nodes.thead()
    thead += row(headers)
    tbody = nodes.tbody()
    for cells in rows:
        tbody += row(cells)
    tgroup += thead
    tgroup += tbody
    tab = nodes.table(classes=["mmcost-table"])
    tab += tgroup
    return tab


def _resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


class FieldsDirective(SphinxDirective):
    """Every field of a mechanism class, from its ``describe()``."""

    required_arguments = 1
    option_spec = {"kind": directives.unchanged}

    def run(self):
        d = _resolve(self.arguments[0])().describe()
        if "kind" in self.options:  # "costs": the float fields with a prior; "knobs": the rest
            has_prior = d.prior.astype(bool)
            d = d[has_prior] if self.options["kind"] == "costs" else d[~has_prior]
        rows = [[r.field, r.value, r.unit, r.prior if r.prior else ("kernel switch" if r.kernel_switch else ""),
                 r.doc] for r in d.itertuples()]
        return [table(["field", "default", "unit", "prior (source)", "meaning"], rows, [18, 8, 6, 40, 40])]


class KernelChangesDirective(SphinxDirective):
    """The kernel changes the mechanisms read, each with its version and commit."""

    option_spec = {"read-by": directives.unchanged}

    def run(self):
        from mmcost.kernel import changes

        c = changes()
        if "read-by" in self.options:
            c = c[c.read_by.str.contains(self.options["read-by"])]
        rows = [[r.switch, r.version, r.arch, r.commit, r.title, r.effect] for r in c.itertuples()]
        return [table(["switch", "from", "arch", "commit", "title", "effect"], rows, [14, 5, 5, 12, 30, 50])]


class CpuPresetsDirective(SphinxDirective):
    """The CPU presets a ``cpu_model`` column selects."""

    def run(self):
        from mmcost.cpu_models import PRESETS

        rows = [[name, p.arch, p.clock_ghz, p.cores, p.source] for name, p in PRESETS.items()]
        return [table(["cpu_model", "arch", "clock [GHz]", "cores", "source"], rows, [16, 6, 6, 6, 60])]


def setup(app):
    app.add_directive("mmcost-fields", FieldsDirective)
    app.add_directive("mmcost-kernel-changes", KernelChangesDirective)
    app.add_directive("mmcost-cpu-presets", CpuPresetsDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
