/*
 * cmd_kv.c - `femu-gandalf kv`: a KV-request trace through a DRAM + SSD KV-cache tier under a
 * placement policy, with the SSD tier on an emulated SSD; and `femu-gandalf models`.
 *
 * One run = one policy at one parameter point: a fresh cache and a fresh drive, the whole trace
 * (--loop N times, each pass shifted in time after the previous one), then miss ratio, hits by
 * tier and kind, SSD traffic, WAF, the three lifetimes, load latency and cost. --sweep runs every
 * point of the policy's grid (or of every policy with --policy all) and prints CSV.
 * Costs: GPU recompute at --gpu-hour dollars per hour at the prefill rate; SSD wear as the
 * fraction of the drive's endurance used (NAND bytes / (P/E x physical bytes) with a device,
 * host bytes / rated TBW without) times the drive's price (--ssd-price per TB of user capacity).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvsim.h"
#include "preset.h"

struct kv_run_opts {
	const char *trace, *device;
	char **sets;
	struct trace_opts to;
	struct kv_trace kt; /* parsed once, replayed by every run */
	const struct kv_policy *prepared_for; /* the policy whose prepare() result is in prepared */
	void *prepared;
	struct kv_config cfg;
	int loops;
	bool json;
};

struct kv_result {
	struct kv_stats st;
	struct ftl_stats fs;
	struct ftl_lifetime lt;
	double bpd, duration, wall, lat_mean, lat_p99, tbw_days, cost_gpu, cost_ssd;
	bool have_ftl;
	uint64_t ssd_bytes;
	double drive_writes; /* host bytes written / the drive's user bytes */
};

/* A fresh drive has not reached steady state before it has been written about twice over (SNIA
 * PTS preconditions with 2x): until then GC has barely started and the erase count, extrapolated,
 * says far too much. */
