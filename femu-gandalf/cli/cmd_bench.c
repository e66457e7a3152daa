/*
 * cmd_bench.c - `femu-gandalf bench`: FTL speed and memory, printed as JSON.
 *
 *   (a) uniform random 4 KiB writes at steady state on a 64 GiB-user device, Sf 0.10, greedy GC
 *       (preconditioned with 2x sequential, warmed up with 1x random, measured over 1x random);
 *   (b) 1 MiB sequential writes, overwriting a sequentially filled device (a fresh one);
 *   (c) KV-like writes: objects of 2-64 MiB at random 64 MiB-aligned slots, overwritten in place
 *       without TRIM (so a shorter object leaves the old tail valid), on a fresh filled device;
 *   (d) with --big: open the ent-tlc-4t preset (3.84 TB user), fill it once with 1 MiB writes,
 *       then 4M random 4 KiB writes, and report peak RSS.
 * Rates are host mapping-unit writes per second of wall time, on one thread.
 *
 * --parse PATH (repeatable) instead measures the trace readers: a full pass over each trace,
 * in MB/s of (decompressed) input and records per second.
 *
 * --kv PATH instead measures the KV-cache tier simulator at the kv command's defaults
 * (Qwen3-Next-80B-A3B, 100 GiB DRAM, 1 TiB SSD tier, no device): the trace is loaded once, then
 * each policy (--policy, default all) replays it; rates are prefix-block accesses per second of
 * replay, parsing excluded (it is reported on its own, as is an offline policy's pre-pass,
 * prepare()).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvsim.h"
#include "preset.h"
#include "trace.h"
#include "workload.h"

static long rss_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			v = strtol(line + strlen(field) + 1, NULL, 10);
	fclose(f);
	return v;
}

static int fill_seq(struct ftl *f, uint64_t bytes, uint64_t bs)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t pos = 0;
	for (uint64_t done = 0; done < bytes; done += bs) {
		uint64_t len = bs < g->user_bytes - pos ? bs : g->user_bytes - pos;
		int rc = ftl_write(f, pos, len, 0, 0, NULL);
		if (rc)
			return rc;
		pos = (pos + len) % g->user_bytes;
	}
	return 0;
}

/*
 * n uniform random 4 KiB writes. The host knows its next writes, so they go in batches through
 * ftl_write_batch(), which prefetches ahead (batched = false: one ftl_write() each; the
 * results are the same, tests/test_ftl.c checks it).
 */
static int rand_4k_mode(struct ftl *f, uint64_t n, uint64_t *rng, bool batched)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t units = g->user_bytes / 4096;
	struct ftl_wreq w[256];
	for (uint64_t i = 0; i < n;) {
		size_t b = n - i < 256 ? (size_t)(n - i) : 256;
		for (size_t j = 0; j < b; j++)
			w[j] = (struct ftl_wreq){.off = fg_rand_below(rng, units) * 4096, .len = 4096};
		int rc = 0;
		if (batched)
			rc = ftl_write_batch(f, w, b, NULL, NULL);
		else
			for (size_t j = 0; j < b && !rc; j++)
				rc = ftl_write(f, w[j].off, w[j].len, 0, 0, NULL);
		if (rc)
			return rc;
		i += b;
	}
	return 0;
}

static int rand_4k(struct ftl *f, uint64_t n, uint64_t *rng)
{
	return rand_4k_mode(f, n, rng, true);
}

static struct ftl *make(const char *preset, char **sets)
{
	struct ftl_config cfg;
	char err[256];
	if (fg_config_from_opts(&cfg, preset, sets, NULL))
		return NULL;
	struct ftl *f = ftl_create(&cfg, err, sizeof(err));
	if (!f)
		fprintf(stderr, "femu-gandalf bench: %s\n", err);
	return f;
}

