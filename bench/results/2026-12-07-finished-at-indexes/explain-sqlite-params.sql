.print == deep (params)
EXPLAIN QUERY PLAN select "j".*, "j"."finished_at" as "since", NULL as "failure", NULL as "process_id" from "firm_queue_jobs" as "j" where ("j"."finished_at" is not null and "j"."cancelled_at" is null) and ("j"."finished_at" < ?1 or ("j"."finished_at" = ?2 and "j"."id" < ?3)) order by "j"."finished_at" desc, "j"."id" desc limit ?4;
.print == deep (params, with <= bound)
EXPLAIN QUERY PLAN select "j".* from "firm_queue_jobs" as "j" where ("j"."finished_at" is not null and "j"."cancelled_at" is null) and "j"."finished_at" <= ?1 and ("j"."finished_at" < ?1 or "j"."id" < ?3) order by "j"."finished_at" desc, "j"."id" desc limit ?4;
.print == failed queue
EXPLAIN QUERY PLAN select "j".*, "e"."created_at" as "since", e.error as "failure", NULL as "process_id" from "firm_queue_failed_executions" as "e" inner join "firm_queue_jobs" as "j" on "j"."id" = "e"."job_id" where "j"."queue_name" = ?1 order by "e"."job_id" desc limit ?2;
