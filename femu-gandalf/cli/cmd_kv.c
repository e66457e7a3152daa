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
 * The run itself, its figures and the JSON and CSV writers are run/kv_run.c's (docs/run.md):
 * this file parses the flags, loads the model and the trace, resolves the drive preset, calls
 * kv_run() point by point and prints (the text form is its own).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "cli.h"
#include "err.h"
#include "kvsim.h"
#include "drive_presets.h"
#include "run.h"
#include "aiotarget.h"
#include "store.h"

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

/* The drive's lines: WAF, the three lifetimes and what they rest on, end of life. */
static void print_drive_text(const struct kv_result *r)
{
	const char *mark = r->lt.steady ? "" : "*";
	if (r->eol.reached) /* (measured, not extrapolated: no steady verdict applies) */
		printf("  WAF %.3f; lifetime: TBW division %.3g d, naive P/E %.3g d, erase count "
		       "%.3g d: end of life reached at this age (%s)\n",
		       r->fs.waf_window, r->tbw_days, r->lt.naive_pe_days, r->lt.erase_days,
		       r->eol.cause);
	else
		printf("  WAF %.3f; lifetime: TBW division %.1f d, naive P/E %.1f d, erase count "
		       "%.1f d%s (%s, %s; at the cumulative erase rate %.1f d%s)\n",
		       r->fs.waf_window, r->tbw_days, r->lt.naive_pe_days, r->lt.erase_days, mark,
		       r->lt.eol_reason, r->lt.basis, r->lt.erase_cumulative_days, mark);
	if (!r->lt.steady && !r->eol.reached) {
		char moved[128];
		if (isnan(r->pass_waf_spread))
			snprintf(moved, sizeof(moved), "its passes are too few for two groups of "
			         ">= %.1f capacities to compare", RUN_PASS_GROUP);
		else
			snprintf(moved, sizeof(moved), "its WAF moved %.1f%% between the last two "
			         "groups of passes", 100 * r->pass_waf_spread);
		printf("  * not steady: the drive was written %.2fx its capacity and %s (steady: "
		       ">= %.0fx and <= %.0f%%), so the erase count does not yet say how long it "
		       "lives; replay with --drive-writes X\n",
		       r->drive_writes, moved, FTL_STEADY_DRIVE_WRITES, 100 * FTL_STEADY_WAF_RANGE);
	}
	if (r->drive_writes_target && r->drive_writes < r->drive_writes_target)
		printf("  note: --drive-writes %g not reached in %d passes (--max-loops)\n",
		       r->drive_writes_target, r->passes);
	else if (r->until_steady && !r->lt.steady)
		printf("  note: --until-steady: not steady in %d passes (--max-loops)\n",
		       r->passes);
	if (r->accel.factor)
		printf("  accelerated x%g (P/E %u): end of life after %.1f d (x F), against %.1f d "
		       "extrapolated by the rated drive at its first steady pass\n",
		       r->accel.factor, r->accel.pe_cycles, r->accel.eol_days,
		       r->accel.extrapolated_days);
	run_eol_text(&r->eol, stdout);
	if (r->st.ftl_errors)
		printf("  %llu SSD I/Os failed on the drive (ftl_errors)\n",
		       (unsigned long long)r->st.ftl_errors);
}