static int bench_parse(char **paths)
{
	struct json_out j;
	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_array(&j, "parse", JOUT_BLOCK);
	for (int i = 0; paths[i]; i++) {
		struct trace_opts o;
		char err[8192];
		trace_opts_default(&o);
		double t0 = now_seconds();
		struct trace *t = trace_open(paths[i], &o, err, sizeof(err));
		if (!t) {
			fprintf(stderr, "femu-gandalf bench: %s\n", err);
			return EXIT_USAGE;
		}
		uint64_t n = 0, blocks = 0;
		int r;
		if (trace_is_block(t)) {
			struct blk_io io;
			while ((r = trace_next_blk(t, &io)) == 1)
				n++;
		} else {
			struct kv_request rq;
			while ((r = trace_next_kv(t, &rq)) == 1) {
				n++;
				blocks += rq.nblocks;
			}
		}
		double secs = now_seconds() - t0;
		if (r < 0) {
			fprintf(stderr, "femu-gandalf bench: %s\n", trace_error(t));
			trace_close(t);
			return EXIT_USAGE;
		}
		jout_object(&j, NULL, JOUT_INLINE);
		jout_str(&j, "path", paths[i]);
		jout_str(&j, "format", trace_format_name(trace_format(t)));
		jout_u64(&j, "records", n);
		jout_u64(&j, "blocks", blocks);
		jout_u64(&j, "input_bytes", trace_bytes_read(t));
		jout_num(&j, "seconds", "%.4f", secs);
		jout_num(&j, "mb_per_s", "%.1f", trace_bytes_read(t) / 1e6 / secs);
		jout_num(&j, "records_per_s", "%.0f", n / secs);
		jout_end(&j);
		trace_close(t);
	}
	jout_end(&j);
	jout_end(&j);
	return fg_json_finish(&j);
}

/* The kv command's defaults: Qwen3-Next-80B-A3B, 100 GiB DRAM, 1 TiB SSD tier, no device. */
static int bench_kv_config(struct kv_config *cfg)
{
	char err[8192];
	kv_config_default(cfg);
	cfg->dram_bytes = 100ull << 30;
	cfg->ssd_bytes = 1ull << 40;
	kv_cost_no_device(cfg);
	if (kv_model_load("qwen3-next-80b-a3b", &cfg->model, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf bench: %s\n", err);
		return EXIT_USAGE;
	}
	return 0;
}

/* Feed every request of the trace to s. */
static int bench_kv_replay(struct kvsim *s, const struct kv_trace *kt)
{
	char err[8192];
	for (uint64_t r = 0; r < kt->n; r++)
		if (kvsim_request(s, &kt->rq[r], err, sizeof(err))) {
			fprintf(stderr, "femu-gandalf bench: request %llu: %s\n",
			        (unsigned long long)r + 1, err);
			return -1;
		}
	kvsim_finish(s);
	return 0;
}

/*
 * Replay the trace under policy p and print its line; adds the policy's time (pre-pass and
 * replay) to *total. The pre-pass is timed on its own: it is not part of the replay's rate.
 */
static int bench_kv_policy(struct json_out *j, const struct kv_trace *kt,
                           const struct kv_config *cfg, const struct kv_policy *p, double *total)
{
	char err[8192];
	void *prepared = NULL;
	double t0, prep = 0;
	int rc = -1;
	if (p->prepare) {
		t0 = now_seconds();
		if (!(prepared = p->prepare(kt, cfg, err, sizeof(err)))) {
			fprintf(stderr, "femu-gandalf bench: %s\n", err);
			return -1;
		}
		prep = now_seconds() - t0;
	}
	struct kvsim *s = kvsim_new(cfg, p, "", prepared, NULL, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "femu-gandalf bench: %s\n", err);
		goto out;
	}
	t0 = now_seconds();
	if (bench_kv_replay(s, kt))
		goto out;
	const struct kv_stats *st = kvsim_stats(s);
	double secs = now_seconds() - t0;
	*total += prep + secs;
	jout_object(j, NULL, JOUT_INLINE);
	jout_str(j, "policy", p->name);
	jout_num(j, "seconds", "%.3f", secs);
	jout_num(j, "prepare_seconds", "%.3f", prep);
	jout_num(j, "block_accesses_per_s", "%.0f", st->prefix_blocks / secs);
	jout_num(j, "miss_ratio", "%.6f",
	         1 - (double)st->hit_blocks / (st->prefix_blocks ? st->prefix_blocks : 1));
	jout_end(j);
	rc = 0;
out:
	kvsim_free(s);
	if (prepared)
		p->unprepare(prepared);
	return rc;
}

