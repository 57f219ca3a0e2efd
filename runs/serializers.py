"""Serializers shared by several APIs."""

from __future__ import annotations

from rest_framework import serializers

from runs.services import REF_MAX_CHARS


class UserRefQuerySerializer(serializers.Serializer):
    """``?user_ref=``: validated like any input (a NUL byte or an over-long id is a 400, not a database error)."""

    user_ref = serializers.CharField(required=False, allow_blank=True, max_length=REF_MAX_CHARS,
                                     help_text="only this end user's items")
