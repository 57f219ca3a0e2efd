"""GET /api/v1/costs: what the caller's org spent on model calls, grouped by day, model, specialist or stage."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from llm.pricing import PRICE_VERSION
from runs.cost_selectors import GROUPS, CostWindow, cost_groups, cost_totals
from tenancy.auth import request_org

DEFAULT_WINDOW_DAYS = 30
# The days a window may name. Python's dates end at 0001-01-01 and 9999-12-31, so a window touching them overflowed
# while its default start or its end (the next midnight) was computed: a 500 for ?to=9999-12-31 (issue 12). No
# ledger row predates the service, and a window that far ahead holds nothing.
EARLIEST_DAY, LATEST_DAY = date(2000, 1, 1), date(2999, 12, 31)


def _in_range(value: date) -> date:
    if not EARLIEST_DAY <= value <= LATEST_DAY:
        raise serializers.ValidationError(f"{value} is out of range: a day from {EARLIEST_DAY} to {LATEST_DAY}")
    return value


class CostReportApi(APIView):
    class InputSerializer(serializers.Serializer):
        # "from" is a Python keyword, so the field is declared through the class namespace (a DRF idiom).
        locals()["from"] = serializers.DateField(required=False)
        to = serializers.DateField(required=False)
        group_by = serializers.ChoiceField(choices=GROUPS, required=False, default="day")

        def validate_to(self, value: date) -> date:
            return _in_range(value)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs.get("from") is not None:
                try:
                    _in_range(attrs["from"])
                except serializers.ValidationError as exc:
                    raise serializers.ValidationError({"from": exc.detail}) from exc
            today = timezone.localdate()
            date_to = attrs.get("to") or today
            date_from = attrs.get("from") or date_to - timedelta(days=DEFAULT_WINDOW_DAYS - 1)
            if date_from > date_to:
                raise serializers.ValidationError({"from": f"from ({date_from}) is after to ({date_to})"})
            days = (date_to - date_from).days + 1
            if days > settings.COSTS_MAX_RANGE_DAYS:
                raise serializers.ValidationError(
                    {"from": f"the window is {days} days; the limit is {settings.COSTS_MAX_RANGE_DAYS} "
                             "(COSTS_MAX_RANGE_DAYS)"})
            return {"window": CostWindow(date_from, date_to), "group_by": attrs.get("group_by") or "day"}

    class OutputSerializer(serializers.Serializer):
        class TotalsSerializer(serializers.Serializer):
            calls = serializers.IntegerField()
            prompt_tokens = serializers.IntegerField()
            completion_tokens = serializers.IntegerField()
            cached_tokens = serializers.IntegerField()
            cost_usd = serializers.DecimalField(max_digits=14, decimal_places=8, coerce_to_string=True)

        class GroupSerializer(TotalsSerializer):
            key = serializers.CharField()
            provider = serializers.CharField(required=False)

        locals()["from"] = serializers.DateField()
        to = serializers.DateField()
        group_by = serializers.CharField()
        currency = serializers.CharField()
        price_version = serializers.CharField()
        totals = TotalsSerializer()
        groups = GroupSerializer(many=True)

    @extend_schema(
        parameters=[
            OpenApiParameter("from", str, description="first day, YYYY-MM-DD (default: 30 days before `to`)"),
            OpenApiParameter("to", str, description="last day, YYYY-MM-DD, included (default: today)"),
            OpenApiParameter("group_by", str, enum=list(GROUPS), description="default: day"),
        ],
        responses={200: OutputSerializer},
    )
    def get(self, request: Request) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        window: CostWindow = params.validated_data["window"]
        group_by: str = params.validated_data["group_by"]
        org = request_org(request)
        report = {
            "from": window.date_from, "to": window.date_to, "group_by": group_by, "currency": "USD",
            "price_version": PRICE_VERSION, "totals": cost_totals(org=org, window=window),
            "groups": cost_groups(org=org, window=window, group_by=group_by),
        }
        return Response(self.OutputSerializer(report).data)
