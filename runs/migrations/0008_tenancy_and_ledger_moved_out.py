# Org, Specialist, ApiKey and ApiKeyAudit moved to ``tenancy``, CostLedgerEntry to ``llm`` (issue 14). Their tables
# and rows stay (each model names its old table), so this drops them from the ``runs`` state only. Their content
# types move with them, so permissions granted on them and the admin's history keep pointing at the same models.

import django.db.models.deletion
from django.db import migrations, models

MOVED = {"org": "tenancy", "specialist": "tenancy", "apikey": "tenancy", "apikeyaudit": "tenancy",
         "costledgerentry": "llm"}


def _relabel(apps, pairs):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model, old, new in pairs:
        # On a fresh database there is none yet (post_migrate creates them after the last migration).
        if not ContentType.objects.filter(app_label=new, model=model).exists():
            ContentType.objects.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    _relabel(apps, [(model, "runs", app) for model, app in MOVED.items()])


def backwards(apps, schema_editor):
    _relabel(apps, [(model, app, "runs") for model, app in MOVED.items()])


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('runs', '0007_stageevent_deliveries'),
        ('tenancy', '0001_initial'),
        ('llm', '0001_initial'),
        ('assemble', '0002_specialist_in_tenancy_compare_in_console'),
        ('documents', '0003_org_in_tenancy'),
        ('flags', '0003_org_in_tenancy'),
        ('memory', '0002_org_in_tenancy'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='run',
                    name='org',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='tenancy.org'),
                ),
                migrations.AlterField(
                    model_name='run',
                    name='specialist',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='tenancy.specialist'),
                ),
                migrations.DeleteModel(name='ApiKeyAudit'),
                migrations.DeleteModel(name='ApiKey'),
                migrations.DeleteModel(name='Specialist'),
                migrations.DeleteModel(name='CostLedgerEntry'),
                migrations.DeleteModel(name='Org'),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
