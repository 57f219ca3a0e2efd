"""Flag resolution. Any error resolves to False: a broken flag table never switches a feature on."""

from __future__ import annotations

import logging

from django.db.models import OuterRef, Subquery

from flags.models import FeatureFlag, FlagOverride
from flags.registry import KNOWN_FLAGS
from tenancy.models import Specialist

logger = logging.getLogger(__name__)


def flag_resolve(*, key: str, specialist: Specialist) -> bool:
    try:
        specific = FlagOverride.objects.filter(flag__key=key, specialist=specialist).first()
        if specific is not None:
            return specific.enabled
        org_level = FlagOverride.objects.filter(flag__key=key, org_id=specialist.org_id).first()
        if org_level is not None:
            return org_level.enabled
        flag = FeatureFlag.objects.filter(key=key).first()
        if flag is not None:
            return flag.default_enabled
        return KNOWN_FLAGS.get(key, (False, ""))[0]
    except Exception:  # fail-safe by design (seed 004): a resolver error means OFF
        logger.exception("flag resolution failed; resolving to False", extra={"flag": key})
        return False


def flags_snapshot(*, specialist: Specialist) -> dict[str, bool]:
    """Every known flag as ``flag_resolve`` answers it, in one query: a run's first stage snapshots them all, and
    three queries a flag were a share of the engine's overhead (make bench). Any error: every flag OFF."""
    try:
        own = FlagOverride.objects.filter(flag=OuterRef("pk"), specialist=specialist).values("enabled")[:1]
        org = FlagOverride.objects.filter(flag=OuterRef("pk"), org_id=specialist.org_id).values("enabled")[:1]
        rows = (FeatureFlag.objects.filter(key__in=list(KNOWN_FLAGS))
                .annotate(own=Subquery(own), org=Subquery(org))
                .values_list("key", "own", "org", "default_enabled"))
        # an override always has its flag's row (a foreign key): a flag without one takes the code's default
        stored = {key: next(v for v in values if v is not None) for key, *values in rows}
    except Exception:  # fail-safe by design (seed 004), as flag_resolve
        logger.exception("flag resolution failed; resolving every flag to False")
        return dict.fromkeys(KNOWN_FLAGS, False)
    return {key: stored.get(key, default) for key, (default, _) in KNOWN_FLAGS.items()}
