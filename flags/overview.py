"""Reads for the flag screens: the effective value of every flag for a page of specialists or orgs, and where it
comes from, in two queries. The precedence is ``flag_resolve``'s (specialist > org > global > code default); a
test holds the two to the same answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flags.models import FeatureFlag, FlagOverride
from flags.registry import KNOWN_FLAGS
from tenancy.models import Org, Specialist

SPECIALIST_OVERRIDE = "specialist override"
ORG_OVERRIDE = "org override"
GLOBAL_DEFAULT = "global default"
CODE_DEFAULT = "code default"  # the registry's default: the flag has no row yet


@dataclass(frozen=True)
class Effective:
    value: bool
    source: str
    own_override: bool | None  # the override at the scope of the row (None: it inherits)


def flag_keys() -> list[str]:
    """The flags the code knows, then any other flag rows, in a stable order."""
    extra = sorted(set(FeatureFlag.objects.values_list("key", flat=True)) - set(KNOWN_FLAGS))
    return [*KNOWN_FLAGS, *extra]


def _defaults() -> dict[str, tuple[bool, str]]:
    out = {key: (default, CODE_DEFAULT) for key, (default, _) in KNOWN_FLAGS.items()}
    out.update({key: (value, GLOBAL_DEFAULT)
                for key, value in FeatureFlag.objects.values_list("key", "default_enabled")})
    return out


def specialist_flag_table(*, specialists: Sequence[Specialist]) -> dict[int, dict[str, Effective]]:
    defaults = _defaults()
    org_ids = {sp.org_id for sp in specialists}
    by_org: dict[tuple[int, str], bool] = {}
    by_specialist: dict[tuple[int, str], bool] = {}
    rows = FlagOverride.objects.filter(org_id__in=org_ids) | FlagOverride.objects.filter(
        specialist_id__in=[sp.pk for sp in specialists])
    for org_id, specialist_id, key, enabled in rows.values_list("org_id", "specialist_id", "flag__key", "enabled"):
        if specialist_id is not None:
            by_specialist[(specialist_id, key)] = enabled
        else:
            by_org[(org_id, key)] = enabled
    table: dict[int, dict[str, Effective]] = {}
    for sp in specialists:
        row: dict[str, Effective] = {}
        for key, (default, default_source) in defaults.items():
            own = by_specialist.get((sp.pk, key))
            if own is not None:
                row[key] = Effective(own, SPECIALIST_OVERRIDE, own)
            elif (sp.org_id, key) in by_org:
                row[key] = Effective(by_org[(sp.org_id, key)], ORG_OVERRIDE, None)
            else:
                row[key] = Effective(default, default_source, None)
        table[sp.pk] = row
    return table


def org_flag_table(*, orgs: Sequence[Org]) -> dict[int, dict[str, Effective]]:
    defaults = _defaults()
    overrides = {(org_id, key): enabled for org_id, key, enabled in FlagOverride.objects.filter(
        org_id__in=[o.pk for o in orgs]).values_list("org_id", "flag__key", "enabled")}
    table: dict[int, dict[str, Effective]] = {}
    for org in orgs:
        row: dict[str, Effective] = {}
        for key, (default, default_source) in defaults.items():
            own = overrides.get((org.pk, key))
            row[key] = (Effective(own, ORG_OVERRIDE, own) if own is not None
                        else Effective(default, default_source, None))
        table[org.pk] = row
    return table