static void print_text(const struct kv_result *r)
{
	const struct kv_stats *st = &r->st;
	char b1[32], b2[32], b3[32], b4[32]; /* one per fg_human() in a printf */
	uint64_t host = st->ssd_write_bytes[0] + st->ssd_write_bytes[1];
	printf("policy %s%s%s on %s, model %s, DRAM %s, SSD %s (%s)\n", r->policy,
	       *r->params ? " " : "", r->params, r->trace, r->cfg.model.name,
	       fg_human((double)r->cfg.dram_bytes, b1), fg_human((double)r->cfg.ssd_bytes, b2),
	       r->device);
	printf("  requests %llu in %d pass%s over %.1f h; miss ratio %.4f (blocks)\n",
	       (unsigned long long)st->requests, r->passes, r->passes == 1 ? "" : "es",
	       r->duration / 3600, kv_result_miss_ratio(r));
	if (r->skipped)
		printf("  %llu malformed record%s of the trace skipped (--skip-bad)\n",
		       (unsigned long long)r->skipped, r->skipped == 1 ? "" : "s");
	if (r->peak_active) {
		double share = (double)r->cfg.dram_bytes / (double)r->peak_active;
		if (share < 10) /* (not "8.19e+05%": over 10x, a multiple) */
			printf("  peak active KV %s: DRAM holds %.3g%% of it\n",
			       fg_human((double)r->peak_active, b1), 100.0 * share);
		else
			printf("  peak active KV %s: DRAM holds %.0f times it\n",
			       fg_human((double)r->peak_active, b1), share);
	}
	printf("  hits: DRAM %llu full + %llu linear, SSD %llu full + %llu linear\n",
	       (unsigned long long)st->hits[0][0], (unsigned long long)st->hits[0][1],
	       (unsigned long long)st->hits[1][0], (unsigned long long)st->hits[1][1]);
	printf("  SSD writes %s (full %s, linear %s), reads %s\n", fg_human((double)host, b1),
	       fg_human((double)st->ssd_write_bytes[0], b2), fg_human((double)st->ssd_write_bytes[1], b3),
	       fg_human((double)st->ssd_read_bytes, b4));
	if (r->have_ftl) {
		print_drive_text(r);
	} else {
		printf("  lifetime: TBW division %.1f days (no device: WAF not measured)\n", r->tbw_days);
	}
	printf("  load latency mean %.3f s, p99 %.3f s; cost per 1k requests $%.4f\n", r->lat_mean, r->lat_p99,
	       (r->cost_gpu + r->cost_ssd) * 1000.0 / (double)st->requests);
	if (r->nfig) {
		printf("  %s learned:", r->policy);
		for (int i = 0; i < r->nfig; i++)
			printf(" %s %.4g", r->fig[i].name, r->fig[i].value);
		printf("\n");
	}
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

static const char kv_device_def[] = "ent-tlc-1t", kv_trim_def[] = "on";
#define AIO_TARGET_DEFAULT_IODEPTH_CLI 32

/* The flags, as GOption fills them, and what the command keeps across runs. */
struct kv_cli {
	char *trace, *model, *dram, *ssd, *policy, *device, *trim, *streams, *alloc, *region;
	char **sets, **params;
	gboolean json, sweep, csv;
	gint loops, max_loops;
	gchar *loop_ids;
	double drive_writes, accelerate;
	/* the store (--target): a real device or file in a backend's layout */
	char *target, *layout, *meta, *record, *timing;
	gboolean capture, force, no_fences, until_steady;
	gint iodepth, concurrency;
	struct store_opts so;
	double target_years;
	struct trace_cli tc;
	struct trace_opts to;
	struct kv_trace kt; /* parsed once, replayed by every run */
	bool kt_borrowed;   /* kt is a batch's kept trace (kv_trace_get()): not freed here */
	/* a sweep's jobs (cmd_sweep.c): --job runs one point, --output keeps it; with jobs set,
	 * the points are written as commands instead of run */
	char *job, *output;
	const struct kv_policy *job_pol;
	uint64_t job_point;
	FILE *out; /* stdout, or a memory stream saved whole into --output at the end */
	char *out_buf;
	size_t out_len;
	const struct kv_jobs *jobs;
	struct kv_trace_keep *keep; /* a batch's kept trace (sweep --emit-batch, --run-batch) */
	char pols[256];     /* the policy names, for --help and errors */
	char joined[256];   /* the --param values as one "k=v,..." */
};

static void kv_cli_default(struct kv_cli *c, struct kv_run_opts *ro)
{
	memset(c, 0, sizeof(*c));
	c->model = "qwen3-next-80b-a3b";
	c->dram = "100G";
	c->policy = "gandalf";
	c->device = (char *)kv_device_def;
	c->trim = (char *)kv_trim_def;
	c->loop_ids = "fresh";
	c->accelerate = NAN; /* (not given: an explicit 0 is refused) */
	c->layout = "lmcache-rawblock";
	c->timing = "afap";
	c->iodepth = AIO_TARGET_DEFAULT_IODEPTH_CLI;
	c->streams = "none";
	c->alloc = "slots";
	c->loops = 1;
	memset(ro, 0, sizeof(*ro));
	kv_config_default(&ro->cfg);
}

/* The tier's flags: the trace, the model, DRAM and SSD, the policy, the drive, placement. */
static void kv_tier_entries(GOptionContext *ctx, struct kv_cli *c, struct kv_config *cfg)
{
	GOptionEntry opts[] = {
	        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &c->trace,
	         "KV-request trace (file or WEKA directory)", "T"},
	        {"model", 'm', 0, G_OPTION_ARG_FILENAME, &c->model,
	         "model from the catalog (femu-gandalf models)", "M"},
	        {"dram", 0, 0, G_OPTION_ARG_STRING, &c->dram, "DRAM tier bytes (default 100G)",
	         "SIZE"},
	        {"ssd", 0, 0, G_OPTION_ARG_STRING, &c->ssd,
	         "SSD tier bytes (default: the whole device)", "SIZE"},
	        {"policy", 'p', 0, G_OPTION_ARG_STRING, &c->policy, "placement policy, or all",
	         "P"},
	        {"param", 0, 0, G_OPTION_ARG_STRING_ARRAY, &c->params,
	         "policy parameter name=value (repeatable)", "K=V"},
	        {"sweep", 0, 0, G_OPTION_ARG_NONE, &c->sweep,
	         "run the policy's (or every policy's) grid; CSV output", NULL},
	        {"csv", 0, 0, G_OPTION_ARG_NONE, &c->csv,
	         "print one run as a CSV row too (as --sweep and --policy all do)", NULL},
	        {"device", 'd', 0, G_OPTION_ARG_FILENAME, &c->device,
	         "drive preset for the SSD tier, or none (TBW only)", "PRESET"},
	        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &c->sets,
	         "override a drive config key (repeatable)", "KEY=VALUE"},
	        {"trim", 0, 0, G_OPTION_ARG_STRING, &c->trim,
	         "TRIM evicted SSD objects: on (default) | off", "on|off"},
	        {"alloc", 0, 0, G_OPTION_ARG_STRING, &c->alloc,
	         "SSD LBA allocator: slots (default) | log (circular, FIFO) | region (erase-unit "
	         "regions cleaned whole, docs/placement.md)",
	         "A"},
	        {"region", 0, 0, G_OPTION_ARG_STRING, &c->region,
	         "--alloc region: region size (default: the drive's write stripe, >= 4 states)",
	         "SIZE"},
	        {"readmit", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->readmit,
	         "--alloc region: re-admitted bytes per cleaned region, share of it (default "
	         "0.25, at most 0.5)",
	         "F"},
	        {"streams", 0, 0, G_OPTION_ARG_STRING, &c->streams,
	         "placement hints: none (default) | kind (linear vs full) | session[:N] (N "
	         "session groups, default 8) | kind+session[:N]",
	         "S"},
	        {NULL},
	};
	g_option_context_add_main_entries(ctx, opts, NULL); /* GLib copies the table */
}

/* How many passes over the trace, and the write budget's horizon. */
static void kv_pass_entries(GOptionContext *ctx, struct kv_cli *c)
{
	GOptionEntry opts[] = {
	        {"loop", 0, 0, G_OPTION_ARG_INT, &c->loops,
	         "replay the trace N times (toward steady state)", "N"},
	        {"loop-ids", 0, 0, G_OPTION_ARG_STRING, &c->loop_ids,
	         "passes after the first: fresh (default: new block and session ids, new users "
	         "with the same load, as a deployment sees) | same (every pass replays the same "
	         "content, so what a policy kept from the last pass is hit again: it measures "
	         "how well a policy memorises a trace, and flatters the ones that keep most)",
	         "fresh|same"},
	        {"drive-writes", 0, 0, G_OPTION_ARG_DOUBLE, &c->drive_writes,
	         "instead of --loop: passes until the drive's host writes reach X user capacities "
	         "(3.2 for a steady lifetime; at most --max-loops)",
	         "X"},
	        {"until-steady", 0, 0, G_OPTION_ARG_NONE, &c->until_steady,
	         "passes until the lifetime is steady (>= 3 drive writes, WAF within 5% from one "
	         "group of passes to the next; after --drive-writes X if given; at most --max-loops)",
	         NULL},
	        {"max-loops", 0, 0, G_OPTION_ARG_INT, &c->max_loops,
	         "--drive-writes, --until-steady, --accelerate: the most passes (default 1000)", "N"},
	        {"accelerate", 0, 0, G_OPTION_ARG_DOUBLE, &c->accelerate,
	         "accelerated aging: the drive's P/E / F, passes until end of life, its lifetime "
	         "x F beside the extrapolated one",
	         "F"},
	        {"target-years", 0, 0, G_OPTION_ARG_DOUBLE, &c->target_years,
	         "alias of --param target_years=Y (gandalf: SSD write budget to last this long)",
	         "Y"},
	        {NULL},
	};
	g_option_context_add_main_entries(ctx, opts, NULL); /* GLib copies the table */
}

