"""The flag console: the global defaults, the effective value per org and per specialist with where it comes from,
one-click toggles and bulk actions, and the read-only audit. Every write goes through ``flags.services``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Model, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe

from flags.models import CHANGE_PERMISSION, FeatureFlag, FlagAudit, FlagOverride, OrgFlags, SpecialistFlags
from flags.overview import Effective, flag_keys, org_flag_table, specialist_flag_table
from flags.services import (
    flag_default_set,
    flag_override_set,
    flag_overrides_set_for_specialists,
    flags_sync_registry,
)
from tenancy.admin import SpecialistListFilter
from tenancy.models import Org, Specialist

VIEW_PERMISSION = "flags.view_featureflag"
VALUES: dict[str, bool | None] = {"on": True, "off": False, "inherit": None}


def can_change_flags(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.has_perm(CHANGE_PERMISSION))


def can_view_flags(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_staff
                and (request.user.has_perm(VIEW_PERMISSION) or request.user.has_perm(CHANGE_PERMISSION)))


def state_badge(value: bool | None) -> SafeString:
    if value is None:
        return mark_safe('<span class="flag-state inherit">inherit</span>')  # a constant, nothing to escape
    return format_html('<span class="flag-state {}">{}</span>', "on" if value else "off", "ON" if value else "OFF")


class ReadOnlyAdmin(admin.ModelAdmin):
    """Screens that only show: flags change through flags/services.py (audited), never through a form."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ReasonActionForm(ActionForm):
    """The admin's action bar with an optional reason, kept in the audit entry of every change it makes."""

    reason = forms.CharField(required=False, max_length=500, label="Reason (optional)",
                             widget=forms.TextInput(attrs={"size": 28, "placeholder": "why (kept in the audit)"}))


def _reason(request: HttpRequest) -> str:
    return str(request.POST.get("reason", "")).strip()[:500]


