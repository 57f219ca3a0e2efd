from django.contrib import admin
from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from runs.apis import RunCreateApi, RunDetailApi, RunEventsApi

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/runs", RunCreateApi.as_view(), name="run-create"),
    path("api/v1/runs/<str:run_id>", RunDetailApi.as_view(), name="run-detail"),
    path("api/v1/runs/<str:run_id>/events", RunEventsApi.as_view(), name="run-events"),
    path("api/schema/", SpectacularAPIView.as_view(permission_classes=[], authentication_classes=[]),
         name="schema"),
]