/* The cost model's figures, and where the results go (--json, a sweep's --job, --output). */
static void kv_cost_entries(GOptionContext *ctx, struct kv_cli *c, struct kv_config *cfg)
{
	GOptionEntry opts[] = {
	        {"ssd-gbps", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->ssd_gbps,
	         "SSD read bandwidth without a device (default 10)", "GB/s"},
	        {"pcie-gbps", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->pcie_gbps,
	         "DRAM -> GPU bandwidth (default 50)", "GB/s"},
	        {"prefill", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->prefill_tokens_per_s,
	         "recompute rate, tokens/s (default 60000)", "R"},
	        {"gpu-hour", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->gpu_usd_per_hour,
	         "GPU price, $/hour (default 2.5)", "USD"},
	        {"ssd-price", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->ssd_usd_per_tb,
	         "SSD price, $ per TB of user capacity (default 100)", "USD"},
	        {"json", 'j', 0, G_OPTION_ARG_NONE, &c->json, "print one JSON object", NULL},
	        {"job", 0, 0, G_OPTION_ARG_STRING, &c->job,
	         "run only point J (from 0) of policy P's runs: one job of a sweep "
	         "(femu-gandalf sweep --emit-jobs, docs/sweep.md)",
	         "P:J"},
	        {"output", 0, 0, G_OPTION_ARG_FILENAME, &c->output,
	         "write the CSV or JSON into FILE, whole or not at all (a temporary file renamed)",
	         "FILE"},
	        {NULL},
	};
	g_option_context_add_main_entries(ctx, opts, NULL); /* GLib copies the table */
}

/* The store's flags (--target and what needs it). */
static void kv_store_entries(GOptionContext *ctx, struct kv_cli *c)
{
	GOptionEntry opts[] = {
	        {"target", 0, 0, G_OPTION_ARG_FILENAME, &c->target,
	         "run as a store: the SSD tier's I/O goes to this block device or file (libaio, "
	         "O_DIRECT; docs/store.md)",
	         "PATH"},
	        {"layout", 0, 0, G_OPTION_ARG_STRING, &c->layout,
	         "--target: lmcache-rawblock (default) | kvbm | vllm-disk", "L"},
	        {"meta", 0, 0, G_OPTION_ARG_STRING, &c->meta,
	         "--target, lmcache-rawblock: metadata region bytes (default 128M)", "SIZE"},
	        {"record", 0, 0, G_OPTION_ARG_FILENAME, &c->record,
	         "--target: write every I/O as a blk-csv trace, stamped with trace time", "FILE"},
	        {"capture", 0, 0, G_OPTION_ARG_NONE, &c->capture,
	         "--target: the capture mode for lift (write-through, --dram 0; docs/lift.md)",
	         NULL},
	        {"no-fences", 0, 0, G_OPTION_ARG_NONE, &c->no_fences,
	         "--capture: no flush between requests (as a deployment that never flushes)",
	         NULL},
	        {"iodepth", 0, 0, G_OPTION_ARG_INT, &c->iodepth,
	         "--target: I/Os in flight (default 32)", "N"},
	        {"timing", 0, 0, G_OPTION_ARG_STRING, &c->timing,
	         "--target: afap (default) | trace (the trace's spacing) | xN (N x faster)", "T"},
	        {"concurrency", 0, 0, G_OPTION_ARG_INT, &c->concurrency,
	         "--target: N requests in flight at once, their I/O interleaved (default 1)", "N"},
	        {"force", 0, 0, G_OPTION_ARG_NONE, &c->force,
	         "--target: allow a mounted device or one with a filesystem signature", NULL},
	        {NULL},
	};
	g_option_context_add_main_entries(ctx, opts, NULL); /* GLib copies the table */
}

/* The option context: the flag table (in the order --help lists it), the trace flags and
 * --help's description. */
static GOptionContext *kv_context(struct kv_cli *c, struct kv_config *cfg)
{
	GOptionContext *ctx = g_option_context_new("- a KV-cache tier (DRAM + emulated SSD) under a placement policy");
	kv_tier_entries(ctx, c, cfg);
	kv_pass_entries(ctx, c);
	kv_cost_entries(ctx, c, cfg);
	kv_store_entries(ctx, c);
	g_option_context_add_main_entries(ctx, fg_trace_entries(&c->tc), NULL);
	char desc[8192], table[6144] = "";
	FILE *mf = fmemopen(c->pols, sizeof(c->pols), "w");
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
	         c->pols, table);
	g_option_context_set_description(ctx, desc);
	return ctx;
}