#define STEADY_DRIVE_WRITES 2.0

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Run one policy point. Returns 0, or an exit code after printing the error. */
static int run_one(const struct kv_run_opts *ro, const struct kv_policy *pol, const char *params,
		   struct kv_result *res)
{
	char err[8192];
	struct ftl *f = NULL;
	struct kvsim *s = NULL;
	int rc = EXIT_USAGE;
	struct kv_config cfg = ro->cfg;
	memset(res, 0, sizeof(*res));
	if (strcmp(ro->device, "none")) {
		struct ftl_config fc;
		if (fg_config_from_opts(&fc, ro->device, ro->sets, NULL))
			return EXIT_USAGE;
		/* the SSD tier and the drive use both streams when placement hints are on */
		if (cfg.streams_by_kind && fc.host_streams < 2)
			fc.host_streams = 2;
		f = ftl_create(&fc, err, sizeof(err));
		if (!f) {
			fprintf(stderr, "femu-gandalf: --device %s: %s\n", ro->device, err);
			return EXIT_USAGE;
		}
		const struct ftl_geometry *g = ftl_get_geometry(f);
		if (!cfg.ssd_bytes)
			cfg.ssd_bytes = g->user_bytes;
		if (cfg.ssd_bytes > g->user_bytes) {
			fprintf(stderr, "femu-gandalf: --ssd %llu bytes is larger than the %s drive (%llu bytes user)\n",
				(unsigned long long)cfg.ssd_bytes, ro->device, (unsigned long long)g->user_bytes);
			ftl_destroy(f);
			return EXIT_USAGE;
		}
		cfg.tbw_bytes = fc.dwpd * (double)g->user_bytes * 365.0 * fc.warranty_years;
		cfg.ssd_usd = cfg.ssd_usd_per_tb * (double)g->user_bytes / 1e12;
		cfg.ssd_pe = fc.pe_cycles;
		cfg.ssd_phys_bytes = (double)g->phys_bytes;
		cfg.use_ftl_timing = true;
	} else {
		if (!cfg.ssd_bytes) {
			fprintf(stderr, "femu-gandalf: --device none needs --ssd SIZE\n");
			return EXIT_USAGE;
		}
		kv_cost_no_device(&cfg);
	}
	if (pol->one_pass && ro->loops != 1) {
		fprintf(stderr,
		        "femu-gandalf: policy %s knows one pass of the trace: drop --loop\n",
		        pol->name);
		ftl_destroy(f);
		return EXIT_USAGE;
	}
	s = kvsim_new(&cfg, pol, params, pol == ro->prepared_for ? ro->prepared : NULL, f, err,
	              sizeof(err));
	if (!s) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		ftl_destroy(f);
		return EXIT_USAGE;
	}
	struct progress pg;
	progress_init(&pg, pol->name);
	double t0 = now_seconds(), toff = 0, span = 0;
	for (int pass = 0; pass < ro->loops; pass++) {
		for (uint64_t i = 0; i < ro->kt.n; i++) {
			struct kv_request rq = ro->kt.rq[i];
			rq.t += toff;
			if (rq.t > span)
				span = rq.t;
			if (kvsim_request(s, &rq, err, sizeof(err))) {
				fprintf(stderr, "femu-gandalf: %s: request %llu: %s\n", ro->trace,
					(unsigned long long)i + 1, err);
				rc = 1;
				goto out;
			}
			if (pg.tty && !((i + 1) & 1023)) {
				char extra[80];
				snprintf(extra, sizeof(extra), "pass %d, %llu requests, miss %.3f",
				         pass + 1, (unsigned long long)kvsim_stats(s)->requests,
				         1 - (double)kvsim_stats(s)->hit_blocks /
				                         (kvsim_stats(s)->prefix_blocks
				                                  ? kvsim_stats(s)->prefix_blocks
				                                  : 1));
				progress_update(&pg, 0, 0, extra);
			}
		}
		toff = span + 1;
	}
	progress_end(&pg);
	res->wall = now_seconds() - t0;
	kvsim_finish(s);
	struct kv_stats *st = kvsim_stats(s);
	res->st = *st;
	res->duration = st->t_last - st->t_first;
	if (st->nlat) {
		double sum = 0;
		for (uint64_t i = 0; i < st->nlat; i++)
			sum += st->lat[i];
		qsort(st->lat, st->nlat, sizeof(double), cmp_d);
		res->lat_mean = sum / st->nlat;
		res->lat_p99 = st->lat[(uint64_t)(0.99 * (st->nlat - 1))];
	}
	uint64_t host = st->ssd_write_bytes[0] + st->ssd_write_bytes[1];
	res->bpd = kv_bytes_per_day(host, res->duration);
	res->tbw_days = kv_tbw_days(&cfg, res->bpd);
	res->cost_gpu = st->missed_tokens * kv_gpu_usd_per_token(&cfg);
	res->ssd_bytes = cfg.ssd_bytes;
	if (f) {
		res->have_ftl = true;
		ftl_get_stats(f, &res->fs);
		ftl_lifetime(f, res->bpd, &res->lt);
		res->drive_writes = (double)res->fs.host_write_bytes / (double)ftl_get_geometry(f)->user_bytes;
		res->cost_ssd = kv_wear_usd(&cfg, true, host, res->fs.nand_write_bytes);
	} else {
		res->cost_ssd = kv_wear_usd(&cfg, false, host, 0);
	}
	st->lat = NULL; /* copied into res->st; freed by the caller */
	rc = 0;
out:
	if (rc)
		progress_end(&pg);
	kvsim_free(s);
	ftl_destroy(f);
	return rc;
}

static double miss_ratio(const struct kv_stats *st)
{
	return st->prefix_blocks ? 1 - (double)st->hit_blocks / st->prefix_blocks : 0;
}

