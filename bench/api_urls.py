"""The project's URLs plus one bare DRF endpoint, for bench/api_throughput.py only (bench/api_settings.py)."""

from __future__ import annotations

from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lexery.urls import urlpatterns as project_urlpatterns


class BareApi(APIView):
    """What DRF costs with nothing of ours: no key lookup, no throttle, no database; a small JSON body."""

    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes: list[type] = []

    def get(self, request: Request) -> Response:
        return Response({"status": "ok"})


urlpatterns = [*project_urlpatterns, path("bench/bare", BareApi.as_view())]
