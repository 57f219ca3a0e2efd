from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "tenancy"
    # No ready(): the API-key scheme (tenancy/schema.py) is registered with drf-spectacular by the schema class that
    # needs it (runs/schema.py), so a process that never builds the schema (``ask``, a worker) does not import
    # drf-spectacular and DRF's fields (a quarter of a second of start-up).