static int print_json(const struct kv_run_opts *ro, const char *pol, const char *params, const struct kv_result *r)
{
	const struct kv_stats *st = &r->st;
	uint64_t host = st->ssd_write_bytes[0] + st->ssd_write_bytes[1];
	struct json_out j;
	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_str(&j, "trace", ro->trace);
	jout_str(&j, "model", ro->cfg.model.name);
	jout_str(&j, "policy", pol);
	jout_str(&j, "params", params);
	jout_str(&j, "device", ro->device);
	jout_u64(&j, "dram_bytes", ro->cfg.dram_bytes);
	jout_u64(&j, "ssd_bytes", r->ssd_bytes);
	jout_str(&j, "alloc", ro->cfg.alloc == KV_ALLOC_LOG ? "log" : "slots");
	jout_bool(&j, "trim", ro->cfg.trim);
	jout_str(&j, "streams", ro->cfg.streams_by_kind ? "kind" : "none");
	jout_u64(&j, "requests", st->requests);
	jout_num(&j, "miss_ratio", "%.6f", miss_ratio(st));
	jout_num(&j, "token_miss_ratio", "%.6f", st->prefix_tokens ? (double)st->missed_tokens / st->prefix_tokens : 0);
	jout_object(&j, "hits", JOUT_INLINE);
	jout_u64(&j, "dram_full", st->hits[0][0]);
	jout_u64(&j, "dram_linear", st->hits[0][1]);
	jout_u64(&j, "ssd_full", st->hits[1][0]);
	jout_u64(&j, "ssd_linear", st->hits[1][1]);
	jout_end(&j);
	jout_u64(&j, "ssd_write_bytes", host);
	jout_object(&j, "ssd_write_bytes_by_kind", JOUT_INLINE);
	jout_u64(&j, "full", st->ssd_write_bytes[0]);
	jout_u64(&j, "linear", st->ssd_write_bytes[1]);
	jout_end(&j);
	jout_object(&j, "ssd_objects_written", JOUT_INLINE);
	jout_u64(&j, "full", st->ssd_writes[0]);
	jout_u64(&j, "linear", st->ssd_writes[1]);
	jout_end(&j);
	jout_object(&j, "ssd_written_hit_share", JOUT_INLINE);
	jout_num(&j, "full", "%.4f", st->ssd_writes[0] ? (double)st->ssd_written_hit[0] / st->ssd_writes[0] : 0);
	jout_num(&j, "linear", "%.4f", st->ssd_writes[1] ? (double)st->ssd_written_hit[1] / st->ssd_writes[1] : 0);
	jout_end(&j);
	jout_u64(&j, "ssd_read_bytes", st->ssd_read_bytes);
	jout_u64(&j, "ssd_evictions", st->ssd_evictions);
	jout_u64(&j, "dram_drops", st->dram_drops);
	jout_u64(&j, "unreachable_freed", st->unreachable);
	jout_u64(&j, "not_admitted", st->not_admitted);
	jout_num(&j, "trace_duration_s", "%.3f", r->duration);
	jout_num(&j, "ssd_host_bytes_per_day", "%.6g", r->bpd);
	if (r->have_ftl && r->fs.host_write_bytes) {
		jout_num(&j, "waf", "%.4f", r->fs.waf_window);
		jout_num(&j, "waf_cumulative", "%.4f", r->fs.waf_cumulative);
		jout_u64(&j, "erases", r->fs.erases);
		jout_num(&j, "drive_writes", "%.4f", r->drive_writes);
		jout_bool(&j, "steady", r->drive_writes >= STEADY_DRIVE_WRITES);
	} else if (r->have_ftl) { /* nothing written: WAF is undefined */
		jout_null(&j, "waf");
		jout_null(&j, "waf_cumulative");
		jout_u64(&j, "erases", r->fs.erases);
	} else {
		jout_null(&j, "waf");
	}
	/* no SSD writes: infinite lifetimes, null in JSON */
	jout_object(&j, "lifetime_days", JOUT_INLINE);
	jout_num(&j, "tbw", "%.6g", r->tbw_days);
	if (r->have_ftl) {
		jout_num(&j, "naive_pe", "%.6g", r->lt.naive_pe_days);
		jout_num(&j, "erase", "%.6g", r->lt.erase_days);
		jout_str(&j, "eol_reason", r->lt.eol_reason);
		jout_str(&j, "basis", r->lt.basis);
	} else {
		jout_null(&j, "naive_pe");
		jout_null(&j, "erase");
	}
	jout_end(&j);
	jout_str(&j, "ssd_read_timing", r->have_ftl ? "emulated-ssd" : "bandwidth-model");
	jout_object(&j, "load_latency_s", JOUT_INLINE);
	jout_num(&j, "mean", "%.6g", r->lat_mean);
	jout_num(&j, "p99", "%.6g", r->lat_p99);
	jout_end(&j);
	double per = 1000.0 / (double)st->requests;
	jout_object(&j, "cost_per_1k_requests", JOUT_INLINE);
	jout_num(&j, "gpu_recompute", "%.6g", r->cost_gpu * per);
	jout_num(&j, "ssd_wear", "%.6g", r->cost_ssd * per);
	jout_num(&j, "total", "%.6g", (r->cost_gpu + r->cost_ssd) * per);
	jout_end(&j);
	jout_u64(&j, "dram_peak_bytes", st->dram_peak);
	jout_u64(&j, "ssd_peak_bytes", st->ssd_peak);
	jout_num(&j, "wall_s", "%.3f", r->wall);
	jout_end(&j);
	return fg_json_finish(&j);
}

