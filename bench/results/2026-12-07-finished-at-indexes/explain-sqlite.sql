.print == finished first page
EXPLAIN QUERY PLAN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null) order by j.finished_at desc, j.id desc limit 51;
.print == finished deep (cursor)
EXPLAIN QUERY PLAN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null) and (j.finished_at < '2026-12-07T00:00:00.000Z' or (j.finished_at = '2026-12-07T00:00:00.000Z' and j.id < 100)) order by j.finished_at desc, j.id desc limit 51;
.print == finished queue+name
EXPLAIN QUERY PLAN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null and j.queue_name = 'queue_7' and j.class_name = 'Job7') order by j.finished_at desc, j.id desc limit 51;
.print == finished range
EXPLAIN QUERY PLAN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is null and j.finished_at >= '2026-12-07T00:00:00.000Z' and j.finished_at < '2026-12-07T01:00:00.000Z') order by j.finished_at desc, j.id desc limit 51;
.print == cancelled, queue
EXPLAIN QUERY PLAN select j.* from firm_queue_jobs j where (j.finished_at is not null and j.cancelled_at is not null and j.queue_name = 'queue_2') order by j.finished_at desc, j.id desc limit 51;
.print == bounded count, finished, queue
EXPLAIN QUERY PLAN select count(*) from (select 1 from firm_queue_jobs j where j.finished_at is not null and j.cancelled_at is null and j.queue_name = 'queue_3' limit 10001) m;
.print == throughput bucket (range only)
EXPLAIN QUERY PLAN SELECT COUNT(*) FROM firm_queue_jobs WHERE finished_at >= '2026-12-07T00:00:00.000Z' AND finished_at < '2026-12-07T01:00:00.000Z';
.print == queue throughput (range only, grouped)
EXPLAIN QUERY PLAN select queue_name, COUNT(*) from firm_queue_jobs where finished_at >= '2026-12-07T00:00:00.000Z' and finished_at < '2026-12-07T01:00:00.000Z' group by queue_name;
.print == cleanup batch
EXPLAIN QUERY PLAN select id from firm_queue_jobs where finished_at is not null and finished_at < '2026-12-07T00:00:00.000Z' limit 500;
.print == cleanup batch, by name
EXPLAIN QUERY PLAN select id from firm_queue_jobs where finished_at is not null and finished_at < '2026-12-07T00:00:00.000Z' and class_name = 'Job3' limit 500;
.print == pending
EXPLAIN QUERY PLAN select j.* from firm_queue_jobs j where j.unmet_dependencies > 0 and j.finished_at is null order by j.id desc limit 51;