/* The store's flags (--target and what needs it). 0, or -1 after printing the error. */
static int kv_store_flags(struct kv_cli *c, const struct kv_run_opts *ro, unsigned long long dram)
{
	struct store_opts *so = &c->so;
	const char *needs = c->meta ? "--meta" : c->record ? "--record" : c->capture ? "--capture"
	                                      : c->concurrency ? "--concurrency" : NULL;
	if (!c->target) {
		if (needs) {
			fprintf(stderr, "femu-gandalf: %s needs --target\n", needs);
			return -1;
		}
		return 0;
	}
	memset(so, 0, sizeof(*so));
	so->target = c->target;
	if (store_layout_parse(c->layout, &so->layout)) {
		fprintf(stderr,
		        "femu-gandalf: --layout %s: must be lmcache-rawblock, kvbm or vllm-disk\n",
		        c->layout);
		return -1;
	}
	unsigned long long meta = 0;
	if (c->meta && (!fg_parse_size(c->meta, &meta) || !meta)) {
		fprintf(stderr, "femu-gandalf: --meta %s: must be a size > 0 (e.g. 128M)\n", c->meta);
		return -1;
	}
	so->meta_bytes = meta;
	if (!fg_parse_timing(c->timing, &so->speed)) {
		fprintf(stderr, "femu-gandalf: --timing %s: must be afap, trace or xN (N > 0)\n",
		        c->timing);
		return -1;
	}
	if (c->iodepth < 1 || c->iodepth > AIO_TARGET_MAX_IODEPTH) {
		fprintf(stderr, "femu-gandalf: --iodepth %d: must be in 1..%d\n", c->iodepth,
		        AIO_TARGET_MAX_IODEPTH);
		return -1;
	}
	so->iodepth = (unsigned)c->iodepth;
	if (c->concurrency < 0 || c->concurrency > 4096) {
		fprintf(stderr, "femu-gandalf: --concurrency %d: must be in 1..4096\n", c->concurrency);
		return -1;
	}
	so->concurrency = (unsigned)c->concurrency;
	so->force = c->force;
	so->placement = strcmp(c->streams, "none") != 0; /* FDP placement IDs by class */
	so->record = c->record;
	so->capture = c->capture;
	so->no_fences = c->no_fences;
	if (c->no_fences && !c->capture) {
		fprintf(stderr, "femu-gandalf: --no-fences needs --capture\n");
		return -1;
	}
	/* neither backend discards a freed slot: the store does only when asked (--trim on) */
	so->trim = c->trim != kv_trim_def && ro->cfg.trim;
	if (c->sweep || !strcmp(c->policy, "all") || c->loops != 1 || c->drive_writes ||
	    c->until_steady || !isnan(c->accelerate)) {
		fprintf(stderr, "femu-gandalf: --target runs one policy once: drop --sweep, --policy "
		                "all, --loop, --drive-writes, --until-steady and --accelerate\n");
		return -1;
	}
	if (c->device != kv_device_def && strcmp(c->device, "none")) {
		fprintf(stderr, "femu-gandalf: --target is the drive: drop --device %s (or run the "
		                "target on an emulated drive: scripts/boot-vm)\n",
		        c->device);
		return -1;
	}
	c->device = "none";
	if (c->capture && (strcmp(c->policy, "write-through") || dram)) {
		fprintf(stderr, "femu-gandalf: --capture needs --policy write-through --dram 0 "
		                "(docs/lift.md: every reuse must be a read)\n");
		return -1;
	}
	return 0;
}

/* The passes: --loop-ids, --loop, --drive-writes, --until-steady, --max-loops, --accelerate.
 * 0, or -1 after printing the error. */
static int kv_pass_flags(const struct kv_cli *c, struct kv_run_opts *ro)
{
	if (strcmp(c->loop_ids, "same") && strcmp(c->loop_ids, "fresh")) {
		fprintf(stderr, "femu-gandalf: --loop-ids %s: must be same or fresh\n", c->loop_ids);
		return -1;
	}
	bool until = c->drive_writes || c->until_steady || !isnan(c->accelerate);
	if (!isnan(c->accelerate) && !(c->accelerate >= 1)) {
		fprintf(stderr, "femu-gandalf: --accelerate %g: must be >= 1 (and at most the drive's "
		                "rated P/E cycles)\n", c->accelerate);
		return -1;
	}
	if (c->drive_writes && !(c->drive_writes > 0 && c->drive_writes <= 1e6)) {
		fprintf(stderr, "femu-gandalf: --drive-writes %g: must be in (0, 1e6]\n",
		        c->drive_writes);
		return -1;
	}
	if (until && c->loops != 1) {
		fprintf(stderr, "femu-gandalf: --loop: drop it: --drive-writes, --until-steady and "
		                "--accelerate choose the passes (cap them with --max-loops)\n");
		return -1;
	}
	if (c->max_loops && (!until || c->max_loops < 1)) {
		fprintf(stderr, "femu-gandalf: --max-loops %d: %s\n", c->max_loops,
		        until ? "must be >= 1" : "needs --drive-writes, --until-steady or --accelerate");
		return -1;
	}
	ro->fresh_ids = !strcmp(c->loop_ids, "fresh");
	ro->drive_writes = c->drive_writes;
	ro->until_steady = c->until_steady;
	ro->accelerate = isnan(c->accelerate) ? 0 : c->accelerate;
	return 0;
}

/* --streams: none, kind, session[:N] or kind+session[:N] into *bykind and *nsess (0: no
 * session streams). 0, or -1 after printing the error. */
static int kv_streams_flag(const char *streams, bool *bykind, unsigned long *nsess)
{
	const char *sp = streams;
	*bykind = !strcmp(sp, "kind") || !strncmp(sp, "kind+session", 12);
	*nsess = 0;
	if (!strncmp(sp, "kind+", 5) && strcmp(sp, "kind"))
		sp += 5;
	if (!strncmp(sp, "session", 7)) {
		char *end = NULL;
		*nsess = sp[7] == ':' ? strtoul(sp + 8, &end, 10) : 8;
		if ((sp[7] && sp[7] != ':') || (sp[7] == ':' && (end == sp + 8 || *end)) ||
		    *nsess < 1 || *nsess > 64) {
			fprintf(stderr, "femu-gandalf: --streams %s: session:N needs N in 1..64\n",
			        streams);
			return -1;
		}
	} else if (strcmp(streams, "none") && strcmp(streams, "kind")) {
		fprintf(stderr,
		        "femu-gandalf: --streams %s: must be none, kind, session[:N] or "
		        "kind+session[:N]\n",
		        streams);
		return -1;
	}
	return 0;
}

/* Where the SSD tier puts objects: --alloc, --region, --readmit, --streams. 0, or -1 after
 * printing the error. */
