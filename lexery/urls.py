from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView

from documents.apis import DocumentDetailApi, DocumentListCreateApi
from knowledge.apis import DoclistResolveApi
from lexery.api_errors import ApiNotFound
from memory.apis import MemoryDetailApi, MemoryListCreateApi
from runs.apis import RunCancelApi, RunClarificationApi, RunCreateApi, RunDetailApi, RunEventsApi
from runs.cost_apis import CostReportApi

urlpatterns = [
    path("", include("ops.urls")),  # /healthz, /readyz, /metrics
    path("admin/", admin.site.urls),
    path("api/v1/runs", RunCreateApi.as_view(), name="run-create"),
    path("api/v1/runs/<str:run_id>", RunDetailApi.as_view(), name="run-detail"),
    path("api/v1/runs/<str:run_id>/events", RunEventsApi.as_view(), name="run-events"),
    path("api/v1/runs/<str:run_id>/clarification", RunClarificationApi.as_view(), name="run-clarification"),
    path("api/v1/runs/<str:run_id>/cancel", RunCancelApi.as_view(), name="run-cancel"),
    path("api/v1/costs", CostReportApi.as_view(), name="cost-report"),
    path("api/v1/doclist/resolve", DoclistResolveApi.as_view(), name="doclist-resolve"),
    path("api/v1/memory", MemoryListCreateApi.as_view(), name="memory-list"),
    path("api/v1/memory/<str:item_id>", MemoryDetailApi.as_view(), name="memory-detail"),
    path("api/v1/documents", DocumentListCreateApi.as_view(), name="document-list"),
    path("api/v1/documents/<str:document_id>", DocumentDetailApi.as_view(), name="document-detail"),
    path("api/schema/", SpectacularAPIView.as_view(permission_classes=[], authentication_classes=[]),
         name="schema"),
    re_path(r"^api/", ApiNotFound.as_view(), name="api-not-found"),  # last: only what nothing above matched
]
