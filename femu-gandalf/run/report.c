/*
 * report.c - a struct ssd_report as JSON: the object `femu-gandalf ssd --json` prints
 * (docs/output.md), written through common/json so a sweep runner can put many of them in one
 * document (as array elements) and a binding can parse the same keys the CLI documents.
 *
 * The run's own members come first (workload, bs, precondition, dwpd, steady, accelerated),
 * then the drive's, from hw/ftl's ftl_json_members(), so blkreplay and kv, which print the drive
 * with the same call, keep one meaning per key.
 */
#include <math.h>

#include "json.h"
#include "run.h"

static void steady_json(const struct run_steady *s, struct json_out *j)
{
	jout_object(j, "steady", JOUT_INLINE);
	jout_bool(j, "reached", s->reached);
	jout_i64(j, "rounds", s->rounds);
	jout_num(j, "waf", "%.6g", s->reached ? s->waf : NAN);
	jout_str(j, "rule", s->rule == RUN_RULE_TIGHT ? "tight" : "snia");
	jout_object(j, "snia", JOUT_INLINE);
	jout_bool(j, "reached", s->snia_round > 0);
	jout_i64(j, "round", s->snia_round);
	jout_num(j, "waf", "%.6g", s->snia_waf);
	jout_end(j);
	jout_object(j, "tight", JOUT_INLINE);
	jout_bool(j, "reached", s->tight_round > 0);
	jout_i64(j, "round", s->tight_round);
	jout_num(j, "waf", "%.6g", s->tight_waf);
	jout_end(j);
	jout_array(j, "round_waf", JOUT_INLINE);
	for (int i = 0; i < s->rounds; i++)
		jout_num(j, NULL, "%.4f", s->round_waf[i]);
	jout_end(j);
	jout_end(j);
}

static void accel_json(const struct ssd_accel_report *a, struct json_out *j)
{
	jout_object(j, "accelerated", JOUT_INLINE);
	jout_num(j, "factor", "%.6g", a->factor);
	jout_u64(j, "pe_cycles", a->pe_cycles);
	jout_num(j, "eol_days", "%.6g", a->eol_days);
	jout_num(j, "extrapolated_days", "%.6g", a->extrapolated_days);
	jout_end(j);
}

void ssd_report_json(const struct ssd_report *rep, struct json_out *j)
{
	jout_object(j, NULL, JOUT_BLOCK);
	jout_str(j, "workload", rep->workload);
	jout_u64(j, "bs", rep->bs);
	if (rep->bs_mix)
		jout_str(j, "bs_mix", rep->bs_mix);
	jout_bool(j, "precondition", rep->precondition);
	jout_num(j, "dwpd", "%.6g", rep->dwpd);
	if (rep->steady_requested)
		steady_json(&rep->steady, j);
	if (rep->accelerated)
		accel_json(&rep->accel, j);
	if (rep->perf_done)
		perf_report_json(&rep->perf, j);
	ftl_json_members(rep->ftl, rep->bytes_per_day, j);
	jout_end(j);
}
