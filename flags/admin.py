from django.contrib import admin

from flags.models import FeatureFlag, FlagOverride


class FlagOverrideInline(admin.TabularInline):
    model = FlagOverride
    extra = 0


@admin.register(FeatureFlag)
class FeatureFlagAdmin(admin.ModelAdmin):
    list_display = ("key", "default_enabled", "updated_at")
    inlines = [FlagOverrideInline]


@admin.register(FlagOverride)
class FlagOverrideAdmin(admin.ModelAdmin):
    list_display = ("flag", "org", "specialist", "enabled", "updated_at")
    list_filter = ("flag", "enabled")
    list_editable = ("enabled",)