int cmd_models(int argc, char **argv)
{
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: femu-gandalf models [--json]\n\nList the model catalog (%s/models.ini): bytes of "
		       "full-attention KV per token and of one linear state.\nExample:\n  femu-gandalf models\n",
		       kv_model_dir());
		return 0;
	}
	if (argc > 1 && !json) {
		fprintf(stderr, "femu-gandalf models: unexpected argument '%s'\n", argv[1]);
		return EXIT_USAGE;
	}
	return kv_model_list(stdout, json) ? 1 : 0;
}

static void print_text(const struct kv_run_opts *ro, const char *pol, const char *params, const struct kv_result *r)
{
	const struct kv_stats *st = &r->st;
	char b1[32], b2[32], b3[32], b4[32]; /* one per fg_human() in a printf */
	uint64_t host = st->ssd_write_bytes[0] + st->ssd_write_bytes[1];
	printf("policy %s%s%s on %s, model %s, DRAM %s, SSD %s (%s)\n", pol, *params ? " " : "", params, ro->trace,
	       ro->cfg.model.name, fg_human((double)ro->cfg.dram_bytes, b1), fg_human((double)r->ssd_bytes, b2),
	       ro->device);
	printf("  requests %llu over %.1f h; miss ratio %.4f (blocks)\n", (unsigned long long)st->requests,
	       r->duration / 3600, miss_ratio(st));
	printf("  hits: DRAM %llu full + %llu linear, SSD %llu full + %llu linear\n",
	       (unsigned long long)st->hits[0][0], (unsigned long long)st->hits[0][1],
	       (unsigned long long)st->hits[1][0], (unsigned long long)st->hits[1][1]);
	printf("  SSD writes %s (full %s, linear %s), reads %s\n", fg_human((double)host, b1),
	       fg_human((double)st->ssd_write_bytes[0], b2), fg_human((double)st->ssd_write_bytes[1], b3),
	       fg_human((double)st->ssd_read_bytes, b4));
	if (r->have_ftl) {
		printf("  WAF %.3f; lifetime: TBW division %.1f d, naive P/E %.1f d, erase count %.1f d (%s, %s)\n",
		       r->fs.waf_window, r->tbw_days, r->lt.naive_pe_days, r->lt.erase_days, r->lt.eol_reason,
		       r->lt.basis);
		if (r->drive_writes < STEADY_DRIVE_WRITES)
			printf("  note: the drive was written %.2fx its capacity: not steady state, so the erase-count "
			       "lifetime is not yet meaningful; replay with --loop N\n", r->drive_writes);
	} else {
		printf("  lifetime: TBW division %.1f days (no device: WAF not measured)\n", r->tbw_days);
	}
	printf("  load latency mean %.3f s, p99 %.3f s; cost per 1k requests $%.4f\n", r->lat_mean, r->lat_p99,
	       (r->cost_gpu + r->cost_ssd) * 1000.0 / (double)st->requests);
}

static void csv_header(void)
{
	printf("policy,params,requests,miss_ratio,ssd_write_bytes,ssd_write_full,ssd_write_linear,ssd_read_bytes,"
	       "hit_share_full,hit_share_linear,waf,lifetime_tbw_days,lifetime_naive_pe_days,lifetime_erase_days,"
	       "latency_mean_s,latency_p99_s,cost_per_1k,wall_s\n");
}

