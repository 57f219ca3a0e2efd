# The cost ledger moves here from ``runs`` (issue 14). Its table stays ``runs_costledgerentry`` (``db_table``) with
# every row: this migration changes Django's state only, and ``runs.0007`` drops the old state.

import django.db.models.deletion
from decimal import Decimal
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('runs', '0006_run_purged_at'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='CostLedgerEntry',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('stage', models.CharField(blank=True, max_length=4)),
                        ('attempt', models.PositiveIntegerField(default=1)),
                        ('call_ordinal', models.PositiveIntegerField(default=1)),
                        ('kind', models.CharField(default='chat', max_length=16)),
                        ('role', models.CharField(blank=True, max_length=32)),
                        ('provider', models.CharField(max_length=32)),
                        ('model', models.CharField(max_length=100)),
                        ('prompt_tokens', models.PositiveIntegerField(default=0)),
                        ('completion_tokens', models.PositiveIntegerField(default=0)),
                        ('cached_tokens', models.PositiveIntegerField(default=0)),
                        ('cost_usd', models.DecimalField(decimal_places=8, default=Decimal('0'), max_digits=12)),
                        ('price_version', models.CharField(blank=True, max_length=32)),
                        ('latency_ms', models.PositiveIntegerField(default=0)),
                        ('status', models.CharField(default='ok', max_length=16)),
                        ('error', models.CharField(blank=True, max_length=300)),
                        ('idempotency_key', models.CharField(max_length=200, unique=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('run', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='ledger', to='runs.run')),
                    ],
                    options={
                        'verbose_name_plural': 'cost ledger entries',
                        'db_table': 'runs_costledgerentry',
                        'ordering': ['created_at', 'id'],
                    },
                ),
            ],
        ),
    ]