static int bench_kv(const char *path, const char *policy)
{
	struct trace_opts o;
	struct kv_trace kt;
	struct kv_config cfg = {0};
	char err[8192];
	int rc;
	trace_opts_default(&o);
	if ((rc = bench_kv_config(&cfg)))
		return rc;
	if (strcmp(policy, "all") && !kv_policy_find(policy)) {
		fprintf(stderr, "femu-gandalf bench: --policy %s: unknown policy\n", policy);
		return EXIT_USAGE;
	}
	double t0 = now_seconds();
	if (kv_trace_load(path, &o, &kt, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf bench: %s\n", err);
		return EXIT_USAGE;
	}
	double load = now_seconds() - t0, total = load;
	struct json_out j;
	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_object(&j, "kv", JOUT_INLINE);
	jout_str(&j, "path", path);
	jout_u64(&j, "requests", kt.n);
	jout_u64(&j, "block_ids", kt.nids);
	jout_u64(&j, "block_ids_stored", kt.stored);
	jout_num(&j, "load_seconds", "%.3f", load);
	jout_break(&j);
	jout_array(&j, "policies", JOUT_BLOCK);
	for (int i = 0; kv_policies[i]; i++) {
		if (strcmp(policy, "all") && strcmp(policy, kv_policies[i]->name))
			continue;
		if (bench_kv_policy(&j, &kt, &cfg, kv_policies[i], &total)) {
			kv_trace_free(&kt);
			return 1;
		}
	}
	jout_end(&j);
	jout_break(&j);
	jout_num(&j, "total_seconds", "%.3f", total);
	jout_i64(&j, "peak_rss_kib", rss_kib("VmHWM:"));
	jout_end(&j);
	jout_end(&j);
	rc = fg_json_finish(&j);
	kv_trace_free(&kt);
	return rc;
}

/* The figures of (a)-(c), printed together once all three have run. */
struct ftl_bench {
	uint64_t units; /* the device's user mapping units: the amount each measurement writes */
	double a_rate, a_waf, a_eff, meta;
	double b_rate, b_waf;
	double c_rate, c_waf;
};

/* (a) uniform random 4 KiB writes at steady state, on a fresh device */
static int bench_random_4k(struct ftl *f, uint64_t *rng, struct ftl_bench *r)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);
	struct ftl_stats st;
	int rc;
	r->units = g->user_units;
	fprintf(stderr, "bench (a): %.1f GiB user, preconditioning...\n",
	        g->user_bytes / 1073741824.0);
	if ((rc = fill_seq(f, 2 * g->user_bytes, 128 * 1024)) || (rc = rand_4k(f, r->units, rng)))
		return rc;
	ftl_get_stats(f, &st);
	uint64_t n0 = st.nand_write_bytes, h0 = st.host_write_bytes;
	fprintf(stderr, "bench (a): measuring %llu random 4 KiB writes...\n",
	        (unsigned long long)r->units);
	double t0 = now_seconds();
	if ((rc = rand_4k(f, r->units, rng)))
		return rc;
	double t = now_seconds() - t0;
	ftl_get_stats(f, &st);
	r->a_rate = r->units / t;
	r->a_waf = (double)(st.nand_write_bytes - n0) / (st.host_write_bytes - h0);
	r->meta = (double)ftl_metadata_bytes(f);
	r->a_eff = st.effective_spare_factor;
	return 0;
}

