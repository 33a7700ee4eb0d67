"""The bundled sources as members of one joint fit: :func:`fit_all`.

Each study that fits rows of its own is a member (and a study on a measured
machine, ``Study.PROFILE``, that has rows but frees nothing), with the model it fits
(its source's configuration, variants and kernel) and every parameter that
:mod:`.sharing` maps to a global one linked to it: the parameters some study
fits, and the same quantities wherever another source's model uses them. A
study that fits another's rows (``kvm_6_18_memcgs`` reads
``kvm_6_18_swapout``'s) is not a second member.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

from .. import studies
from ..fit import NotIdentifiableWarning, PoorFitWarning
from ..model import UnknownColumnWarning
from . import sharing
from .joint import JointFit, Member, fit_joint


@lru_cache(maxsize=None)
def _rows(name: str):
    """A study's fit rows, read once per process (kvm_6_18_swapout's take 1.7 s to build from its runs)."""
    return sharing.frame_rows(studies.get(name))


def _candidates(names) -> list:
    out, seen = [], []
    for name in names:
        study = studies.get(name)
        rows = _rows(name)
        # a member fits something, or its runs ran on a measured machine (Study.PROFILE): its rows then
        # tell the joint fit what that machine's shared costs are (its machine factor, the era's costs) for
        # every other study on it, even when it frees nothing of its own
        if rows is None or not (study.free or study.PROFILE is not None):
            continue
        if any(rows.reset_index(drop=True).equals(r) for r in seen):  # another study's rows: fitted once
            continue
        seen.append(rows.reset_index(drop=True))
        out.append(study)
    return out


def shared_names(members_studies) -> set[str]:
    """The global parameters: the keys of every parameter some member fits, and their factors."""
    out = set()
    for study in members_studies:
        for local, (g, f) in sharing.keys(study).items():
            if local in study.free:
                out.add(g)
                if f:
                    out.add(f)
    return out


def fit_all(exclude=(), names=None, x0=None) -> JointFit:
    """One fit of every bundled source that fits rows (``names``: these
    studies only), without the sources in ``exclude``. ``x0``: start values
    (a leave-one-source-out refit starts from the full fit)."""
    every = _candidates(names or studies.names())
    chosen = [s for s in every if s.id not in set(exclude)]
    if not chosen:
        raise ValueError("fit_all: no source left to fit")
    # the quantities are the same whoever is left out: a cost only the left-out source fitted is still
    # fitted by the others whose rows exercise it (and stays at its prior where none does)
    shared = shared_names(every)
    members, parameters = [], {}
    with warnings.catch_warnings():
        for w in (NotIdentifiableWarning, PoorFitWarning, UnknownColumnWarning):
            warnings.simplefilter("ignore", w)  # each study's own fit said them in its report
        for study in chosen:
            model = study.fit().model
            lk = sharing.links(study, shared)
            for link in lk:
                for g in (link.shared, link.factor):
                    if g and g not in parameters:
                        parameters[g] = sharing.global_parameter(g, model, link.local)
            members.append(Member(study.id, model, _rows(study.id).copy(), lk))
        return fit_joint(members, parameters, x0=x0)


def fallback_parameters(names=None) -> dict:
    """Every global parameter any study's model maps to, at its prior (for a
    source whose machine or era no member shares: its costs at their priors)."""
    out = {}
    for name in names or studies.names():
        study = studies.get(name)
        if study.mechanism is type(None):
            continue
        model = study.model()
        for local, (g, f) in sharing.keys(study).items():
            if g not in out and local in model.params:
                out[g] = sharing.global_parameter(g, model, local)
            if f and f not in out:
                out[f] = sharing.global_parameter(f, model, local)
    return out
