"""Flag writes: the permission, the audit entry in the same transaction, and the resolver seeing the change."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction

from flags.models import FeatureFlag, FlagAudit, FlagOverride
from flags.overview import (
    GLOBAL_DEFAULT,
    ORG_OVERRIDE,
    SPECIALIST_OVERRIDE,
    org_flag_table,
    specialist_flag_table,
)
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from flags.selectors import flag_resolve, flags_snapshot
from flags.services import (
    flag_default_set,
    flag_override_set,
    flag_overrides_set_for_specialists,
    flags_sync_registry,
)
from tenancy.models import Specialist
from tests.admin.conftest import new_org, new_specialist

pytestmark = pytest.mark.django_db


def the_flag() -> FeatureFlag:
    return next(f for f in flags_sync_registry() if f.key == PROMPT_ASSEMBLER_ENABLED)


def test_switching_a_specialist_on_writes_the_override_and_one_audit_entry(superuser, specialist):
    flag = the_flag()

    entry = flag_override_set(flag=flag, specialist=specialist, enabled=True, actor=superuser, reason="pilot")

    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=specialist) is True
    assert entry is not None and FlagAudit.objects.count() == 1
    assert (entry.actor, entry.flag_key, entry.scope, entry.before, entry.after, entry.reason) == (
        superuser, PROMPT_ASSEMBLER_ENABLED, "specialist", None, True, "pilot")
    assert entry.scope_label == f"specialist {specialist.org.slug}/{specialist.slug}"


def test_clearing_an_override_is_audited_and_the_specialist_inherits_again(superuser, specialist):
    flag = the_flag()
    flag_override_set(flag=flag, org=specialist.org, enabled=True, actor=superuser)
    flag_override_set(flag=flag, specialist=specialist, enabled=False, actor=superuser)

    entry = flag_override_set(flag=flag, specialist=specialist, enabled=None, actor=superuser)

    assert entry is not None and (entry.before, entry.after) == (False, None)
    assert not FlagOverride.objects.filter(specialist=specialist).exists()
    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=specialist) is True  # from the org now


def test_setting_the_value_it_already_has_changes_nothing_and_logs_nothing(superuser, specialist):
    flag = the_flag()
    flag_override_set(flag=flag, specialist=specialist, enabled=True, actor=superuser)

    assert flag_override_set(flag=flag, specialist=specialist, enabled=True, actor=superuser) is None
    assert flag_override_set(flag=flag, org=specialist.org, enabled=None, actor=superuser) is None
    assert FlagAudit.objects.count() == 1


def test_staff_without_the_permission_cannot_change_a_flag_and_nothing_is_written(viewer, specialist):
    flag = the_flag()

    with pytest.raises(PermissionDenied, match="change_flag_overrides"):
        flag_override_set(flag=flag, specialist=specialist, enabled=True, actor=viewer)
    with pytest.raises(PermissionDenied):
        flag_default_set(flag=flag, enabled=True, actor=viewer)

    assert FlagOverride.objects.count() == 0 and FlagAudit.objects.count() == 0
    assert FeatureFlag.objects.get(pk=flag.pk).default_enabled is False


def test_the_dedicated_permission_alone_is_enough(db, specialist):
    from django.contrib.auth.models import Permission

    operator = User.objects.create_user("operator", is_staff=True)
    operator.user_permissions.add(Permission.objects.get(codename="change_flag_overrides"))
    operator = User.objects.get(pk=operator.pk)  # drop the permission cache

    assert flag_override_set(flag=the_flag(), specialist=specialist, enabled=True, actor=operator) is not None


def test_an_override_names_exactly_one_scope(superuser, specialist):
    with pytest.raises(ValueError, match="exactly one scope"):
        flag_override_set(flag=the_flag(), specialist=specialist, org=specialist.org, enabled=True, actor=superuser)
    with pytest.raises(ValueError, match="exactly one scope"):
        flag_override_set(flag=the_flag(), enabled=True, actor=superuser)


def test_the_audit_entry_rolls_back_with_the_change(superuser, specialist):
    flag = the_flag()

    with pytest.raises(RuntimeError), transaction.atomic():
        flag_override_set(flag=flag, specialist=specialist, enabled=True, actor=superuser)
        raise RuntimeError("the surrounding transaction fails")

    assert FlagOverride.objects.count() == 0 and FlagAudit.objects.count() == 0


def test_bulk_change_audits_only_the_specialists_that_changed(superuser, org):
    flag = the_flag()
    a, b, c = (new_specialist(org=org) for _ in range(3))
    flag_override_set(flag=flag, specialist=a, enabled=True, actor=superuser)

    entries = flag_overrides_set_for_specialists(flag=flag, specialists=[a, b, c], enabled=True, actor=superuser,
                                                 reason="rollout wave 1")

    assert {e.specialist for e in entries} == {b, c}
    assert all(e.reason == "rollout wave 1" for e in entries)
    assert all(flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=s) for s in (a, b, c))


def test_global_default_change_is_audited_with_its_before_and_after(superuser):
    flag = the_flag()

    entry = flag_default_set(flag=flag, enabled=True, actor=superuser, reason="general availability")

    assert entry is not None and (entry.scope, entry.before, entry.after) == ("global", False, True)
    assert FeatureFlag.objects.get(pk=flag.pk).default_enabled is True


def test_the_console_table_agrees_with_the_resolver_in_every_combination(superuser):
    """The flag screens compute effective values in bulk; they must say what flag_resolve says, for every mix of
    default, org override and specialist override."""
    flag = the_flag()
    specialists: list[Specialist] = []
    for default in (False, True):
        flag_default_set(flag=flag, enabled=default, actor=superuser)
        for org_value in (None, False, True):
            org = new_org()
            if org_value is not None:
                flag_override_set(flag=flag, org=org, enabled=org_value, actor=superuser)
            for own in (None, False, True):
                sp = new_specialist(org=org)
                if own is not None:
                    flag_override_set(flag=flag, specialist=sp, enabled=own, actor=superuser)
                specialists.append(sp)
        table = specialist_flag_table(specialists=specialists)
        for sp in specialists:
            effective = table[sp.pk][PROMPT_ASSEMBLER_ENABLED]
            assert effective.value is flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=sp), sp
            assert flags_snapshot(specialist=sp)[PROMPT_ASSEMBLER_ENABLED] is effective.value, sp  # a run's U1
            has_own = FlagOverride.objects.filter(specialist=sp).exists()
            has_org = FlagOverride.objects.filter(org=sp.org).exists()
            expected_source = SPECIALIST_OVERRIDE if has_own else ORG_OVERRIDE if has_org else GLOBAL_DEFAULT
            assert effective.source == expected_source
        specialists.clear()


def test_the_org_table_shows_the_org_override_or_the_default(superuser):
    flag = the_flag()
    on, plain = new_org(), new_org()
    flag_override_set(flag=flag, org=on, enabled=True, actor=superuser)

    table = org_flag_table(orgs=[on, plain])

    assert table[on.pk][PROMPT_ASSEMBLER_ENABLED].value is True
    assert table[on.pk][PROMPT_ASSEMBLER_ENABLED].source == ORG_OVERRIDE
    assert (table[plain.pk][PROMPT_ASSEMBLER_ENABLED].value, table[plain.pk][PROMPT_ASSEMBLER_ENABLED].source) == (
        False, GLOBAL_DEFAULT)


def test_a_runs_flag_snapshot_is_one_query_whatever_the_overrides(superuser, specialist, django_assert_num_queries):
    """U1 snapshots every flag on the run (engine/shell.py): one query, not three a flag (make bench)."""
    flag = the_flag()
    flag_override_set(flag=flag, org=specialist.org, enabled=True, actor=superuser)
    with django_assert_num_queries(1):
        assert flags_snapshot(specialist=specialist) == {PROMPT_ASSEMBLER_ENABLED: True}