static int kv_placement_flags(const struct kv_cli *c, struct kv_config *cfg)
{
	if (strcmp(c->alloc, "slots") && strcmp(c->alloc, "log") && strcmp(c->alloc, "region")) {
		fprintf(stderr, "femu-gandalf: --alloc %s: must be slots, log or region\n", c->alloc);
		return -1;
	}
	unsigned long long region = 0;
	if (c->region && (!fg_parse_size(c->region, &region) || !region || region % 4096)) {
		fprintf(stderr, "femu-gandalf: --region %s: must be a size > 0, a multiple of 4 KiB\n",
		        c->region);
		return -1;
	}
	if ((c->region || cfg->readmit != KV_REGION_READMIT_DEF) && strcmp(c->alloc, "region")) {
		fprintf(stderr, "femu-gandalf: --region and --readmit need --alloc region\n");
		return -1;
	}
	if (!(cfg->readmit >= 0 && cfg->readmit <= KV_REGION_READMIT_MAX)) {
		fprintf(stderr, "femu-gandalf: --readmit %g: must be in [0, %g]\n", cfg->readmit,
		        KV_REGION_READMIT_MAX);
		return -1;
	}
	bool bykind;
	unsigned long nsess;
	if (kv_streams_flag(c->streams, &bykind, &nsess))
		return -1;
	cfg->streams_by_kind = bykind;
	cfg->session_streams = (uint32_t)nsess;
	cfg->alloc = !strcmp(c->alloc, "log")      ? KV_ALLOC_LOG
	             : !strcmp(c->alloc, "region") ? KV_ALLOC_REGION
	                                           : KV_ALLOC_SLOTS;
	cfg->region_bytes = region;
	return 0;
}

/* The flags that need nothing loaded, then the model and the tier's config. 0, or -1 after
 * printing the error. */
static int kv_check_flags(struct kv_cli *c, struct kv_run_opts *ro)
{
	char err[1024];
	unsigned long long dram = 0, ssd = 0;
	if (!c->trace) {
		fprintf(stderr, "femu-gandalf: --trace is required (try --help)\n");
		return -1;
	}
	if (!fg_parse_size(c->dram, &dram)) {
		fprintf(stderr, "femu-gandalf: --dram %s: must be a size (e.g. 100G, or 0 with a "
		                "write-through policy)\n",
		        c->dram);
		return -1;
	}
	if (c->ssd && (!fg_parse_size(c->ssd, &ssd) || !ssd)) {
		fprintf(stderr, "femu-gandalf: --ssd %s: must be a size > 0: bytes, or with k M G T P (binary) "
		        "or kB MB GB TB PB (decimal), e.g. 1T or 960GB\n", c->ssd);
		return -1;
	}
	if (strcmp(c->trim, "on") && strcmp(c->trim, "off")) {
		fprintf(stderr, "femu-gandalf: --trim %s: must be on or off\n", c->trim);
		return -1;
	}
	if (kv_pass_flags(c, ro) || kv_placement_flags(c, &ro->cfg))
		return -1;
	{ /* each flag that is wrong, by name */
		const struct {
			const char *flag;
			double v;
			bool ok;
		} pos[] = {
		        {"--loop", c->loops, c->loops >= 1},
		        {"--ssd-gbps", ro->cfg.ssd_gbps, ro->cfg.ssd_gbps > 0},
		        {"--pcie-gbps", ro->cfg.pcie_gbps, ro->cfg.pcie_gbps > 0},
		        {"--prefill", ro->cfg.prefill_tokens_per_s, ro->cfg.prefill_tokens_per_s > 0},
		        {"--target-years", c->target_years, c->target_years >= 0},
		};
		for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++)
			if (!pos[i].ok) {
				fprintf(stderr, "femu-gandalf: %s %g: must be %s\n", pos[i].flag, pos[i].v,
				        i == 4 ? ">= 0" : "> 0");
				return -1;
			}
	}
	if (kv_model_load(c->model, &ro->cfg.model, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: --model %s: %s\n", c->model, err);
		return -1;
	}
	if (fg_trace_opts(&c->tc, &c->to))
		return -1;
	ro->cfg.dram_bytes = dram;
	ro->cfg.ssd_bytes = ssd;
	ro->cfg.trim = !strcmp(c->trim, "on");
	return kv_store_flags(c, ro, dram);
}

void kv_trace_keep_free(struct kv_trace_keep *k)
{
	g_free(k->path);
	kv_trace_free(&k->kt);
	memset(k, 0, sizeof(*k));
}

/* c->kt: --trace loaded, or the batch's kept trace when it is the same file read the same way
 * (then c->kt is borrowed: kv_main() leaves it to the batch). 0, or -1 with the error in err. */
static int kv_trace_get(struct kv_cli *c, char *err, size_t errlen)
{
	struct kv_trace_keep *k = c->keep;
	if (k && k->path && !strcmp(k->path, c->trace) && trace_opts_same(&k->to, &c->to)) {
		c->kt = k->kt;
		c->kt_borrowed = true;
		return 0;
	}
	if (k)
		kv_trace_keep_free(k);
	if (kv_trace_load(c->trace, &c->to, &c->kt, err, errlen))
		return -1;
	if (k) {
		k->path = g_strdup(c->trace);
		k->to = c->to;
		k->kt = c->kt;
		c->kt_borrowed = true;
	}
	return 0;
}

/* Which policies (*one, or NULL for all), the --param values, and the trace. 0, or -1 after
 * printing the error. */
