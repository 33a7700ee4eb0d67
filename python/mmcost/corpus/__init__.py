"""Every bundled source fitted together, each left out in turn, and bands that cover what they claim.

- :func:`fit_all`: one joint fit of the bundled sources, a cost shared by
  every source that exercises it (:mod:`.sharing` says which are shared);
- :mod:`.joint`: the joint fit of any models (:func:`fit_joint`);
- :mod:`.loso`: leave-one-source-out, its table and calibration;
- :mod:`.discrepancy`: the structural error per metric family, added to bands.
"""

from .joint import JointFit, Link, Member, fit_joint
from .sources import fit_all

__all__ = ["JointFit", "Link", "Member", "fit_all", "fit_joint"]
