"""The flag screens through the admin, as an operator meets them: effective values and sources, a one-click toggle,
bulk actions with a reason, the read-only audit, and staff who can look but not change."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from flags.models import FeatureFlag, FlagAudit, FlagOverride
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from flags.selectors import flag_resolve
from tests.admin.conftest import PASSWORD, new_specialist

pytestmark = pytest.mark.django_db
SCREEN = "admin:flags_specialistflags_changelist"


def login(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def toggle(client: Client, specialist, value: str, reason: str = ""):
    return client.post(reverse("admin:flags_specialistflags_toggle", args=[specialist.pk]),
                       {"set": f"{PROMPT_ASSEMBLER_ENABLED}:{value}", "reason": reason},
                       HTTP_REFERER="http://testserver" + reverse(SCREEN))


def test_the_specialist_screen_shows_the_effective_value_and_where_it_comes_from(superuser, specialist, flags_row):
    page = login(superuser).get(reverse(SCREEN)).content.decode()

    assert specialist.slug in page and "глобальне типове значення" in page  # the console speaks Ukrainian
    assert f'value="{PROMPT_ASSEMBLER_ENABLED}:on"' in page  # the one-click button


def test_one_click_turns_the_flag_on_for_that_specialist_only_and_audits_it(superuser, specialist, flags_row):
    other = new_specialist(org=specialist.org)
    client = login(superuser)

    response = toggle(client, specialist, "on", reason="pilot for labour")

    assert response.status_code == 302 and response["Location"].endswith(reverse(SCREEN))
    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=specialist) is True
    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=other) is False
    entry = FlagAudit.objects.get()
    assert (entry.actor_username, entry.before, entry.after, entry.reason) == ("root", None, True, "pilot for labour")
    page = client.get(reverse(SCREEN)).content.decode()
    assert "перевизначення спеціаліста" in page
    audit = client.get(reverse("admin:flags_flagaudit_changelist")).content.decode()
    assert "pilot for labour" in audit and f"specialist {specialist.org.slug}/{specialist.slug}" in audit


def test_a_bulk_action_switches_a_selection_and_keeps_the_reason(superuser, org, flags_row):
    chosen = [new_specialist(org=org) for _ in range(3)]
    left_out = new_specialist(org=org)

    response = login(superuser).post(reverse(SCREEN), {
        "action": f"set_{PROMPT_ASSEMBLER_ENABLED}_on", "_selected_action": [s.pk for s in chosen],
        "reason": "wave 1", "index": 0})

    assert response.status_code == 302
    assert all(flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=s) for s in chosen)
    assert not flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=left_out)
    assert list(FlagAudit.objects.values_list("reason", flat=True)) == ["wave 1"] * 3


def test_staff_without_the_permission_can_look_but_not_change(viewer, specialist, flags_row):
    client = login(viewer)

    page = client.get(reverse(SCREEN))
    refused = toggle(client, specialist, "on")
    bulk = client.post(reverse(SCREEN), {"action": f"set_{PROMPT_ASSEMBLER_ENABLED}_on",
                                         "_selected_action": [specialist.pk], "index": 0})

    assert page.status_code == 200 and specialist.slug in page.content.decode()
    html = page.content.decode()
    assert "Увімкнути</button>" not in html and "переглядати, але не змінювати" in html
    assert refused.status_code == 403
    assert bulk.status_code in (200, 302)  # no such action for this user: the admin ignores it
    assert FlagOverride.objects.count() == 0 and FlagAudit.objects.count() == 0
    assert client.get(reverse("admin:flags_flagaudit_changelist")).status_code == 200
    assert client.get(reverse("admin:flags_featureflag_changelist")).status_code == 200


def test_the_audit_is_read_only_even_for_a_superuser(superuser, specialist, flags_row):
    client = login(superuser)
    toggle(client, specialist, "on")
    entry = FlagAudit.objects.get()

    change = client.post(reverse("admin:flags_flagaudit_change", args=[entry.pk]), {"reason": "rewritten"})
    delete = client.post(reverse("admin:flags_flagaudit_delete", args=[entry.pk]), {"post": "yes"})

    assert client.get(reverse("admin:flags_flagaudit_add")).status_code == 403
    assert change.status_code == 403 and delete.status_code == 403
    assert FlagAudit.objects.get(pk=entry.pk).reason == ""


def test_a_bad_toggle_gets_a_400_with_a_sentence(superuser, specialist, flags_row):
    client = login(superuser)

    bad_value = client.post(reverse("admin:flags_specialistflags_toggle", args=[specialist.pk]),
                            {"set": f"{PROMPT_ASSEMBLER_ENABLED}:maybe"})
    bad_flag = client.post(reverse("admin:flags_specialistflags_toggle", args=[specialist.pk]),
                           {"set": "no_such_flag:on"})

    assert bad_value.status_code == 400 and b"value must be one of on, off, inherit" in bad_value.content
    assert bad_flag.status_code == 400 and b"unknown flag 'no_such_flag'" in bad_flag.content


def test_the_org_screen_toggles_the_org_level(superuser, specialist, flags_row):
    client = login(superuser)

    client.post(reverse("admin:flags_orgflags_toggle", args=[specialist.org.pk]),
                {"set": f"{PROMPT_ASSEMBLER_ENABLED}:on"})

    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=specialist) is True
    assert FlagAudit.objects.get().scope == "org"
    page = client.get(reverse(SCREEN)).content.decode()
    assert "перевизначення організації" in page


def test_the_global_default_changes_through_an_audited_action(superuser, flags_row):
    flag = FeatureFlag.objects.get(key=PROMPT_ASSEMBLER_ENABLED)
    client = login(superuser)

    client.post(reverse("admin:flags_featureflag_changelist"),
                {"action": "default_on", "_selected_action": [flag.pk], "reason": "GA", "index": 0})
    detail = client.get(reverse("admin:flags_featureflag_change", args=[flag.pk])).content.decode()

    assert FeatureFlag.objects.get(pk=flag.pk).default_enabled is True
    assert FlagAudit.objects.get().scope == "global"
    assert "GA" in detail  # the flag's page lists its recent changes
