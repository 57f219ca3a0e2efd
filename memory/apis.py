"""``/api/v1/memory``: the facts an org's end user told before. One view per operation, nested serializers."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.selectors import memory_item_get_for_org, memory_item_list
from memory.services import memory_item_create, memory_item_delete
from runs.selectors import run_get_for_org
from runs.serializers import UserRefQuerySerializer
from tenancy.auth import request_org


class MemoryItemOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    user_ref = serializers.CharField()
    text = serializers.CharField()
    source_run = serializers.UUIDField(source="source_run_id", allow_null=True)
    created_at = serializers.DateTimeField()


class MemoryListCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        user_ref = serializers.CharField(allow_blank=True, trim_whitespace=True)
        text = serializers.CharField(allow_blank=True, trim_whitespace=True)
        source_run = serializers.UUIDField(required=False, allow_null=True)

    @extend_schema(request=InputSerializer, responses={201: MemoryItemOutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run_id = data.validated_data.get("source_run")
        source_run = run_get_for_org(org=request_org(request), run_id=run_id) if run_id else None
        item = memory_item_create(org=request_org(request), user_ref=data.validated_data["user_ref"],
                                  text=data.validated_data["text"], source_run=source_run)
        return Response(MemoryItemOutputSerializer(item).data, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[UserRefQuerySerializer], responses={200: MemoryItemOutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        query = UserRefQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        items = memory_item_list(org=request_org(request), user_ref=query.validated_data.get("user_ref"))
        return Response(MemoryItemOutputSerializer(items, many=True).data)


class MemoryDetailApi(APIView):
    @extend_schema(responses={200: MemoryItemOutputSerializer})
    def get(self, request: Request, item_id: str) -> Response:
        item = memory_item_get_for_org(org=request_org(request), item_id=item_id)
        return Response(MemoryItemOutputSerializer(item).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, item_id: str) -> Response:
        memory_item_delete(item=memory_item_get_for_org(org=request_org(request), item_id=item_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
