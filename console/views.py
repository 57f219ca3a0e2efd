"""The console's own pages inside the Django admin: the run page, a snippet loaded from storage, the run actions
(cancel, re-run from a stage) and the dashboard. Thin: selectors shape, services write, templates draw."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from console.charts import STATUS_COLORS, latency_bars, stacked_columns
from console.dashboard import dashboard_window, runs_per_day_by_status, spend_per_day_by_model, stage_latency
from console.inspection import run_inspection, run_snippet_keys
from knowledge.snippets import SnippetStore
from runs.models import Run
from runs.services import RunInputError, RunStateError, run_cancel, run_rerun_from

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin


def _run_or_404(object_id: str) -> Run:
    try:
        pk = uuid.UUID(str(object_id))
    except ValueError as exc:
        raise Http404(f"{object_id!r} is not a run id") from exc
    run = Run.objects.select_related("org", "specialist", "context").filter(pk=pk).first()
    if run is None:
        raise Http404(f"no run {object_id}")
    return run


def _base_context(model_admin: ModelAdmin[Any], request: HttpRequest, title: str) -> dict[str, Any]:
    return {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, "title": title,
            "app_label": model_admin.opts.app_label}


def _run_url(run: Run | str) -> str:
    return reverse("admin:runs_run_change", args=[str(run.pk if isinstance(run, Run) else run)])


def run_page(model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str) -> HttpResponse:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    run = _run_or_404(object_id)
    data = run_inspection(run=run)
    rerun_of = (data["lineage"]["rerun_of"] or {}).get("run")
    return render(request, "admin/runs/run/inspect.html", {
        **_base_context(model_admin, request, f"Run {str(run.pk)[:8]}"),
        "run": run, "original": run, "i": data,
        "rerun_of_url": _run_url(rerun_of) if rerun_of else None,
        "can_act": model_admin.has_change_permission(request),
        "can_cancel": not run.is_terminal,
    })


def run_snippet(model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str) -> HttpResponse:
    """A chunk text from snippet storage, for a key this run referenced (nothing else can be opened this way)."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    run = _run_or_404(object_id)
    key = str(request.GET.get("key", ""))
    doc = run.context.document if hasattr(run, "context") else {}
    if key not in run_snippet_keys(doc):
        raise Http404(f"run {run.pk} does not reference the snippet {key!r}")
    try:
        text, error = SnippetStore().get(key), ""
    except Exception as exc:  # missing object, storage down: say so on the page, do not 500
        text, error = "", f"could not load {key!r} from snippet storage: {type(exc).__name__}: {exc}"
    ref = next((r for r in (doc.get("assembled_prompt") or {}).get("lawSourceRefs") or []
                if r.get("r2_key") == key), None)
    return render(request, "admin/runs/run/snippet.html", {
        **_base_context(model_admin, request, f"Snippet {key}"),
        "run": run, "original": run, "key": key, "text": text, "error": error, "ref": ref,
        "run_url": _run_url(run)}, status=404 if error else 200)


def _require_post_and_change(model_admin: ModelAdmin[Any], request: HttpRequest) -> HttpResponse | None:
    if request.method != "POST":
        return HttpResponseBadRequest("this action needs a POST")
    if not model_admin.has_change_permission(request):
        raise PermissionDenied
    return None


def run_cancel_action(model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str) -> HttpResponse:
    refused = _require_post_and_change(model_admin, request)
    if refused is not None:
        return refused
    run = _run_or_404(object_id)
    try:
        run_cancel(run=run)
    except RunStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Run {str(run.pk)[:8]} cancelled.")
    return HttpResponseRedirect(_run_url(run))


def run_rerun_action(model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str) -> HttpResponse:
    refused = _require_post_and_change(model_admin, request)
    if refused is not None:
        return refused
    run = _run_or_404(object_id)
    try:
        new = run_rerun_from(run=run, stage=str(request.POST.get("stage", "")))
    except (RunStateError, RunInputError) as exc:
        messages.error(request, str(exc))
        return HttpResponseRedirect(_run_url(run))
    messages.success(request, f"Re-run of {str(run.pk)[:8]} from {request.POST.get('stage')} started as "
                              f"{str(new.pk)[:8]}; the old run stays, marked superseded.")
    return HttpResponseRedirect(_run_url(new))


def dashboard(model_admin: ModelAdmin[Any], request: HttpRequest) -> HttpResponse:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    try:
        days_asked = int(request.GET.get("days", 0)) or None
    except ValueError:
        return HttpResponseBadRequest("days must be a whole number of days")
    since, days = dashboard_window(days=days_asked)
    labels = [d.isoformat() for d in days]
    runs = runs_per_day_by_status(since=since, days=days)
    spend, spend_totals = spend_per_day_by_model(since=since, days=days)
    latency = stage_latency(since=since)
    return render(request, "admin/runs/run/dashboard.html", {
        **_base_context(model_admin, request, "Runs dashboard"),
        "days": len(days), "since": since,
        "runs_chart": stacked_columns(labels, runs, title="runs per day by status", colors=STATUS_COLORS),
        "latency_chart": latency_bars(latency, title="stage latency p50 / p95"),
        "spend_chart": stacked_columns(labels, spend, title="spend per day by model (USD)", unit="$"),
        "spend_totals": spend_totals,
        "run_totals": {status: int(sum(v)) for status, v in runs.items()},
        "changelist_url": reverse("admin:runs_run_changelist"),
    })