/* (b) 1 MiB sequential writes over a sequentially filled device */
static int bench_seq_1m(struct ftl *f, struct ftl_bench *r)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);
	struct ftl_stats st;
	int rc;
	if ((rc = fill_seq(f, g->user_bytes, 1 << 20)))
		return rc;
	double t0 = now_seconds();
	if ((rc = fill_seq(f, g->user_bytes, 1 << 20)))
		return rc;
	r->b_rate = r->units / (now_seconds() - t0);
	ftl_get_stats(f, &st);
	r->b_waf = st.waf_window;
	return 0;
}

/* (c) KV-like: 2..64 MiB objects in 64 MiB slots, overwritten in place, on a filled device */
static int bench_kv_objects(struct ftl *f, uint64_t *rng, struct ftl_bench *r)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t slot = 64ull << 20, nslots = g->user_bytes / slot, cunits = 0;
	struct ftl_stats st;
	double t0 = 0;
	int rc;
	/* warm up with 2x user capacity of object writes, then measure 1x */
	for (int phase = 0; phase < 2; phase++) {
		if (phase)
			t0 = now_seconds();
		cunits = 0;
		while (cunits < (phase ? r->units : 2 * r->units)) {
			uint64_t size = (2 + fg_rand_below(rng, 63)) << 20;
			if ((rc = ftl_write(f, fg_rand_below(rng, nslots) * slot, size, 0, 0,
			                    NULL)))
				return rc;
			cunits += size / 4096;
		}
	}
	r->c_rate = cunits / (now_seconds() - t0);
	ftl_get_stats(f, &st);
	r->c_waf = st.waf_window;
	return 0;
}

/* The figures of (a)-(c); g is the geometry they share. */
static void print_ftl_bench(struct json_out *j, const struct ftl_geometry *g,
                            const struct ftl_bench *r)
{
	jout_object(j, "a_random_4k_steady", JOUT_INLINE);
	jout_u64(j, "user_bytes", g->user_bytes);
	jout_num(j, "host_writes_per_s", "%.0f", r->a_rate);
	jout_num(j, "waf", "%.4f", r->a_waf);
	jout_num(j, "effective_spare_factor", "%.4f", r->a_eff);
	jout_num(j, "metadata_bytes_per_user_unit", "%.3f", r->meta / g->user_units);
	jout_num(j, "metadata_bytes_per_physical_unit", "%.3f", r->meta / g->phys_units);
	jout_end(j);
	jout_object(j, "b_seq_1m", JOUT_INLINE);
	jout_num(j, "units_per_s", "%.0f", r->b_rate);
	jout_num(j, "waf", "%.4f", r->b_waf);
	jout_end(j);
	jout_object(j, "c_kv_objects", JOUT_INLINE);
	jout_num(j, "units_per_s", "%.0f", r->c_rate);
	jout_num(j, "waf", "%.4f", r->c_waf);
	jout_end(j);
}

/* (d) the ent-tlc-4t preset: a 3.84 TB fill, then 4M random 4 KiB writes, and peak RSS */
static int bench_big(struct json_out *j, uint64_t *rng)
{
	fprintf(stderr, "bench (d): ent-tlc-4t: filling 3.84 TB...\n");
	struct ftl *f = make("ent-tlc-4t", NULL);
	int rc;
	if (!f)
		return 1;
	const struct ftl_geometry *g = ftl_get_geometry(f);
	double t0 = now_seconds();
	if ((rc = fill_seq(f, g->user_bytes, 1 << 20)))
		goto fail;
	double fill_s = now_seconds() - t0;
	t0 = now_seconds();
	if ((rc = rand_4k(f, 4000000, rng)))
		goto fail;
	double r_rate = 4000000 / (now_seconds() - t0);
	jout_object(j, "d_ent_tlc_4t", JOUT_INLINE);
	jout_u64(j, "user_bytes", g->user_bytes);
	jout_num(j, "fill_seconds", "%.1f", fill_s);
	jout_num(j, "random_4k_per_s", "%.0f", r_rate);
	jout_u64(j, "metadata_bytes", ftl_metadata_bytes(f));
	jout_i64(j, "peak_rss_kib", rss_kib("VmHWM:"));
	jout_end(j);
	ftl_destroy(f);
	return 0;
fail:
	fprintf(stderr, "femu-gandalf bench: write failed: %s\n", ftl_strerror(rc));
	ftl_destroy(f);
	return 1;
}

