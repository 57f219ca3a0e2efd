"""DocList's HTTP face: ``POST /api/v1/doclist/resolve`` {"query"} → reason code and candidates (seed 002)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from knowledge.selectors import doclist_resolve
from lexery.errors import Unavailable


class DoclistDisabled(Unavailable):
    code = "doclist_disabled"


class DoclistResolveApi(APIView):
    class InputSerializer(serializers.Serializer):
        query = serializers.CharField(trim_whitespace=True, max_length=500)

    class OutputSerializer(serializers.Serializer):
        class CandidateSerializer(serializers.Serializer):
            nreg = serializers.CharField()
            title = serializers.CharField(allow_blank=True)
            abbreviations = serializers.ListField(child=serializers.CharField())
            indexed = serializers.BooleanField()
            score = serializers.FloatField()
            how = serializers.CharField()

        query = serializers.CharField()
        reason = serializers.CharField()
        candidates = CandidateSerializer(many=True)

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        if not settings.DOCLIST_ENABLED:
            raise DoclistDisabled("DocList is disabled on this server (DOCLIST_ENABLED=false).")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        resolution = doclist_resolve(query=data.validated_data["query"])
        return Response(self.OutputSerializer(resolution.as_dict()).data)
