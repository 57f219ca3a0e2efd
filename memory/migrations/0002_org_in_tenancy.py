# Org and Specialist moved from ``runs`` to ``tenancy`` (issue 14) with their tables: the foreign keys point at the
# same tables, so only Django's state changes.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0001_initial'),
        ('tenancy', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='memoryitem',
                    name='org',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_items', to='tenancy.org'),
                ),
            ],
        ),
    ]