/* s as one quoted CSV field (RFC 4180: quotes doubled), so a comma or a quote stays inside it */
static void csv_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void csv_row(const char *pol, const char *params, const struct kv_result *r)
{
	const struct kv_stats *st = &r->st;
	printf("%s,", pol); /* a policy name: [a-z-] */
	csv_quoted(params);
	printf(",%llu,%.6f,%llu,%llu,%llu,%llu,%.4f,%.4f,", (unsigned long long)st->requests,
	       miss_ratio(st), (unsigned long long)(st->ssd_write_bytes[0] + st->ssd_write_bytes[1]),
	       (unsigned long long)st->ssd_write_bytes[0], (unsigned long long)st->ssd_write_bytes[1],
	       (unsigned long long)st->ssd_read_bytes,
	       st->ssd_writes[0] ? (double)st->ssd_written_hit[0] / st->ssd_writes[0] : 0,
	       st->ssd_writes[1] ? (double)st->ssd_written_hit[1] / st->ssd_writes[1] : 0);
	if (r->have_ftl && r->fs.host_write_bytes)
		printf("%.4f,%.6g,%.6g,%.6g,", r->fs.waf_window, r->tbw_days, r->lt.naive_pe_days, r->lt.erase_days);
	else if (r->have_ftl) /* nothing written: WAF undefined, lifetimes infinite */
		printf(",%.6g,%.6g,%.6g,", r->tbw_days, r->lt.naive_pe_days, r->lt.erase_days);
	else
		printf(",%.6g,,,", r->tbw_days);
	printf("%.6g,%.6g,%.6g,%.3f\n", r->lat_mean, r->lat_p99,
	       (r->cost_gpu + r->cost_ssd) * 1000.0 / (double)st->requests, r->wall);
	fflush(stdout);
}

/* Give a policy that declares it the value of a CLI alias (--target-years: a parameter of every
 * policy with a write budget): appended to its parameters, so it shows in the output. */
static void add_alias(const struct kv_policy *pol, const char *name, double v, char *buf,
                      size_t len)
{
	if (v && kv_policy_param(pol, name))
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s=%.17g", *buf ? "," : "", name,
		         v);
}

