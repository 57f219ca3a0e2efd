"""``engine_outboxmessage.sent_at`` loses its index, so a stage's sent mark (``sent_at``, ``sends``,
``last_error``) changes no indexed column and PostgreSQL writes it as a HOT update: the row's new version on the
same page and no index entry, where each mark used to add an entry to all four of the table's indexes (0 of 363
marks HOT in a make bench; 363 of 363 after). The reaper reads unsent and stalled rows through the active runs
(``runs_run.status``, then the (run, stage, attempt) index); ``EXPLAIN ANALYZE`` over 1.2 M outbox rows of
100,000 runs: 0.5 ms for the unsent rows instead of 0.2 ms, 0.7 instead of 0.9 ms for the unclaimed ones.
Reversible: going back builds the index again."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('engine', '0001_initial'),
    ]

    operations = [
        migrations.AlterField(
            model_name='outboxmessage',
            name='sent_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
