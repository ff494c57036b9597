\echo == finished first page
EXPLAIN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null) order by j.finished_at desc, j.id desc limit 51;
\echo == finished deep (cursor)
EXPLAIN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null) and (j.finished_at < now() - interval '20 hours' or (j.finished_at = now() - interval '20 hours' and j.id < 100)) order by j.finished_at desc, j.id desc limit 51;
\echo == finished queue+name
EXPLAIN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null and j.queue_name = 'queue_7' and j.class_name = 'Job7') order by j.finished_at desc, j.id desc limit 51;
\echo == finished range
EXPLAIN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null and j.finished_at >= now() - interval '12 hours' and j.finished_at < now() - interval '11 hours') order by j.finished_at desc, j.id desc limit 51;
\echo == cancelled, queue
EXPLAIN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is not null and j.queue_name = 'queue_2') order by j.finished_at desc, j.id desc limit 51;
\echo == bounded count, finished, queue
EXPLAIN select count(*) from (select 1 from firm_queue_jobs j where j.finished_at is not null and j.cancelled_at is null and j.queue_name = 'queue_3' limit 10001) m;
\echo == throughput bucket (range only)
EXPLAIN SELECT COUNT(*) FROM firm_queue_jobs WHERE finished_at >= now() - interval '1 hour' AND finished_at < now();
\echo == queue throughput (range only, grouped)
EXPLAIN select queue_name, COUNT(*) from firm_queue_jobs where finished_at >= now() - interval '1 hour' and finished_at < now() group by queue_name;
\echo == cleanup batch
EXPLAIN select id from firm_queue_jobs where finished_at is not null and finished_at < now() - interval '12 hours' limit 500 for update skip locked;
\echo == cleanup batch, by name
EXPLAIN select id from firm_queue_jobs where finished_at is not null and finished_at < now() - interval '12 hours' and class_name = 'Job3' limit 500 for update skip locked;
\echo == pending
EXPLAIN select j.* from firm_queue_jobs j where j.unmet_dependencies > 0 and j.finished_at is null order by j.id desc limit 51;