int cmd_kv(int argc, char **argv)
{
	char *trace = NULL, *model = "qwen3-next-80b-a3b", *dram_s = "100G", *ssd_s = NULL, *policy = "gandalf";
	char *device = "ent-tlc-1t", *trim = "on", *streams = "none", *alloc = "slots";
	char **sets = NULL, **params = NULL;
	gboolean json = FALSE, sweep = FALSE;
	gint loops = 1;
	double target_years = 0;
	struct trace_cli tc = {0};
	struct kv_run_opts ro = {0};
	kv_config_default(&ro.cfg);
	GOptionEntry opts[] = {
	        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace,
	         "KV-request trace (file or WEKA directory)", "T"},
	        {"model", 'm', 0, G_OPTION_ARG_FILENAME, &model,
	         "model from the catalog (femu-gandalf models)", "M"},
	        {"dram", 0, 0, G_OPTION_ARG_STRING, &dram_s, "DRAM tier bytes (default 100G)",
	         "SIZE"},
	        {"ssd", 0, 0, G_OPTION_ARG_STRING, &ssd_s,
	         "SSD tier bytes (default: the whole device)", "SIZE"},
	        {"policy", 'p', 0, G_OPTION_ARG_STRING, &policy, "placement policy, or all", "P"},
	        {"param", 0, 0, G_OPTION_ARG_STRING_ARRAY, &params,
	         "policy parameter name=value (repeatable)", "K=V"},
	        {"sweep", 0, 0, G_OPTION_ARG_NONE, &sweep,
	         "run the policy's (or every policy's) grid; CSV output", NULL},
	        {"device", 'd', 0, G_OPTION_ARG_FILENAME, &device,
	         "drive preset for the SSD tier, or none (TBW only)", "PRESET"},
	        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
	         "override a drive config key (repeatable)", "KEY=VALUE"},
	        {"trim", 0, 0, G_OPTION_ARG_STRING, &trim,
	         "TRIM evicted SSD objects: on (default) | off", "on|off"},
	        {"alloc", 0, 0, G_OPTION_ARG_STRING, &alloc,
	         "SSD LBA allocator: slots (default) | log (circular, FIFO)", "A"},
	        {"streams", 0, 0, G_OPTION_ARG_STRING, &streams,
	         "placement hints: none (default) | kind (linear vs full)", "S"},
	        {"loop", 0, 0, G_OPTION_ARG_INT, &loops,
	         "replay the trace N times (toward steady state)", "N"},
	        {"target-years", 0, 0, G_OPTION_ARG_DOUBLE, &target_years,
	         "alias of --param target_years=Y (gandalf: SSD write budget to last this long)",
	         "Y"},
	        {"ssd-gbps", 0, 0, G_OPTION_ARG_DOUBLE, &ro.cfg.ssd_gbps,
	         "SSD read bandwidth without a device (default 10)", "GB/s"},
	        {"pcie-gbps", 0, 0, G_OPTION_ARG_DOUBLE, &ro.cfg.pcie_gbps,
	         "DRAM -> GPU bandwidth (default 50)", "GB/s"},
	        {"prefill", 0, 0, G_OPTION_ARG_DOUBLE, &ro.cfg.prefill_tokens_per_s,
	         "recompute rate, tokens/s (default 60000)", "R"},
	        {"gpu-hour", 0, 0, G_OPTION_ARG_DOUBLE, &ro.cfg.gpu_usd_per_hour,
	         "GPU price, $/hour (default 2.5)", "USD"},
	        {"ssd-price", 0, 0, G_OPTION_ARG_DOUBLE, &ro.cfg.ssd_usd_per_tb,
	         "SSD price, $ per TB of user capacity (default 100)", "USD"},
	        {"json", 'j', 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
	        {NULL},
	};
	GOptionContext *ctx = g_option_context_new("- a KV-cache tier (DRAM + emulated SSD) under a placement policy");
	g_option_context_add_main_entries(ctx, opts, NULL);
	g_option_context_add_main_entries(ctx, fg_trace_entries(&tc), NULL);
	char desc[8192], pols[256], table[6144] = "";
	FILE *mf = fmemopen(pols, sizeof(pols), "w");
	kv_policy_list(mf);
	fclose(mf);
	mf = fmemopen(table, sizeof(table), "w");
	kv_policy_help(mf);
	fclose(mf);
	snprintf(desc, sizeof(desc),
	         "Policies: %s (docs/policies.md).\n"
	         "Parameters (--param NAME=VALUE; [min..max]; --sweep runs the grid):\n%s\n"
	         "Examples:\n"
	         "  femu-gandalf kv --trace traces/multiturn-small.jsonl --model "
	         "qwen3-next-80b-a3b --dram 8G --ssd 32G \\\n"
	         "      --device ent-tlc-1t --set blocks_per_plane=56 --policy gandalf --param "
	         "lambda=4\n"
	         "  femu-gandalf kv --trace ../shared/traces/weka-claude-code --policy all --sweep "
	         "--device none --ssd 1T\n",
	         pols, table);
	g_option_context_set_description(ctx, desc);
	int rc = EXIT_USAGE;
	if (!fg_parse_opts(ctx, &argc, &argv))
		goto out;
	char err[1024];
	unsigned long long dram = 0, ssd = 0;
	if (!trace) {
		fprintf(stderr, "femu-gandalf: --trace is required (try --help)\n");
		goto out;
	}
	if (!fg_parse_size(dram_s, &dram) || !dram) {
		fprintf(stderr, "femu-gandalf: --dram %s: must be a size > 0 (e.g. 100G)\n", dram_s);
		goto out;
	}
	if (ssd_s && (!fg_parse_size(ssd_s, &ssd) || !ssd)) {
		fprintf(stderr, "femu-gandalf: --ssd %s: must be a size > 0 (e.g. 1T)\n", ssd_s);
		goto out;
	}
	if (strcmp(trim, "on") && strcmp(trim, "off")) {
		fprintf(stderr, "femu-gandalf: --trim %s: must be on or off\n", trim);
		goto out;
	}
	if (strcmp(alloc, "slots") && strcmp(alloc, "log")) {
		fprintf(stderr, "femu-gandalf: --alloc %s: must be slots or log\n", alloc);
		goto out;
	}
	if (strcmp(streams, "none") && strcmp(streams, "kind")) {
		fprintf(stderr, "femu-gandalf: --streams %s: must be none or kind\n", streams);
		goto out;
	}
	if (loops < 1 || ro.cfg.ssd_gbps <= 0 || ro.cfg.pcie_gbps <= 0 ||
	    ro.cfg.prefill_tokens_per_s <= 0 || target_years < 0) {
		fprintf(stderr, "femu-gandalf: --loop, --ssd-gbps, --pcie-gbps and --prefill must be > 0\n");
		goto out;
	}
	if (kv_model_load(model, &ro.cfg.model, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: --model %s: %s\n", model, err);
		goto out;
	}
	if (fg_trace_opts(&tc, &ro.to))
		goto out;
	ro.trace = trace;
	ro.device = device;
	ro.sets = sets;
	ro.loops = loops;
	ro.json = json;
	ro.cfg.dram_bytes = dram;
	ro.cfg.ssd_bytes = ssd;
	ro.cfg.trim = !strcmp(trim, "on");
	ro.cfg.streams_by_kind = !strcmp(streams, "kind");
	ro.cfg.alloc = strcmp(alloc, "log") ? KV_ALLOC_SLOTS : KV_ALLOC_LOG;
	/* which policies */
	const struct kv_policy *one = NULL;
	if (strcmp(policy, "all")) {
		one = kv_policy_find(policy);
		if (!one) {
			fprintf(stderr, "femu-gandalf: --policy %s: unknown policy (known: %s, or all)\n", policy, pols);
			goto out;
		}
	}
	if (!one && !sweep && params) {
		fprintf(stderr, "femu-gandalf: --param needs a single --policy\n");
		goto out;
	}
	char joined[256] = "";
	for (char **p = params; p && *p; p++)
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s", *joined ? "," : "", *p);
	if (kv_trace_load(trace, &ro.to, &ro.kt, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		goto out;
	}
	if (!ro.kt.n) {
		fprintf(stderr, "femu-gandalf: %s: no usable requests in the trace\n", trace);
		goto out;
	}
	if (sweep || !one)
		csv_header();
	rc = 0;
	for (int i = 0; kv_policies[i] && !rc; i++) {
		const struct kv_policy *pol = kv_policies[i];
		if (one && pol != one)
			continue;
		/* an offline policy's pass over the trace, once for all its runs (one-pass
		 * knowledge is only made for one pass: run_one() refuses --loop) */
		if (pol->prepare && !(pol->one_pass && loops != 1)) {
			if (!(ro.prepared = pol->prepare(&ro.kt, &ro.cfg, err, sizeof(err)))) {
				fprintf(stderr, "femu-gandalf: %s\n", err);
				rc = 1;
				break;
			}
			ro.prepared_for = pol;
		}
		uint64_t npts = sweep ? kv_sweep_points(pol) : 1;
		for (uint64_t j = 0; j < npts && !rc; j++) {
			struct kv_result res;
			char pt[512];
			snprintf(pt, sizeof(pt), "%s", joined);
			if (sweep)
				kv_sweep_point(pol, j, pt, sizeof(pt));
			add_alias(pol, "target_years", target_years, pt, sizeof(pt));
			rc = run_one(&ro, pol, pt, &res);
			if (rc)
				break;
			if (sweep || !one)
				csv_row(pol->name, pt, &res);
			else if (json)
				rc = print_json(&ro, pol->name, pt, &res);
			else
				print_text(&ro, pol->name, pt, &res);
			free(res.st.lat);
		}
		if (ro.prepared_for) {
			ro.prepared_for->unprepare(ro.prepared);
			ro.prepared_for = NULL;
			ro.prepared = NULL;
		}
	}
out:
	if (ro.prepared_for)
		ro.prepared_for->unprepare(ro.prepared);
	kv_trace_free(&ro.kt);
	g_option_context_free(ctx);
	return rc;
}