class FlagScreen(ReadOnlyAdmin):
    """One row per org or specialist, one column per flag: the effective value, its source, and one-click buttons
    that set this row's override. Rows are read-only otherwise (no change form, no add, no delete)."""

    scope = "specialist"
    action_form = ReasonActionForm
    list_display_links = None
    list_per_page = 50
    change_list_template = "admin/flags/flag_screen_change_list.html"

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return can_view_flags(request)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return can_view_flags(request)

    # --- effective values, computed once per page (kept on the request: the ModelAdmin is shared by threads) --
    def table_for(self, objs: list[Any]) -> dict[int, dict[str, Effective]]:
        raise NotImplementedError

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        extra = {"can_change_flags": can_change_flags(request), "flag_scope": self.scope, **(extra_context or {})}
        return super().changelist_view(request, extra)

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        cl = super().get_changelist_instance(request)
        request._flag_table = self.table_for(list(cl.result_list))  # type: ignore[attr-defined]  # per request
        return cl

    def _effective(self, request: HttpRequest, obj: Any, key: str) -> Effective:
        table: dict[int, dict[str, Effective]] = getattr(request, "_flag_table", {})
        if obj.pk not in table:
            table.update(self.table_for([obj]))
        return table[obj.pk][key]

    def _cell(self, key: str, request: HttpRequest) -> Callable[[Any], SafeString]:
        can_change = can_change_flags(request)
        toggle = f"admin:{self.opts.app_label}_{self.opts.model_name}_toggle"

        def cell(obj: Any) -> SafeString:
            eff = self._effective(request, obj, key)
            html = format_html('{} <span class="flag-source">{}</span>', state_badge(eff.value), eff.source)
            if not can_change:
                return html
            url = reverse(toggle, args=[obj.pk])
            flip = "off" if eff.value else "on"
            buttons = [format_html('<button type="submit" class="flag-btn flag-btn-{}" formaction="{}" name="set" '
                                   'value="{}:{}" data-flag="{}">Turn {}</button>',
                                   flip, url, key, flip, key, flip.upper())]
            if eff.own_override is not None:
                buttons.append(format_html('<button type="submit" class="flag-btn flag-btn-inherit" formaction="{}" '
                                           'name="set" value="{}:inherit">Inherit</button>', url, key))
            return format_html("{} {}", html, format_html_join("", "{}", ((b,) for b in buttons)))

        cell.short_description = key  # type: ignore[attr-defined]  # Django reads the column title from it
        return cell

    def get_list_display(self, request: HttpRequest) -> Any:
        return [*self.base_columns, *(self._cell(key, request) for key in flag_keys()), "audit_link"]

    base_columns: tuple[str, ...] = ()

    @admin.display(description="audit")
    def audit_link(self, obj: Any) -> SafeString:
        url = reverse("admin:flags_flagaudit_changelist") + f"?{self.scope}__id__exact={obj.pk}"
        return format_html('<a href="{}">history</a>', url)

    # --- writes ------------------------------------------------------------------------------------------
    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}_toggle"
        extra = [path("<int:object_id>/toggle/", self.admin_site.admin_view(self.toggle_view), name=name)]
        return extra + super().get_urls()

    def set_override(self, obj: Any, flag: FeatureFlag, value: bool | None, request: HttpRequest) -> FlagAudit | None:
        raise NotImplementedError

    def toggle_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseBadRequest("toggle a flag with POST")
        if not can_change_flags(request):
            raise PermissionDenied
        key, _, value = str(request.POST.get("set", "")).partition(":")
        if value not in VALUES:
            return HttpResponseBadRequest(f"value must be one of {', '.join(VALUES)}, got {value!r}")
        flags_sync_registry()
        flag = FeatureFlag.objects.filter(key=key).first()
        if flag is None:
            return HttpResponseBadRequest(f"unknown flag {key!r}")
        obj = get_object_or_404(self.model, pk=object_id)
        entry = self.set_override(obj, flag, VALUES[value], request)
        if entry is None:
            self.message_user(request, f"{key} for {obj} was already {value}; nothing changed.", messages.INFO)
        else:
            self.message_user(request, f"{key} for {entry.scope_label}: {_word(entry.before)} → "
                                       f"{_word(entry.after)} (audited).", messages.SUCCESS)
        back = request.META.get("HTTP_REFERER", "")
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            back = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")
        return HttpResponseRedirect(back)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        if not can_change_flags(request):
            return {}
        actions: dict[str, Any] = {}
        for key in flag_keys():
            for value, label in (("on", "override ON"), ("off", "override OFF"), ("inherit", "clear override")):
                name = f"set_{key}_{value}"
                actions[name] = (self._bulk(key, value), name, f"{key}: {label} for the selected {self.scope}s")
        return actions

    def _bulk(self, key: str, value: str) -> Callable[[Any, HttpRequest, QuerySet[Any]], None]:
        def action(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> None:
            flags_sync_registry()
            flag = FeatureFlag.objects.get(key=key)
            changed = self.bulk_set(flag, list(queryset), VALUES[value], request)
            self.message_user(request, f"{key} set to {value} for {changed} {self.scope}(s); "
                                       f"{queryset.count() - changed} already were (audited).", messages.SUCCESS)

        return action

    def bulk_set(self, flag: FeatureFlag, objs: list[Any], value: bool | None, request: HttpRequest) -> int:
        raise NotImplementedError


def _word(value: bool | None) -> str:
    return "inherit" if value is None else ("ON" if value else "OFF")


@admin.register(SpecialistFlags)
class SpecialistFlagsAdmin(FlagScreen):
    scope = "specialist"
    base_columns = ("specialist", "name", "org")
    list_filter = ("org",)
    search_fields = ("slug", "name", "org__slug")
    list_select_related = ("org",)

    @admin.display(description="specialist", ordering="slug")
    def specialist(self, obj: Specialist) -> str:
        return str(obj)

    def table_for(self, objs: list[Any]) -> dict[int, dict[str, Effective]]:
        return specialist_flag_table(specialists=objs)

    def set_override(self, obj: Any, flag: FeatureFlag, value: bool | None, request: HttpRequest) -> FlagAudit | None:
        specialist = Specialist.objects.select_related("org").get(pk=obj.pk)
        return flag_override_set(flag=flag, specialist=specialist, enabled=value, actor=request.user,
                                 reason=_reason(request))

    def bulk_set(self, flag: FeatureFlag, objs: list[Any], value: bool | None, request: HttpRequest) -> int:
        specialists = list(Specialist.objects.select_related("org").filter(pk__in=[o.pk for o in objs]))
        return len(flag_overrides_set_for_specialists(flag=flag, specialists=specialists, enabled=value,
                                                      actor=request.user, reason=_reason(request)))


@admin.register(OrgFlags)
class OrgFlagsAdmin(FlagScreen):
    scope = "org"
    base_columns = ("slug", "name")
    search_fields = ("slug", "name")

    def table_for(self, objs: list[Any]) -> dict[int, dict[str, Effective]]:
        return org_flag_table(orgs=objs)

    def set_override(self, obj: Any, flag: FeatureFlag, value: bool | None, request: HttpRequest) -> FlagAudit | None:
        return flag_override_set(flag=flag, org=Org.objects.get(pk=obj.pk), enabled=value, actor=request.user,
                                 reason=_reason(request))

    def bulk_set(self, flag: FeatureFlag, objs: list[Any], value: bool | None, request: HttpRequest) -> int:
        changed = 0
        for org in Org.objects.filter(pk__in=[o.pk for o in objs]):
            changed += flag_override_set(flag=flag, org=org, enabled=value, actor=request.user,
                                         reason=_reason(request)) is not None
        return changed


@admin.register(FeatureFlag)
class FeatureFlagAdmin(admin.ModelAdmin):
    """The global defaults. The default changes only through the actions (audited, permission-checked)."""

    list_display = ("key", "default_badge", "overrides", "description", "updated_at")
    readonly_fields = ("key", "default_badge", "overrides_table", "recent_changes")
    fields = ("key", "description", "default_badge", "overrides_table", "recent_changes")
    action_form = ReasonActionForm
    actions = ("default_on", "default_off")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # rows come from the code's registry (flags/registry.py)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if can_change_flags(request):
            flags_sync_registry()
        return super().changelist_view(request, extra_context)

    def get_queryset(self, request: HttpRequest) -> QuerySet[FeatureFlag]:
        def count(org: bool, enabled: bool) -> Count:
            return Count("overrides", filter=Q(overrides__org__isnull=not org, overrides__enabled=enabled))

        return super().get_queryset(request).annotate(org_on=count(True, True), org_off=count(True, False),
                                                      specialist_on=count(False, True),
                                                      specialist_off=count(False, False))

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        return super().get_actions(request) if can_change_flags(request) else {}

    @admin.display(description="global default")
    def default_badge(self, obj: FeatureFlag) -> SafeString:
        return state_badge(obj.default_enabled)

    @admin.display(description="overrides")
    def overrides(self, obj: FeatureFlag) -> str:
        parts = [f"{getattr(obj, k)} {k.replace('_', ' ')}"
                 for k in ("org_on", "org_off", "specialist_on", "specialist_off") if getattr(obj, k, 0)]
        return ", ".join(parts) or "none"

    @admin.display(description="overrides (org and specialist)")
    def overrides_table(self, obj: FeatureFlag) -> SafeString:
        rows = FlagOverride.objects.filter(flag=obj).select_related("org", "specialist__org")
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", (
            ("org" if r.org_id else "specialist", r.org.slug if r.org else str(r.specialist), state_badge(r.enabled))
            for r in rows))
        links = format_html('<p><a href="{}">per specialist</a> · <a href="{}">per org</a></p>',
                            reverse("admin:flags_specialistflags_changelist"),
                            reverse("admin:flags_orgflags_changelist"))
        if not body:
            return format_html("<p>No overrides: everyone gets the global default.</p>{}", links)
        return format_html('<table><tr><th>scope</th><th>who</th><th>value</th></tr>{}</table>{}', body, links)

    @admin.display(description="recent changes")
    def recent_changes(self, obj: FeatureFlag) -> SafeString:
        rows = FlagAudit.objects.filter(flag_key=obj.key)[:20]
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} → {}</td><td>{}</td></tr>", (
            (a.created_at.strftime("%Y-%m-%d %H:%M:%S"), a.actor_username, a.scope_label, _word(a.before),
             _word(a.after), a.reason) for a in rows))
        if not body:
            return mark_safe("<p>No changes recorded.</p>")  # a constant
        return format_html("<table><tr><th>when</th><th>who</th><th>scope</th><th>change</th><th>reason</th></tr>"
                           "{}</table>", body)

    def _set_default(self, request: HttpRequest, queryset: QuerySet[FeatureFlag], enabled: bool) -> None:
        changed = sum(flag_default_set(flag=flag, enabled=enabled, actor=request.user,
                                       reason=_reason(request)) is not None for flag in queryset)
        self.message_user(request, f"global default set {'ON' if enabled else 'OFF'} for {changed} flag(s) "
                                   "(audited).", messages.SUCCESS)

    @admin.action(description="Set the global default ON for the selected flags")
    def default_on(self, request: HttpRequest, queryset: QuerySet[FeatureFlag]) -> None:
        self._set_default(request, queryset, True)

    @admin.action(description="Set the global default OFF for the selected flags")
    def default_off(self, request: HttpRequest, queryset: QuerySet[FeatureFlag]) -> None:
        self._set_default(request, queryset, False)


