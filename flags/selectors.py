"""Flag resolution. Any error resolves to False: a broken flag table never switches a feature on."""

from __future__ import annotations

import logging

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
    return {key: flag_resolve(key=key, specialist=specialist) for key in KNOWN_FLAGS}