static int kv_select(struct kv_cli *c, struct kv_run_opts *ro, const struct kv_policy **one)
{
	char err[1024];
	*one = NULL;
	if (strcmp(c->policy, "all")) {
		*one = kv_policy_find(c->policy);
		if (!*one) {
			fprintf(stderr,
			        "femu-gandalf: --policy %s: unknown policy (known: %s, or all)\n",
			        c->policy, c->pols);
			return -1;
		}
	}
	if (!*one && c->params) {
		fprintf(stderr, "femu-gandalf: --param needs a single --policy\n");
		return -1;
	}
	/* with --sweep, --param fixes a parameter the grid does not sweep (gandalf's state rules
	 * under its lambda grid, say) */
	for (char **p = c->params; c->sweep && p && *p; p++) {
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(*p, "="), *p);
		const struct kv_param *k = kv_policy_param(*one, name);
		if (k && k->nsweep) {
			fprintf(stderr, "femu-gandalf: --param %s: %s is swept by --sweep; fix only "
			                "parameters the grid does not sweep\n", *p, k->name);
			return -1;
		}
	}
	for (char **p = c->params; p && *p; p++)
		snprintf(c->joined + strlen(c->joined), sizeof(c->joined) - strlen(c->joined),
		         "%s%s", *c->joined ? "," : "", *p);
	if (kv_trace_get(c, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return -1;
	}
	if (c->kt.skipped) /* (counted in the report too: skipped_records) */
		fprintf(stderr, "femu-gandalf: --skip-bad: %llu malformed record%s skipped (the last: %s)\n",
		        (unsigned long long)c->kt.skipped, c->kt.skipped == 1 ? "" : "s",
		        c->kt.skipped_last);
	if (!c->kt.n) {
		fprintf(stderr, "femu-gandalf: %s: no usable requests in the trace\n", c->trace);
		return -1;
	}
	struct kv_active act;
	if (kv_active_peak(&c->kt, &ro->cfg.model, &act, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return -1;
	}
	ro->peak_active = act.peak_bytes;
	ro->trace = c->trace;
	ro->kt = &c->kt;
	ro->device = c->device;
	ro->loops = c->drive_writes || c->until_steady || !isnan(c->accelerate) ? c->max_loops
	                                                                        : c->loops;
	return 0;
}

/*
 * kv_run()'s progress line: the pass, the request, the miss ratio so far, and the share done by
 * what ends the run: the drive writes reached (--drive-writes), the life used (--accelerate),
 * the requests of all the passes (--loop); with --until-steady alone the end is not known.
 */
static void kv_progress(void *arg, const struct kv_run_progress *p)
{
	struct progress *pg = arg;
	char extra[200], pass[48];
	double done = 0, total = 0;
	const struct kv_stats *st = p->st;

	if (p->drive_writes_goal > 0) {
		done = p->drive_writes, total = p->drive_writes_goal;
	} else if (!isnan(p->life_used)) {
		done = p->life_used, total = 1;
	} else if (!p->until_steady) {
		done = (double)(p->pass - 1) * (double)p->requests + (double)p->request;
		total = (double)p->passes * (double)p->requests;
	}
	if (total > 0 && !(p->drive_writes_goal > 0) && isnan(p->life_used))
		snprintf(pass, sizeof(pass), "pass %d/%d", p->pass, p->passes);
	else
		snprintf(pass, sizeof(pass), "pass %d (at most %d)", p->pass, p->passes);
	int n = snprintf(extra, sizeof(extra), "%s, request %llu/%llu, miss %.3f", pass,
	                 (unsigned long long)p->request, (unsigned long long)p->requests,
	                 1 - (double)st->hit_blocks / (st->prefix_blocks ? st->prefix_blocks : 1));
	if (p->drive_writes > 0 && n > 0 && (size_t)n < sizeof(extra))
		snprintf(extra + n, sizeof(extra) - (size_t)n, ", drive written %.2fx", p->drive_writes);
	if (!isnan(p->life_used) && n > 0 && (size_t)n < sizeof(extra))
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", life used %.1f%%",
		         100 * p->life_used);
	progress_update(pg, done, total, extra);
}

/* The store's figures: a "store" object in kv --json. */
static void store_json(const void *arg, struct json_out *j)
{
	const struct store_stats *s = arg;
	jout_object(j, "store", JOUT_BLOCK);
	jout_u64(j, "data_base_bytes", s->base);
	jout_u64(j, "tier_bytes", s->tier_bytes);
	jout_u64(j, "puts", s->puts);
	jout_u64(j, "gets", s->gets);
	jout_u64(j, "verified", s->verified);
	jout_u64(j, "probes", s->probes);
	jout_u64(j, "evictions", s->evictions);
	jout_u64(j, "trims", s->trims);
	jout_u64(j, "fences", s->fences);
	jout_u64(j, "checkpoints", s->checkpoints);
	jout_u64(j, "checkpoints_skipped", s->checkpoints_skipped);
	jout_u64(j, "object_write_bytes", s->object_write_bytes);
	jout_u64(j, "object_read_bytes", s->object_read_bytes);
	jout_u64(j, "meta_write_bytes", s->meta_write_bytes);
	jout_u64(j, "reordered", s->reordered);
	if (s->nclasses) { /* FDP placement (docs/store.md) */
		jout_object(j, "placement", JOUT_BLOCK);
		jout_u64(j, "device_pids", s->npids);
		jout_u64(j, "placed_puts", s->placed_puts);
		jout_u64(j, "unplaced_puts", s->unplaced_puts);
		jout_array(j, "class_pid", JOUT_INLINE);
		for (unsigned k = 0; k < s->nclasses; k++)
			jout_i64(j, NULL, s->class_pid[k]);
		jout_end(j);
		jout_end(j);
	}
	jout_u64(j, "windows_interleaved", s->windows_interleaved);
	jout_u64(j, "ios", s->ios);
	jout_u64(j, "write_bytes", s->write_bytes);
	jout_u64(j, "read_bytes", s->read_bytes);
	jout_u64(j, "discard_bytes", s->discard_bytes);
	jout_u64(j, "flushes", s->flushes);
	jout_num(j, "seconds", "%.3f", s->seconds);
	jout_num(j, "lat_mean_us", "%.2f", s->lat_mean_us);
	jout_num(j, "lat_p99_us", "%.2f", s->lat_p99_us);
	jout_end(j);
}