/* (a)-(c) on fresh devices of the same geometry, and with big (d) */
static int bench_ftl(bool quick, bool big)
{
	/* 64 GiB user at Sf 0.10: 8 ch x 8 LUN, 1 MiB blocks (64 x 16 KiB pages), superblock GC */
	const char *bpp = quick ? "blocks_per_plane=143" : "blocks_per_plane=1138";
	char *sets[] = {"channels=8", "luns_per_channel=8", "planes_per_lun=1", (char *)bpp,
			"pages_per_block=64", "page_size=16384", "unit_size=4096", "spare_factor=0.10",
			"gc_policy=greedy", "gc_bg_free_pct=0", "gc_fg_free_pct=0", "pe_cycles=100000", NULL};
	uint64_t rng = 42;
	struct ftl_bench r;
	int rc;

	struct ftl *f = make("tiny", sets);
	if (!f)
		return 1;
	if ((rc = bench_random_4k(f, &rng, &r)))
		goto fail;
	ftl_destroy(f);

	fprintf(stderr, "bench (b): 1 MiB sequential...\n");
	if (!(f = make("tiny", sets)) || (rc = bench_seq_1m(f, &r)))
		goto fail;
	ftl_destroy(f);

	if (!(f = make("tiny", sets)) || (rc = fill_seq(f, ftl_get_geometry(f)->user_bytes, 1 << 20)))
		goto fail;
	fprintf(stderr, "bench (c): KV-like 2-64 MiB objects...\n");
	if ((rc = bench_kv_objects(f, &rng, &r)))
		goto fail;

	struct json_out j;
	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	print_ftl_bench(&j, ftl_get_geometry(f), &r);
	ftl_destroy(f);
	if (big && bench_big(&j, &rng))
		return 1;
	jout_i64(&j, "peak_rss_kib", rss_kib("VmHWM:"));
	jout_end(&j);
	return fg_json_finish(&j);
fail:
	fprintf(stderr, "femu-gandalf bench: write failed: %s\n", ftl_strerror(rc));
	ftl_destroy(f);
	return 1;
}

int cmd_bench(int argc, char **argv)
{
	gboolean big = FALSE, quick = FALSE;
	char **parse = NULL, *kv = NULL, *policy = "all";
	GOptionEntry opts[] = {
		{"quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "8 GiB device instead of 64 GiB (faster, less exact)", NULL},
		{"big", 0, 0, G_OPTION_ARG_NONE, &big, "also run (d): the 3.84 TB ent-tlc-4t preset, peak RSS", NULL},
		{"parse", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &parse, "instead, time the trace reader on PATH (repeatable)", "PATH"},
		{"kv", 0, 0, G_OPTION_ARG_FILENAME, &kv, "instead, time the KV simulator's policies on the KV trace PATH", "PATH"},
		{"policy", 'p', 0, G_OPTION_ARG_STRING, &policy, "with --kv: one policy (default all)", "P"},
		{NULL},
	};
	GOptionContext *ctx = g_option_context_new("- FTL speed and memory benchmarks (JSON on stdout)");
	g_option_context_add_main_entries(ctx, opts, NULL);
	g_option_context_set_description(ctx, "Examples:\n  femu-gandalf bench\n  femu-gandalf bench --quick\n"
					      "  femu-gandalf bench --big   # needs ~10 GiB RAM\n"
					      "  femu-gandalf bench --parse ../shared/traces/weka-claude-code\n"
					      "  femu-gandalf bench --kv ../shared/traces/weka-claude-code --policy lru\n");
	if (!fg_parse_opts(ctx, &argc, &argv)) {
		g_option_context_free(ctx);
		return EXIT_USAGE;
	}
	g_option_context_free(ctx);
	if (parse)
		return bench_parse(parse);
	if (kv)
		return bench_kv(kv, policy);
	return bench_ftl(quick, big);
}