@admin.register(FlagOverride)
class FlagOverrideAdmin(ReadOnlyAdmin):
    """Read-only here: overrides change on the per-org and per-specialist screens, where they are audited."""

    list_display = ("flag", "org", "specialist", "enabled", "updated_at")
    list_filter = ("flag", "enabled")



@admin.register(FlagAudit)
class FlagAuditAdmin(ReadOnlyAdmin):
    """The trail: who changed which flag where, from what to what, and why. Nobody edits or deletes it here."""

    list_display = ("when", "who", "flag_name", "where", "change", "reason")
    list_filter = ("flag_key", "scope", "actor_username", "org", ("specialist", SpecialistListFilter))
    search_fields = ("flag_key", "scope_label", "actor_username", "reason")
    date_hierarchy = "created_at"

    @admin.display(description="when", ordering="created_at")
    def when(self, obj: FlagAudit) -> str:
        return obj.created_at.strftime("%Y-%m-%d %H:%M:%S UTC")

    @admin.display(description="who", ordering="actor_username")
    def who(self, obj: FlagAudit) -> str:
        return obj.actor_username

    @admin.display(description="flag", ordering="flag_key")
    def flag_name(self, obj: FlagAudit) -> str:
        return obj.flag_key

    @admin.display(description="scope", ordering="scope_label")
    def where(self, obj: FlagAudit) -> str:
        return obj.scope_label

    @admin.display(description="before → after")
    def change(self, obj: FlagAudit) -> SafeString:
        return format_html("{} → {}", state_badge(obj.before), state_badge(obj.after))

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return can_view_flags(request) or super().has_view_permission(request, obj)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return can_view_flags(request) or super().has_module_permission(request)