static void store_text(const struct kv_cli *c, const struct store_stats *s)
{
	char b1[32], b2[32], b3[32];
	printf("store      : %s on %s: %llu puts, %llu gets and %llu probes verified, %llu trims, "
	       "%llu checkpoints (%llu skipped), %llu fences\n",
	       c->layout, c->target, (unsigned long long)s->puts, (unsigned long long)s->gets,
	       (unsigned long long)s->probes, (unsigned long long)s->trims,
	       (unsigned long long)s->checkpoints, (unsigned long long)s->checkpoints_skipped,
	       (unsigned long long)s->fences);
	printf("store I/O  : %s written (%s metadata), %s read, %llu I/Os in %.2f s, mean %.1f us\n",
	       fg_human((double)s->write_bytes, b1), fg_human((double)s->meta_write_bytes, b2),
	       fg_human((double)s->read_bytes, b3), (unsigned long long)s->ios, s->seconds,
	       s->lat_mean_us);
	if (!s->nclasses)
		return;
	printf("placement  : --streams %s over the device's %u non-zero placement IDs: class ->",
	       c->streams, s->npids);
	for (unsigned k = 0; k < s->nclasses; k++)
		s->class_pid[k] < 0 ? printf(" %u:none", k) : printf(" %u:%d", k, s->class_pid[k]);
	printf("; %llu puts placed, %llu without an ID (no ID left)\n",
	       (unsigned long long)s->placed_puts, (unsigned long long)s->unplaced_puts);
}

/* Point j of pol: its "k=v,..." into pt, and ro->drive from --device (into fc). 0, or -1 after
 * printing the error. */
static int kv_point_setup(struct kv_cli *c, struct kv_run_opts *ro, const struct kv_policy *pol,
                          uint64_t j, char *pt, size_t len, struct ftl_config *fc)
{
	snprintf(pt, len, "%s", c->joined);
	if (c->sweep) {
		kv_sweep_point(pol, j, pt, len);
		if (*c->joined)
			snprintf(pt + strlen(pt), len - strlen(pt), "%s%s", *pt ? "," : "", c->joined);
	}
	add_alias(pol, "target_years", c->target_years, pt, len);
	ro->drive = NULL;
	if (strcmp(c->device, "none")) {
		if (fg_config_from_opts(fc, c->device, c->sets, NULL))
			return -1;
		ro->drive = fc;
	}
	return 0;
}

/* sweep --emit-jobs: pol's points as jobs, once its first point passed kv_run()'s checks (the
 * others differ only in the grid's values). 0, or an exit code after printing the error. */
static int kv_emit_points(struct kv_cli *c, struct kv_run_opts *ro, const struct kv_policy *pol,
                          uint64_t npts)
{
	char pt[512], err[FG_ERR_LEN + FG_ERR_CONTEXT];
	struct ftl_config fc;
	if (kv_point_setup(c, ro, pol, 0, pt, sizeof(pt), &fc))
		return EXIT_USAGE;
	if (kv_run_check(ro, pol, pt, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return EXIT_USAGE;
	}
	int rc = 0;
	for (uint64_t j = 0; j < npts && !rc; j++)
		rc = c->jobs->emit(c->jobs, pol->name, j);
	return rc;
}

/* Point j of pol (its grid's with --sweep, else the --param values): run it and print it.
 * 0, or an exit code after printing the error. */
static int kv_point(struct kv_cli *c, struct kv_run_opts *ro, const struct kv_policy *pol,
                    uint64_t j, bool csv, uint64_t k, uint64_t npoints)
{
	char what[600];
	char pt[512], err[FG_ERR_LEN + FG_ERR_CONTEXT];
	struct ftl_config fc;
	struct kv_result res;
	struct progress pg;
	if (kv_point_setup(c, ro, pol, j, pt, sizeof(pt), &fc))
		return EXIT_USAGE;
	struct store *st = NULL;
	struct store_stats ss;
	if (c->target) {
		c->so.chunk_bytes = (uint64_t)c->kt.rq[0].block_tokens *
		                    ro->cfg.model.full_kv_bytes_per_token;
		c->so.progress = isatty(2);
		c->so.total_hint = 0;
		if (!(st = store_open(&c->so, &ro->cfg, err, sizeof(err)))) {
			fprintf(stderr, "femu-gandalf: %s\n", err);
			return EXIT_USAGE;
		}
		ro->sink = store_sink(st);
		ro->more_json = store_json;
		ro->more_arg = &ss;
	}
	/* with several runs, which one: "point 3/40, lru-k k=2" */
	if (npoints > 1)
		snprintf(what, sizeof(what), "point %llu/%llu, %s%s%s", (unsigned long long)k,
		         (unsigned long long)npoints, pol->name, *pt ? " " : "", pt);
	else
		snprintf(what, sizeof(what), "%s", pol->name);
	progress_init(&pg, what);
	ro->progress = pg.on ? kv_progress : NULL;
	ro->progress_arg = &pg;
	int rc = kv_run(ro, pol, pt, &res, err, sizeof(err));
	progress_end(&pg);
	if (st) {
		char e2[1024];
		if (rc && res.sink_failed)
			snprintf(err + strlen(err), sizeof(err) - strlen(err), ": %s",
			         store_error(st));
		if (store_close(st, e2, sizeof(e2)) && !rc) {
			snprintf(err, sizeof(err), "%s", e2);
			rc = RUN_E_FAIL;
		}
		store_stats(st, &ss);
		store_free(st);
		if (!rc && c->capture && ss.evictions)
			fprintf(stderr,
			        "femu-gandalf: warning: --capture: %llu objects were evicted: the tier "
			        "is too small for a capture lift can rebuild exactly (docs/lift.md)\n",
			        (unsigned long long)ss.evictions);
	}
	if (rc) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		kv_result_free(&res);
		return rc == RUN_E_FAIL ? 1 : EXIT_USAGE;
	}
	if (csv)
		kv_result_csv_row(&res, c->out);
	else if (c->json) {
		struct json_out j;
		jout_init(&j, c->out);
		kv_result_json(&res, &j);
		rc = fg_json_finish(&j);
	} else {
		print_text(&res);
		if (st)
			store_text(c, &ss);
	}
	kv_result_free(&res);
	return rc;
}

