"""The REST API: one view per operation, nested input/output serializers, access through the org selectors."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.selectors import run_detail_get_for_org, run_events_view, run_get_for_org, run_view
from runs.services import (
    run_cancel,
    run_clarification_answer,
    run_create,
    specialist_get_for_org,
)
from tenancy.auth import request_org


class CitationSerializer(serializers.Serializer):
    act_nreg = serializers.CharField(allow_null=True)
    article = serializers.CharField(allow_null=True)
    article_ref = serializers.CharField()


class RunOutputSerializer(serializers.Serializer):
    class AnswerSerializer(serializers.Serializer):
        text = serializers.CharField()
        citations = CitationSerializer(many=True)

    class CostSerializer(serializers.Serializer):
        usd = serializers.CharField()
        prompt_tokens = serializers.IntegerField()
        completion_tokens = serializers.IntegerField()
        cached_tokens = serializers.IntegerField()

    id = serializers.UUIDField()
    status = serializers.CharField()
    stage = serializers.CharField(allow_null=True)
    question = serializers.CharField()
    specialist = serializers.CharField()
    user_ref = serializers.CharField(allow_blank=True)
    conversation_id = serializers.CharField(allow_blank=True)
    answer = AnswerSerializer(allow_null=True)
    # "source" and "label" are attributes of a DRF field too: declared through a dict, not as class attributes
    evidence = inline_serializer("RunEvidence", many=True, fields={
        "rank": serializers.IntegerField(),
        "source": serializers.CharField(help_text="lldbi (law), memory, doc or history"),
        "score": serializers.FloatField(),
        "article_ref": serializers.CharField(allow_null=True, help_text="law items: the cited article"),
        "label": serializers.CharField(allow_null=True, help_text="other items: their handle in the prompt"),
        "heading": serializers.CharField(allow_null=True),
    })
    support_level = serializers.CharField(allow_null=True)
    coverage_gap = serializers.JSONField(allow_null=True)
    clarification = serializers.JSONField(allow_null=True)
    limits = serializers.JSONField()
    error = serializers.CharField(allow_null=True, help_text="why the run failed, a sentence for a person")
    error_code = serializers.CharField(allow_null=True, help_text="cost_cap_exceeded, org_spend_cap_exceeded, "
                                                                  "model_unavailable, stage_output_refused, "
                                                                  "stage_failed or run_failed")
    cost = CostSerializer()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class RunCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        question = serializers.CharField(allow_blank=True, trim_whitespace=True)
        specialist = serializers.SlugField()
        user_ref = serializers.CharField(required=False, allow_blank=True, default="",
                                         help_text="the org's id for its end user: scopes memory and documents")
        conversation_id = serializers.CharField(required=False, allow_blank=True, default="",
                                                help_text="earlier runs of the same user and conversation are "
                                                          "history")

    @extend_schema(request=InputSerializer, responses={202: RunOutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        specialist = specialist_get_for_org(org=request_org(request), slug=data.validated_data["specialist"])
        run = run_create(org=request_org(request), specialist=specialist, question=data.validated_data["question"],
                         user_ref=data.validated_data["user_ref"],
                         conversation_id=data.validated_data["conversation_id"])
        # run_create returns the run as stored (its specialist and context attached): no read back
        return Response(RunOutputSerializer(run_view(run=run, just_created=True)).data,
                        status=status.HTTP_202_ACCEPTED)


class RunDetailApi(APIView):
    @extend_schema(responses={200: RunOutputSerializer})
    def get(self, request: Request, run_id: str) -> Response:
        run = run_detail_get_for_org(org=request_org(request), run_id=run_id)
        return Response(RunOutputSerializer(run_view(run=run)).data)


class RunEventsApi(APIView):
    class OutputSerializer(serializers.Serializer):
        step = serializers.IntegerField()
        stage = serializers.CharField()
        attempt = serializers.IntegerField()
        outcome = serializers.CharField()
        started_at = serializers.DateTimeField()
        finished_at = serializers.DateTimeField(allow_null=True)
        duration_ms = serializers.IntegerField(allow_null=True)
        next_action = serializers.CharField()
        decided_by = serializers.CharField()
        reason = serializers.CharField()
        detail = serializers.JSONField()

    @extend_schema(responses={200: inline_serializer("RunEvents", {"run_id": serializers.UUIDField(),
                                                                   "events": OutputSerializer(many=True)})})
    def get(self, request: Request, run_id: str) -> Response:
        run = run_get_for_org(org=request_org(request), run_id=run_id)
        events = self.OutputSerializer(run_events_view(run=run), many=True).data
        return Response({"run_id": str(run.id), "events": events})


class RunClarificationApi(APIView):
    class InputSerializer(serializers.Serializer):
        option = serializers.CharField(required=False, allow_blank=False, max_length=64)
        answer = serializers.CharField(required=False, allow_blank=False, max_length=500)

    @extend_schema(request=InputSerializer, responses={202: RunOutputSerializer})
    def post(self, request: Request, run_id: str) -> Response:
        run = run_get_for_org(org=request_org(request), run_id=run_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run_clarification_answer(run=run, option=data.validated_data.get("option"),
                                 answer=data.validated_data.get("answer"))
        run = run_detail_get_for_org(org=request_org(request), run_id=run_id)
        return Response(RunOutputSerializer(run_view(run=run)).data, status=status.HTTP_202_ACCEPTED)


class RunCancelApi(APIView):
    @extend_schema(request=None, responses={200: RunOutputSerializer})
    def post(self, request: Request, run_id: str) -> Response:
        run = run_get_for_org(org=request_org(request), run_id=run_id)
        run_cancel(run=run)
        run = run_detail_get_for_org(org=request_org(request), run_id=run_id)
        return Response(RunOutputSerializer(run_view(run=run)).data)
