begin;
explain (analyze, buffers, wal, costs off)
WITH removed AS (
  DELETE FROM firm_queue_claimed_executions WHERE process_id = 999 AND job_id = ANY(:'ids'::bigint[]) RETURNING job_id
), recorded AS (UPDATE firm_queue_jobs j SET finished_at = now(), updated_at = now(), attempts = j.attempts + 1
          FROM removed WHERE j.id = removed.job_id RETURNING j.id, j.has_dependents, j.batch_id
), members AS (
  UPDATE firm_queue_batch_jobs m SET state = 'finished'
  FROM recorded r WHERE m.job_id = r.id AND r.batch_id IS NOT NULL AND m.state IS NULL
  RETURNING m.batch_id
), batch_ends AS (
  SELECT batch_id, count(*)::int AS k FROM members GROUP BY batch_id
), batches_locked AS (
  SELECT b.id FROM firm_queue_batches b WHERE b.id IN (SELECT batch_id FROM batch_ends) ORDER BY b.id FOR UPDATE
), counted AS (
  UPDATE firm_queue_batches b
  SET pending = b.pending - e.k, finished = b.finished + e.k, updated_at = now()
  FROM batch_ends e, batches_locked l
  WHERE b.id = e.batch_id AND b.id = l.id AND 0 / GREATEST(b.pending - e.k, 0) = 0
  RETURNING b.id
), edges AS (
  UPDATE firm_queue_job_dependencies d SET dependency_state = 'finished', result = NULL
  FROM recorded r WHERE d.dependency_id = r.id AND r.has_dependents <> 0 AND d.dependency_state IS NULL
  RETURNING d.job_id
), dependency_ends AS (
  SELECT job_id, count(*)::int AS k FROM edges GROUP BY job_id
), dependents_locked AS (
  SELECT j.id FROM firm_queue_jobs j
  WHERE j.id IN (SELECT job_id FROM dependency_ends) AND j.id NOT IN (SELECT id FROM recorded)
    AND (SELECT count(*) FROM counted) >= 0
  ORDER BY j.id FOR UPDATE
), lowered AS (
  UPDATE firm_queue_jobs j SET unmet_dependencies = j.unmet_dependencies - e.k, updated_at = now()
  FROM dependency_ends e, dependents_locked l
  WHERE j.id = e.job_id AND j.id = l.id
    AND CASE WHEN j.finished_at IS NULL THEN 0 / GREATEST(j.unmet_dependencies - e.k, 0) = 0 ELSE false END
), marked AS (UPDATE firm_queue_claimed_executions SET started_at = now() WHERE process_id = 999 AND job_id = ANY('{}'::bigint[]) AND started_at IS NULL)
SELECT job_id FROM removed;
rollback;
