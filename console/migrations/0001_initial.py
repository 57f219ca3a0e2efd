# The prompt OFF/ON compare's admin proxy, moved here from ``assemble`` (issue 14). A proxy has no table; its content
# type moves with it, so view permissions granted on it stay.

from django.db import migrations


def _relabel(apps, old, new):
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label=new, model="runpromptdiff").exists():
        ContentType.objects.filter(app_label=old, model="runpromptdiff").update(app_label=new)


def forwards(apps, schema_editor):
    _relabel(apps, "assemble", "console")


def backwards(apps, schema_editor):
    _relabel(apps, "console", "assemble")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('runs', '0008_tenancy_and_ledger_moved_out'),
        ('assemble', '0002_specialist_in_tenancy_compare_in_console'),
    ]

    operations = [
        migrations.CreateModel(
            name='RunPromptDiff',
            fields=[
            ],
            options={
                'verbose_name': 'prompt diff (flag OFF vs ON)',
                'verbose_name_plural': 'prompt diffs (flag OFF vs ON)',
                'proxy': True,
                'indexes': [],
                'constraints': [],
            },
            bases=('runs.run',),
        ),
        migrations.RunPython(forwards, backwards),
    ]