/* Every point of every policy asked for. 0, or an exit code after printing the error. */
static int kv_policies_run(struct kv_cli *c, struct kv_run_opts *ro, const struct kv_policy *one)
{
	char err[1024];
	bool csv = c->sweep || !one || c->csv;
	int rc = 0;
	uint64_t npoints = 0, k = 0; /* the runs to make, for the progress line */
	for (int i = 0; kv_policies[i]; i++)
		if ((!one || kv_policies[i] == one) && (!c->job_pol || kv_policies[i] == c->job_pol))
			npoints += c->job_pol ? 1 : c->sweep ? kv_sweep_points(kv_policies[i]) : 1;
	if (csv && !c->jobs)
		kv_result_csv_header(c->out);
	/* several drives in turn: each takes the last one's tables when it has the same
	 * geometry, instead of the kernel backing new ones (ftl_keep_tables) */
	ftl_keep_tables(true);
	for (int i = 0; kv_policies[i] && !rc; i++) {
		const struct kv_policy *pol = kv_policies[i];
		if ((one && pol != one) || (c->job_pol && pol != c->job_pol))
			continue;
		uint64_t npts = c->sweep ? kv_sweep_points(pol) : 1;
		if (c->jobs) {
			rc = kv_emit_points(c, ro, pol, npts);
			continue;
		}
		/* an offline policy's pass over the trace, once for all its runs (one-pass
		 * knowledge is only made for one pass: kv_run() refuses --loop) */
		if (pol->prepare && !(pol->one_pass && ro->loops != 1)) {
			if (!(ro->prepared = pol->prepare(&c->kt, &ro->cfg, err, sizeof(err)))) {
				fprintf(stderr, "femu-gandalf: %s\n", err);
				rc = 1;
				break;
			}
			ro->prepared_for = pol;
		}
		for (uint64_t j = 0; j < npts && !rc; j++)
			if (!c->job_pol || j == c->job_point)
				rc = kv_point(c, ro, pol, j, csv, ++k, npoints);
		if (ro->prepared_for) {
			ro->prepared_for->unprepare(ro->prepared);
			ro->prepared_for = NULL;
			ro->prepared = NULL;
		}
	}
	ftl_keep_tables(false);
	return rc;
}

/* --job, --output and sweep --emit-jobs, once the policies are known. 0, or -1 after printing
 * the error. */
static int kv_job_flags(struct kv_cli *c, const struct kv_policy *one)
{
	if (c->jobs && (c->job || c->output || c->json || c->target)) {
		fprintf(stderr, "femu-gandalf: sweep --emit-jobs: drop %s (each job gets its own "
		                "--job and --output, and writes a CSV row)\n",
		        c->job ? "--job" : c->output ? "--output" : c->json ? "--json" : "--target");
		return -1;
	}
	if (c->output) { /* refused before the run, not after it */
		char why[PATH_MAX + 256], *dir = g_path_get_dirname(c->output);
		int nodir = access(dir, W_OK | X_OK);
		g_free(dir);
		if (fg_atomic_check(c->output, why, sizeof(why))) {
			fprintf(stderr, "femu-gandalf: --output %s\n", why);
			return -1;
		}
		if (nodir || !(c->json || c->csv || c->sweep || !one)) {
			fprintf(stderr, "femu-gandalf: --output %s: %s\n", c->output,
			        nodir ? "its directory is missing or not writable"
			              : "writes CSV or JSON: add --csv or --json");
			return -1;
		}
	}
	if (!c->job)
		return 0;
	const char *colon = strrchr(c->job, ':');
	char name[64], *end = NULL;
	unsigned long long j = colon ? strtoull(colon + 1, &end, 10) : 0;
	if (!colon || colon == c->job || colon - c->job >= (long)sizeof(name) || end == colon + 1 ||
	    *end || colon[1] == '-') {
		fprintf(stderr, "femu-gandalf: --job %s: must be POLICY:J (J counts from 0)\n",
		        c->job);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(colon - c->job), c->job);
	const struct kv_policy *pol = kv_policy_find(name);
	uint64_t npts = pol ? (c->sweep ? kv_sweep_points(pol) : 1) : 0;
	if (!pol || (one && pol != one) || j >= npts) {
		if (!pol)
			fprintf(stderr, "femu-gandalf: --job %s: unknown policy (known: %s)\n", c->job,
			        c->pols);
		else if (one && pol != one)
			fprintf(stderr, "femu-gandalf: --job %s: this run's --policy is %s\n", c->job,
			        one->name);
		else
			fprintf(stderr, "femu-gandalf: --job %s: %s has %llu point(s) here (0..%llu)\n",
			        c->job, pol->name, (unsigned long long)npts,
			        (unsigned long long)npts - 1);
		return -1;
	}
	c->job_pol = pol;
	c->job_point = j;
	return 0;
}

/* What a run printed, into --output whole (or nothing on failure). The exit code. */
static int kv_output_close(struct kv_cli *c, int rc)
{
	if (!c->output)
		return rc;
	fclose(c->out);
	if (!rc && fg_save_file("--output", c->output, c->out_buf, c->out_len))
		rc = 1;
	free(c->out_buf);
	return rc;
}

static int kv_main(int argc, char **argv, const struct kv_jobs *jobs, struct kv_trace_keep *keep)
{
	struct kv_cli c;
	struct kv_run_opts ro;
	const struct kv_policy *one;
	kv_cli_default(&c, &ro);
	c.jobs = jobs;
	c.keep = keep;
	GOptionContext *ctx = kv_context(&c, &ro.cfg);
	int rc = EXIT_USAGE;
	if (fg_parse_opts(ctx, &argc, &argv) && !kv_check_flags(&c, &ro) &&
	    !kv_select(&c, &ro, &one) && !kv_job_flags(&c, one)) {
		c.out = c.output ? open_memstream(&c.out_buf, &c.out_len) : stdout;
		rc = c.out ? kv_output_close(&c, kv_policies_run(&c, &ro, one)) : 1;
	}
	if (!c.kt_borrowed)
		kv_trace_free(&c.kt);
	g_option_context_free(ctx);
	return rc;
}

int cmd_kv(int argc, char **argv)
{
	return kv_main(argc, argv, NULL, NULL);
}

int kv_emit_jobs(int argc, char **argv, const struct kv_jobs *jobs)
{
	return kv_main(argc, argv, jobs, jobs->keep);
}

int kv_run_kept(int argc, char **argv, struct kv_trace_keep *keep)
{
	return kv_main(argc, argv, NULL, keep);
}
