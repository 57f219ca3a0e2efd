# Org and Specialist moved from ``runs`` to ``tenancy`` (issue 14) with their tables: the foreign keys point at the
# same tables, so only Django's state changes. The flag screens are proxies of those models: re-created on the moved
# bases (a proxy has no table).

import django.db.models.deletion
from django.db import migrations, models


def _proxy(name, verbose, base):
    return migrations.CreateModel(
        name=name,
        fields=[],
        options={'verbose_name': verbose, 'verbose_name_plural': verbose, 'proxy': True, 'indexes': [],
                 'constraints': []},
        bases=(base,),
    )


class Migration(migrations.Migration):

    dependencies = [
        ('flags', '0002_audit_console'),
        ('tenancy', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='flagaudit',
                    name='org',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='tenancy.org'),
                ),
                migrations.AlterField(
                    model_name='flagaudit',
                    name='specialist',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='tenancy.specialist'),
                ),
                migrations.AlterField(
                    model_name='flagoverride',
                    name='org',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, to='tenancy.org'),
                ),
                migrations.AlterField(
                    model_name='flagoverride',
                    name='specialist',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, to='tenancy.specialist'),
                ),
                migrations.DeleteModel(name='OrgFlags'),
                migrations.DeleteModel(name='SpecialistFlags'),
                _proxy('OrgFlags', 'flags by org', 'tenancy.org'),
                _proxy('SpecialistFlags', 'flags by specialist', 'tenancy.specialist'),
            ],
        ),
    ]
