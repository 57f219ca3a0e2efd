# The tenancy models move here from ``runs`` (issue 14). The tables stay where they are (``runs_org``, …, named by
# ``db_table``) with their rows: this migration changes Django's state only, and ``runs.0007`` drops the old state.

import django.db.models.deletion
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
                    name='ApiKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('prefix', models.CharField(db_index=True, max_length=12)),
                        ('digest', models.CharField(max_length=64, unique=True)),
                        ('name', models.CharField(blank=True, max_length=100)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('revoked_at', models.DateTimeField(blank=True, null=True)),
                        ('expires_at', models.DateTimeField(blank=True, help_text='empty: never (keys made before expiry)', null=True)),
                        ('last_used_at', models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        'db_table': 'runs_apikey',
                    },
                ),
                migrations.CreateModel(
                    name='Org',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField(unique=True)),
                        ('name', models.CharField(max_length=200)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'runs_org',
                    },
                ),
                migrations.CreateModel(
                    name='ApiKeyAudit',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key_prefix', models.CharField(max_length=12)),
                        ('org_slug', models.CharField(max_length=64)),
                        ('action', models.CharField(choices=[('created', 'Created'), ('revoked', 'Revoked')], max_length=16)),
                        ('actor', models.CharField(help_text='an admin user, or the command that did it', max_length=150)),
                        ('reason', models.CharField(blank=True, max_length=300)),
                        ('at', models.DateTimeField(auto_now_add=True)),
                        ('api_key', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='audit', to='tenancy.apikey')),
                    ],
                    options={
                        'db_table': 'runs_apikeyaudit',
                        'ordering': ['-at', '-id'],
                    },
                ),
                migrations.AddField(
                    model_name='apikey',
                    name='org',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_keys', to='tenancy.org'),
                ),
                migrations.CreateModel(
                    name='Specialist',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField()),
                        ('name', models.CharField(max_length=200)),
                        ('soul', models.TextField(blank=True, help_text='Persona / identity text.')),
                        ('role_skeleton', models.TextField(blank=True)),
                        ('directives', models.JSONField(blank=True, default=list, help_text='A list of directive strings.')),
                        ('red_lines', models.TextField(blank=True)),
                        ('response_contract', models.TextField(blank=True)),
                        ('cost_cap_usd', models.DecimalField(blank=True, decimal_places=4, help_text='Per-run cost cap for this specialist; empty = RUN_COST_CAP_USD.', max_digits=10, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('org', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='specialists', to='tenancy.org')),
                    ],
                    options={
                        'db_table': 'runs_specialist',
                        'constraints': [models.UniqueConstraint(fields=('org', 'slug'), name='uniq_specialist_slug_per_org')],
                    },
                ),
            ],
        ),
    ]
