"""The queue's frontier (issue 37): a table, and on PostgreSQL the triggers that lower it.

Each trigger lowers the project's ``below`` (and bumps ``version``) in the very statement that frees a
place or adds a pair to the queue, whichever code path runs it (a service, a cascade, a bulk update):
see ``QueueFrontier`` and ``review.queue_serving``. SQLite gets the table only; the queue does not use
the frontier there.
"""
import django.db.models.deletion
from django.db import migrations, models

TRIGGERS = """
-- where a project's frontier starts (again): its first pair, or past every pair id handed out so far when
-- it has none (its pairs will all be newer)
CREATE FUNCTION annotation_frontier_start(project bigint) RETURNS bigint LANGUAGE sql AS $$
    SELECT COALESCE((SELECT min(c.id) FROM annotation_candidatepair c WHERE c.article_id IN (
                         SELECT a.id FROM annotation_article a WHERE a.project_id = project)),
                    pg_sequence_last_value(pg_get_serial_sequence('annotation_candidatepair', 'id')) + 1,
                    (SELECT COALESCE(max(id), 0) + 1 FROM annotation_candidatepair));
$$;

CREATE FUNCTION annotation_frontier_lower(low bigint) RETURNS void LANGUAGE sql AS $$
    UPDATE annotation_queuefrontier f SET below = LEAST(f.below, low), version = f.version + 1
    FROM annotation_candidatepair c JOIN annotation_article a ON a.id = c.article_id
    WHERE c.id = low AND f.project_id = a.project_id;
$$;

CREATE FUNCTION annotation_frontier_old_pair() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM annotation_frontier_lower(OLD.pair_id); RETURN NULL; END $$;

CREATE FUNCTION annotation_frontier_new_pair() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM annotation_frontier_lower(NEW.id); RETURN NULL; END $$;

CREATE FUNCTION annotation_frontier_pairs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE annotation_queuefrontier f SET below = LEAST(f.below, n.low), version = f.version + 1
    FROM (SELECT a.project_id, min(c.id) AS low FROM new_pairs c
          JOIN annotation_article a ON a.id = c.article_id GROUP BY a.project_id) n
    WHERE f.project_id = n.project_id;
    RETURN NULL;
END $$;

-- the project's frontier starts again; TG_ARGV[0] names the column of the changed row holding the project's id
-- (a membership's project_id, a project's id)
CREATE FUNCTION annotation_frontier_reset() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed bigint := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
BEGIN
    UPDATE annotation_queuefrontier SET below = LEAST(below, annotation_frontier_start(changed)),
        version = version + 1 WHERE project_id = changed;
    RETURN NULL;
END $$;

-- a new project: its pairs will all be newer than every pair there is now
CREATE FUNCTION annotation_frontier_new_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO annotation_queuefrontier (project_id, below, version)
    VALUES (NEW.id, annotation_frontier_start(NEW.id), 0) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER frontier_new_project AFTER INSERT ON annotation_project FOR EACH ROW
    EXECUTE FUNCTION annotation_frontier_new_project();
INSERT INTO annotation_queuefrontier (project_id, below, version) SELECT id, 0, 0 FROM annotation_project
    ON CONFLICT DO NOTHING;

-- a place given back: skipped, made a test question, moved, deleted (an open or done, non-test assignment)
CREATE TRIGGER frontier_assignment_changed AFTER UPDATE ON annotation_assignment FOR EACH ROW
    WHEN (OLD.status IN ('open', 'done') AND NOT OLD.is_test
          AND (NEW.status NOT IN ('open', 'done') OR NEW.is_test OR NEW.pair_id <> OLD.pair_id
               OR NEW.annotator_id <> OLD.annotator_id))
    EXECUTE FUNCTION annotation_frontier_old_pair();
CREATE TRIGGER frontier_assignment_deleted AFTER DELETE ON annotation_assignment FOR EACH ROW
    WHEN (OLD.status IN ('open', 'done') AND NOT OLD.is_test)
    EXECUTE FUNCTION annotation_frontier_old_pair();
-- gold removed (or moved): the pair is work again
CREATE TRIGGER frontier_gold_deleted AFTER DELETE ON annotation_adjudication FOR EACH ROW
    EXECUTE FUNCTION annotation_frontier_old_pair();
CREATE TRIGGER frontier_gold_moved AFTER UPDATE ON annotation_adjudication FOR EACH ROW
    WHEN (OLD.pair_id <> NEW.pair_id) EXECUTE FUNCTION annotation_frontier_old_pair();
-- pairs added (once per statement: runs insert them in bulk), or changed into queue work
CREATE TRIGGER frontier_pairs_inserted AFTER INSERT ON annotation_candidatepair
    REFERENCING NEW TABLE AS new_pairs FOR EACH STATEMENT
    EXECUTE FUNCTION annotation_frontier_pairs_inserted();
CREATE TRIGGER frontier_pair_changed AFTER UPDATE ON annotation_candidatepair FOR EACH ROW
    WHEN (OLD.origin IS DISTINCT FROM NEW.origin OR OLD.identical IS DISTINCT FROM NEW.identical
          OR OLD.article_id <> NEW.article_id)
    EXECUTE FUNCTION annotation_frontier_new_pair();
-- an annotator excluded (their places are free again) or the project's settings changed: start again
CREATE TRIGGER frontier_member_excluded AFTER UPDATE ON annotation_membership FOR EACH ROW
    WHEN (OLD.excluded_at IS NULL AND NEW.excluded_at IS NOT NULL)
    EXECUTE FUNCTION annotation_frontier_reset('project_id');
CREATE TRIGGER frontier_project_config AFTER UPDATE ON annotation_project FOR EACH ROW
    WHEN (OLD.config IS DISTINCT FROM NEW.config)
    EXECUTE FUNCTION annotation_frontier_reset('id');
"""

DROP = """
DROP TRIGGER IF EXISTS frontier_assignment_changed ON annotation_assignment;
DROP TRIGGER IF EXISTS frontier_assignment_deleted ON annotation_assignment;
DROP TRIGGER IF EXISTS frontier_gold_deleted ON annotation_adjudication;
DROP TRIGGER IF EXISTS frontier_gold_moved ON annotation_adjudication;
DROP TRIGGER IF EXISTS frontier_pairs_inserted ON annotation_candidatepair;
DROP TRIGGER IF EXISTS frontier_pair_changed ON annotation_candidatepair;
DROP TRIGGER IF EXISTS frontier_member_excluded ON annotation_membership;
DROP TRIGGER IF EXISTS frontier_project_config ON annotation_project;
DROP TRIGGER IF EXISTS frontier_new_project ON annotation_project;
DROP FUNCTION IF EXISTS annotation_frontier_old_pair(), annotation_frontier_new_pair(),
    annotation_frontier_pairs_inserted(), annotation_frontier_reset(), annotation_frontier_new_project();
DROP FUNCTION IF EXISTS annotation_frontier_lower(bigint), annotation_frontier_start(bigint);
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(TRIGGERS)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0011_scheme_kind_from_registry'),
    ]

    operations = [
        migrations.CreateModel(
            name='QueueFrontier',
            fields=[
                ('project', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                                 related_name='+', serialize=False, to='annotation.project')),
                ('below', models.BigIntegerField(default=0)),
                ('version', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(install, uninstall),
    ]
