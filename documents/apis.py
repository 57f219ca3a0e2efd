"""``/api/v1/documents``: an org's end users' documents. Upload is multipart (``file`` + ``user_ref``)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from documents.selectors import document_get_for_org, document_list
from documents.services import document_create, document_delete
from documents.uploads import limit_upload
from lexery.parsers import MultiPartParser
from runs.serializers import UserRefQuerySerializer
from tenancy.auth import request_org


class DocumentOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    user_ref = serializers.CharField()
    filename = serializers.CharField()
    content_type = serializers.CharField()
    kind = serializers.CharField()
    size = serializers.IntegerField()
    status = serializers.CharField(help_text="extracting, indexing, ready or failed (with a sentence in error)")
    n_chunks = serializers.IntegerField()
    n_chars = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class DocumentListCreateApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(allow_empty_file=True)  # the service says why an empty file is refused
        user_ref = serializers.CharField(allow_blank=True, trim_whitespace=True)

    @extend_schema(request={"multipart/form-data": InputSerializer}, responses={202: DocumentOutputSerializer})
    def post(self, request: Request) -> Response:
        limit_upload(request, max_bytes=settings.DOCUMENT_MAX_BYTES,
                     overhead_bytes=settings.DOCUMENT_UPLOAD_OVERHEAD_BYTES)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        document = document_create(org=request_org(request), user_ref=data.validated_data["user_ref"],
                                   filename=upload.name or "", content_type=upload.content_type or "",
                                   data=upload.read())
        document = document_get_for_org(org=request_org(request), document_id=document.pk)
        return Response(DocumentOutputSerializer(document).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(parameters=[UserRefQuerySerializer], responses={200: DocumentOutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        query = UserRefQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        documents = document_list(org=request_org(request), user_ref=query.validated_data.get("user_ref"))
        return Response(DocumentOutputSerializer(documents, many=True).data)


class DocumentDetailApi(APIView):
    @extend_schema(responses={200: DocumentOutputSerializer})
    def get(self, request: Request, document_id: str) -> Response:
        document = document_get_for_org(org=request_org(request), document_id=document_id)
        return Response(DocumentOutputSerializer(document).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, document_id: str) -> Response:
        document_delete(document=document_get_for_org(org=request_org(request), document_id=document_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
