"""The project's URLs plus two baselines, for bench/api_throughput.py only (bench/api_settings.py)."""

from __future__ import annotations

import uuid

from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lexery.errors import NotFound
from lexery.urls import urlpatterns as project_urlpatterns
from runs.models import Run
from tenancy.auth import request_org


class BareApi(APIView):
    """What DRF costs with nothing of ours: no key lookup, no throttle, no database; a small JSON body."""

    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes: list[type] = []

    def get(self, request: Request) -> Response:
        return Response({"status": "ok"})


class KeyedRowApi(APIView):
    """What any endpoint of ours costs at the least: the run API's key check, permission and throttle (the project's
    defaults, as the run views have them) and one row of the key's org read by id."""

    def get(self, request: Request, run_id: uuid.UUID) -> Response:
        row = Run.objects.filter(org=request_org(request), pk=run_id).values("id", "status").first()
        if row is None:
            raise NotFound("run not found")
        return Response({"id": str(row["id"]), "status": row["status"]})


urlpatterns = [*project_urlpatterns, path("bench/bare", BareApi.as_view()),
               path("bench/keyed/<uuid:run_id>", KeyedRowApi.as_view())]
