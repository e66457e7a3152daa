/*
 * report.c - a struct ssd_report as JSON: the object `femu-gandalf ssd --json` prints
 * (docs/output.md), written through common/json so a sweep runner can put many of them in one
 * document (as array elements) and a binding can parse the same keys the CLI documents.
 *
 * The run's own members come first (workload, bs, precondition, dwpd, steady, accelerated, perf,
 * eol), then the drive's, from hw/ftl's ftl_json_members(), so blkreplay and kv, which print the drive
 * with the same call, keep one meaning per key.
 */
#include <math.h>
#include <string.h>

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

void run_eol_note(struct run_eol *e, const struct ftl *f, int pass, uint64_t index,
                  const char *unit)
{
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	memset(e, 0, sizeof(*e));
	e->reached = true;
	e->cause = ftl_eol_cause(f) ? ftl_eol_cause(f) : "spare";
	e->pass = pass;
	e->index = index;
	e->unit = unit;
	e->host_write_bytes = st.host_write_bytes;
	e->drive_writes = (double)st.host_write_bytes / (double)ftl_get_geometry(f)->user_bytes;
	e->virtual_s = (double)st.clock_ns * 1e-9;
	e->percentage_used = st.percentage_used;
	e->available_spare = st.available_spare;
	e->retired_blocks = st.retired_blocks;
}

void run_eol_json(const struct run_eol *e, struct json_out *j)
{
	if (!e->reached) {
		jout_null(j, "eol");
		return;
	}
	jout_object(j, "eol", JOUT_INLINE);
	jout_str(j, "cause", e->cause);
	if (e->pass)
		jout_i64(j, "pass", e->pass);
	jout_u64(j, e->unit, e->index);
	jout_u64(j, "host_write_bytes", e->host_write_bytes);
	jout_num(j, "drive_writes", "%.4f", e->drive_writes);
	jout_num(j, "virtual_s", "%.6g", e->virtual_s);
	jout_u64(j, "percentage_used", e->percentage_used);
	jout_u64(j, "available_spare", e->available_spare);
	jout_u64(j, "retired_blocks", e->retired_blocks);
	jout_end(j);
}

void run_eol_text(const struct run_eol *e, FILE *out)
{
	if (!e->reached)
		return;
	fprintf(out, "  end of life (%s) at ", e->cause);
	if (e->pass)
		fprintf(out, "pass %d, ", e->pass);
	fprintf(out, "%s %llu: %.2f drive writes (%.4g GB host), %.6g s of drive time, "
	        "percentage used %u, spare %u%%, %llu blocks retired; the figures are those up "
	        "to it\n",
	        e->unit, (unsigned long long)e->index, e->drive_writes,
	        (double)e->host_write_bytes / 1e9, e->virtual_s, e->percentage_used,
	        e->available_spare, (unsigned long long)e->retired_blocks);
}

void run_accel_json(const struct ssd_accel_report *a, struct json_out *j)
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
		run_accel_json(&rep->accel, j);
	if (rep->perf_done)
		perf_report_json(&rep->perf, j);
	run_eol_json(&rep->eol, j);
	ftl_json_members(rep->ftl, rep->bytes_per_day, j);
	jout_end(j);
}
