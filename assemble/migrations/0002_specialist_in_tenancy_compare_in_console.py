# Specialist moved from ``runs`` to ``tenancy`` (issue 14) with its table: the foreign key points at the same table,
# so only Django's state changes. The prompt OFF/ON compare's admin proxy moves to ``console`` (console.0001); a
# proxy has no table.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('assemble', '0001_initial'),
        ('tenancy', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='correction',
                    name='specialist',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='corrections', to='tenancy.specialist'),
                ),
                migrations.DeleteModel(name='RunPromptDiff'),
            ],
        ),
    ]
