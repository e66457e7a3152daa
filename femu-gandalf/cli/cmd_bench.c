/*
 * cmd_bench.c - `femu-gandalf bench`: FTL speed and memory, printed as JSON.
 *
 *   (a) uniform random 4 KiB writes at steady state on a 64 GiB-user device, Sf 0.10, greedy GC
 *       (preconditioned with 2x sequential, warmed up with 1x random, measured over 1x random);
 *   (b) 1 MiB sequential writes, overwriting a sequentially filled device (a fresh one);
 *   (c) KV-like writes: objects of 2-64 MiB at random 64 MiB-aligned slots, overwritten in place
 *       without TRIM (so a shorter object leaves the old tail valid), on a fresh filled device;
 *   (e) MQSim's random-write case, to set our rate beside the published one: a 1 GiB-user drive,
 *       greedy GC, Sf 0.10, filled sequentially, then 12 user capacities of uniform random 4 KiB
 *       writes, timed whole (one plane of 256 KiB blocks, 64 pages: Desnoyers' model applies);
 *   (d) with --big: open the ent-tlc-4t preset (3.84 TB user), fill it once with 1 MiB writes,
 *       then 4M random 4 KiB writes one ftl_write() at a time and 4M batched, then two more
 *       user capacities of them to steady state (the rate and WAF of the last), and report peak
 *       RSS, the cache misses per write (when the machine has counters) and the memory model
 *       that bounds the rate (bench_big());
 *   (f) with --big: the qlc-8t preset (7.68 TB user, 16 KiB units) at full size: a fill, then
 *       random unit-sized writes to 3 drive writes, rate and WAF of the last, peak RSS (bench_qlc8t()).
 * Rates are host mapping-unit writes per second of wall time, on one thread.
 *
 * --parse PATH (repeatable) instead measures the trace readers: a full pass over each trace,
 * in MB/s of (decompressed) input and records per second.
 *
 * --kv PATH instead measures the KV-cache tier simulator at the kv command's defaults
 * (Qwen3-Next-80B-A3B, 100 GiB DRAM, 1 TiB SSD tier, no device): the trace is loaded once, then
 * each policy (--policy, default all) replays it; rates are prefix-block accesses per second of
 * replay, parsing excluded (it is reported on its own, as is an offline policy's pre-pass,
 * prepare()). With --device PRESET, each policy is run instead as `kv` runs it (kv_run(), one
 * pass), once without a drive and once on the preset's whole drive, the tier the same size in
 * both: the wall and CPU seconds of each, and their ratio, the drive's cost in the KV loop.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "kvsim.h"
#include "drive_presets.h"
#include "err.h"
#include "run.h"
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

/* CPU seconds of this process: on a shared machine the wall rate also counts time spent
 * waiting for a core, so each figure is printed per CPU second as well (*_per_cpu_s). */
static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
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
 * n uniform random writes of bs bytes at bs-aligned offsets. The host knows its next writes, so
 * they go in batches through ftl_write_batch(), which prefetches ahead (batched = false: one
 * ftl_write() each; the results are the same, tests/test_ftl.c checks it).
 */
static int rand_writes(struct ftl *f, uint64_t n, uint64_t *rng, uint64_t bs, bool batched)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t slots = g->user_bytes / bs;
	struct ftl_wreq w[256];
	for (uint64_t i = 0; i < n;) {
		size_t b = n - i < 256 ? (size_t)(n - i) : 256;
		for (size_t j = 0; j < b; j++)
			w[j] = (struct ftl_wreq){.off = fg_rand_below(rng, slots) * bs, .len = bs};
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

/* n uniform random 4 KiB writes */
static int rand_4k_mode(struct ftl *f, uint64_t n, uint64_t *rng, bool batched)
{
	return rand_writes(f, n, rng, 4096, batched);
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

/*
 * --device: policy p run as `kv` runs it (one pass), first on the preset's whole drive, then
 * without a drive on a tier of the same size. Each run is timed whole, the drive's tables
 * (allocated, first touched, freed) included: that is what a user of kv waits for.
 */
static int bench_kv_drive(struct json_out *j, const struct kv_trace *kt, const char *path,
                          const char *device, const struct ftl_config *fc,
                          const struct kv_policy *p, double *total)
{
	char err[FG_ERR_LEN + FG_ERR_CONTEXT];
	struct kv_run_opts ro = {0};
	if (bench_kv_config(&ro.cfg))
		return EXIT_USAGE;
	ro.trace = path;
	ro.kt = kt;
	ro.loops = 1;
	if (p->prepare) {
		if (!(ro.prepared = p->prepare(kt, &ro.cfg, err, sizeof(err)))) {
			fprintf(stderr, "femu-gandalf bench: %s\n", err);
			return 1;
		}
		ro.prepared_for = p;
	}
	double wall[2], cpu[2], miss[2];
	uint64_t tier = 0;
	int rc = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		struct kv_result res;
		ro.device = k ? "none" : device;
		ro.drive = k ? NULL : fc;
		ro.cfg.ssd_bytes = tier; /* 0 the first time: the whole drive */
		fprintf(stderr, "bench --kv: %s, %s...\n", p->name, ro.device);
		double t0 = now_seconds(), c0 = cpu_seconds();
		rc = kv_run(&ro, p, "", &res, err, sizeof(err));
		if (rc)
			fprintf(stderr, "femu-gandalf bench: %s\n", err);
		tier = res.cfg.ssd_bytes;
		miss[k] = kv_result_miss_ratio(&res);
		kv_result_free(&res);
		wall[k] = now_seconds() - t0;
		cpu[k] = cpu_seconds() - c0;
	}
	if (ro.prepared_for)
		p->unprepare(ro.prepared);
	if (rc)
		return rc == RUN_E_INPUT ? EXIT_USAGE : 1;
	*total += wall[0] + wall[1];
	jout_object(j, NULL, JOUT_INLINE);
	jout_str(j, "policy", p->name);
	jout_str(j, "device", device);
	jout_u64(j, "ssd_bytes", tier);
	jout_num(j, "device_s", "%.3f", wall[0]);
	jout_num(j, "device_cpu_s", "%.3f", cpu[0]);
	jout_num(j, "none_s", "%.3f", wall[1]);
	jout_num(j, "none_cpu_s", "%.3f", cpu[1]);
	jout_num(j, "ratio", "%.2f", wall[0] / wall[1]);
	jout_num(j, "ratio_cpu", "%.2f", cpu[0] / cpu[1]);
	jout_num(j, "miss_ratio_device", "%.6f", miss[0]);
	jout_num(j, "miss_ratio_none", "%.6f", miss[1]);
	jout_end(j);
	return 0;
}

static int bench_kv(const char *path, const char *policy, const char *device)
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
	struct ftl_config fc;
	if (device && fg_config_from_opts(&fc, device, NULL, NULL))
		return EXIT_USAGE;
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
		if (device)
			rc = bench_kv_drive(&j, &kt, path, device, &fc, kv_policies[i], &total);
		else
			rc = bench_kv_policy(&j, &kt, &cfg, kv_policies[i], &total) ? 1 : 0;
		if (rc) {
			kv_trace_free(&kt);
			return rc;
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
	double a_cpu, b_cpu, c_cpu; /* the same rates per CPU second */
	uint64_t e_user, e_writes; /* (e): the drive's user bytes, the writes timed */
	double e_rate, e_cpu, e_waf, e_waf_last;
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
	double t0 = now_seconds(), c0 = cpu_seconds();
	if ((rc = rand_4k(f, r->units, rng)))
		return rc;
	double t = now_seconds() - t0;
	r->a_cpu = r->units / (cpu_seconds() - c0);
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
	double t0 = now_seconds(), c0 = cpu_seconds();
	if ((rc = fill_seq(f, g->user_bytes, 1 << 20)))
		return rc;
	r->b_rate = r->units / (now_seconds() - t0);
	r->b_cpu = r->units / (cpu_seconds() - c0);
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
	double t0 = 0, c0 = 0;
	int rc;
	/* warm up with 2x user capacity of object writes, then measure 1x */
	for (int phase = 0; phase < 2; phase++) {
		if (phase)
			t0 = now_seconds(), c0 = cpu_seconds();
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
	r->c_cpu = cunits / (cpu_seconds() - c0);
	ftl_get_stats(f, &st);
	r->c_waf = st.waf_window;
	return 0;
}

/*
 * (e) MQSim's case: 1 GiB of user space at Sf 0.10, greedy, 12 user capacities of random 4 KiB
 * writes after a sequential fill, all of them timed (MQSim's figure is its whole run). The WAF
 * is printed over the 12 and over the last 4 (steady state: 4.83 in Desnoyers' model at Np = 64,
 * docs/performance.md).
 */
static int bench_mqsim(uint64_t *rng, struct ftl_bench *r)
{
	char *sets[] = {"channels=1", "luns_per_channel=1", "planes_per_lun=1", "blocks_per_plane=4552",
			"pages_per_block=64", "page_size=4096", "unit_size=4096", "spare_factor=0.10",
			"gc_unit=block", "gc_policy=greedy", "gc_stream=shared", "gc_reserve=1",
			"wl_static=off", "gc_bg_free_pct=0", "gc_fg_free_pct=0", "pe_cycles=1000000",
			NULL};
	struct ftl *f = make("tiny", sets);
	struct ftl_stats st;
	int rc;
	if (!f)
		return FTL_E_INVAL;
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t units = g->user_bytes / 4096;
	r->e_user = g->user_bytes;
	r->e_writes = 12 * units;
	fprintf(stderr, "bench (e): MQSim's case, 1 GiB, 12 x %llu random 4 KiB writes...\n",
	        (unsigned long long)units);
	if ((rc = fill_seq(f, g->user_bytes, 1 << 20)))
		goto out;
	ftl_get_stats(f, &st);
	uint64_t n0 = st.nand_write_bytes, h0 = st.host_write_bytes, n8 = 0, h8 = 0;
	double t0 = now_seconds(), c0 = cpu_seconds();
	for (int k = 0; k < 12 && !rc; k++) {
		if (k == 8) {
			ftl_get_stats(f, &st);
			n8 = st.nand_write_bytes, h8 = st.host_write_bytes;
		}
		rc = rand_4k(f, units, rng);
	}
	if (rc)
		goto out;
	r->e_rate = r->e_writes / (now_seconds() - t0);
	r->e_cpu = r->e_writes / (cpu_seconds() - c0);
	ftl_get_stats(f, &st);
	r->e_waf = (double)(st.nand_write_bytes - n0) / (double)(st.host_write_bytes - h0);
	r->e_waf_last = (double)(st.nand_write_bytes - n8) / (double)(st.host_write_bytes - h8);
out:
	ftl_destroy(f);
	return rc;
}

/* The figures of (a)-(c); g is the geometry they share. */
static void print_ftl_bench(struct json_out *j, const struct ftl_geometry *g,
                            const struct ftl_bench *r, const char *only)
{
	if (!strchr(only, 'a'))
		goto b;
	jout_object(j, "a_random_4k_steady", JOUT_INLINE);
	jout_u64(j, "user_bytes", g->user_bytes);
	jout_num(j, "host_writes_per_s", "%.0f", r->a_rate);
	jout_num(j, "host_writes_per_cpu_s", "%.0f", r->a_cpu);
	jout_num(j, "waf", "%.4f", r->a_waf);
	jout_num(j, "effective_spare_factor", "%.4f", r->a_eff);
	jout_num(j, "metadata_bytes_per_user_unit", "%.3f", r->meta / g->user_units);
	jout_num(j, "metadata_bytes_per_physical_unit", "%.3f", r->meta / g->phys_units);
	jout_end(j);
b:
	if (!strchr(only, 'b'))
		goto c;
	jout_object(j, "b_seq_1m", JOUT_INLINE);
	jout_num(j, "units_per_s", "%.0f", r->b_rate);
	jout_num(j, "units_per_cpu_s", "%.0f", r->b_cpu);
	jout_num(j, "waf", "%.4f", r->b_waf);
	jout_end(j);
c:
	if (!strchr(only, 'c'))
		goto e;
	jout_object(j, "c_kv_objects", JOUT_INLINE);
	jout_num(j, "units_per_s", "%.0f", r->c_rate);
	jout_num(j, "units_per_cpu_s", "%.0f", r->c_cpu);
	jout_num(j, "waf", "%.4f", r->c_waf);
	jout_end(j);
e:
	if (!strchr(only, 'e'))
		return;
	jout_object(j, "e_mqsim_1g", JOUT_INLINE);
	jout_u64(j, "user_bytes", r->e_user);
	jout_u64(j, "host_writes", r->e_writes);
	jout_num(j, "host_writes_per_s", "%.0f", r->e_rate);
	jout_num(j, "host_writes_per_cpu_s", "%.0f", r->e_cpu);
	jout_num(j, "waf", "%.4f", r->e_waf);
	jout_num(j, "waf_last_4", "%.4f", r->e_waf_last);
	jout_end(j);
}

/*
 * Hardware counters around the measured loop, when the kernel gives them (a VM without a
 * virtual PMU does not: then the bench says so). Last-level-cache misses and dTLB load misses.
 */
struct hwc {
	int fd[2];
	const char *why; /* NULL when counting */
};

static int hwc_open(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static void hwc_start(struct hwc *h)
{
	h->why = NULL;
	h->fd[0] = hwc_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES);
	h->fd[1] = hwc_open(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB |
	                                            (PERF_COUNT_HW_CACHE_OP_READ << 8) |
	                                            (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	if (h->fd[0] < 0) {
		h->why = errno == ENOENT || errno == EOPNOTSUPP
		                 ? "no hardware cache-miss counter here (a VM without a virtual PMU?)"
		                 : strerror(errno);
		return;
	}
	for (int i = 0; i < 2; i++)
		if (h->fd[i] >= 0) {
			ioctl(h->fd[i], PERF_EVENT_IOC_RESET, 0);
			ioctl(h->fd[i], PERF_EVENT_IOC_ENABLE, 0);
		}
}

/* Stop and read: v[i] = count, or -1 when that counter is not there. */
static void hwc_stop(struct hwc *h, double v[2])
{
	for (int i = 0; i < 2; i++) {
		uint64_t c;
		v[i] = -1;
		if (h->why || h->fd[i] < 0)
			continue;
		ioctl(h->fd[i], PERF_EVENT_IOC_DISABLE, 0);
		if (read(h->fd[i], &c, sizeof(c)) == (ssize_t)sizeof(c))
			v[i] = (double)c;
		close(h->fd[i]);
	}
}

/*
 * The memory system's own figures on a buffer as large as the drive's L2P (so its TLB reach
 * and page size are the tables'): the latency of one dependent random load, and the rate of
 * independent random loads one core sustains (its memory-level parallelism). Measured after the
 * drive is freed, so the peak RSS stays the drive's.
 */
struct memfig {
	double lat_ns, lines_per_s, touch_gb_s;
};

static int mem_measure(uint64_t bytes, struct memfig *m)
{
	uint64_t n = 1, rng = 7, sum = 0;
	while (n * 2 <= bytes / 8)
		n *= 2; /* a power of two: the address arithmetic is a mask, not a divide */
	uint64_t *b = mmap(NULL, n * 8, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b == MAP_FAILED)
		return -1;
#ifdef MADV_HUGEPAGE
	madvise(b, n * 8, MADV_HUGEPAGE);
#endif
	/* the first touch: the kernel zeroes each page (and, in a VM that reports free pages to its
	 * host, the host backs it again first), as for the drive's tables in every run */
	double t0 = now_seconds();
	for (uint64_t i = 0; i < n; i++)
		b[i] = i * 0x9e3779b97f4a7c15ull;
	m->touch_gb_s = n * 8 / 1e9 / (now_seconds() - t0);
	/* dependent: the next address comes from the loaded value */
	const uint64_t k = 4000000;
	uint64_t x = 12345;
	t0 = now_seconds();
	for (uint64_t i = 0; i < k; i++)
		x = b[((x ^ i) * 0xbf58476d1ce4e5b9ull >> 17) & (n - 1)];
	m->lat_ns = (now_seconds() - t0) * 1e9 / k;
	/* independent: addresses from a generator, loads overlap as far as the core allows */
	t0 = now_seconds();
	for (uint64_t i = 0; i < 4 * k; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		sum += b[(rng >> 20) & (n - 1)];
	}
	m->lines_per_s = 4 * k / (now_seconds() - t0);
	munmap(b, n * 8);
	return (x ^ sum) == 42 ? 1 : 0; /* keep the loads; never 42 in practice */
}

/* One random-write measurement of (d): n writes, batched or not; rate, GC moves per write. */
struct big_run {
	double rate, cpu_rate, gc_per_write, hw[2];
	const char *hw_why;
};

static int big_random(struct ftl *f, uint64_t n, uint64_t *rng, bool batched, struct big_run *r)
{
	struct ftl_stats s0, s1;
	struct hwc h;
	ftl_get_stats(f, &s0);
	hwc_start(&h);
	double t0 = now_seconds(), c0 = cpu_seconds();
	int rc = rand_4k_mode(f, n, rng, batched);
	double t = now_seconds() - t0;
	r->cpu_rate = n / (cpu_seconds() - c0);
	hwc_stop(&h, r->hw);
	r->hw_why = h.why;
	if (rc)
		return rc;
	ftl_get_stats(f, &s1);
	r->rate = n / t;
	r->gc_per_write = (double)(s1.gc_prog_bytes - s0.gc_prog_bytes) / 4096 / n;
	return 0;
}

static void print_big_run(struct json_out *j, const char *key, const struct big_run *r, uint64_t n)
{
	jout_object(j, key, JOUT_INLINE);
	jout_num(j, "host_writes_per_s", "%.0f", r->rate);
	jout_num(j, "host_writes_per_cpu_s", "%.0f", r->cpu_rate);
	jout_num(j, "gc_moves_per_write", "%.3f", r->gc_per_write);
	if (r->hw_why) {
		jout_null(j, "llc_misses_per_write");
		jout_null(j, "dtlb_misses_per_write");
	} else {
		if (r->hw[0] >= 0)
			jout_num(j, "llc_misses_per_write", "%.2f", r->hw[0] / n);
		else
			jout_null(j, "llc_misses_per_write");
		if (r->hw[1] >= 0)
			jout_num(j, "dtlb_misses_per_write", "%.2f", r->hw[1] / n);
		else
			jout_null(j, "dtlb_misses_per_write");
	}
	jout_end(j);
}

/*
 * Uniform random unit-sized writes through ftl_write_batch() over a filled drive, user capacity
 * after user capacity, until it was written `capacities` more times: the rate (wall and CPU)
 * and WAF of the last capacity, steady state for uniform random writes. (d) and (f).
 */
struct steady_run {
	double rate, cpu_rate, waf;
};

static int steady_random(struct ftl *f, uint64_t *rng, int capacities, const char *tag,
                         struct steady_run *r)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);
	const uint64_t units = g->user_units, us = g->user_bytes / units;
	struct ftl_stats s0, s1;
	int rc = 0;
	for (int pass = 0; pass < capacities && !rc; pass++) {
		fprintf(stderr, "bench %s: random %llu-byte writes, user capacity %d of %d...\n", tag,
		        (unsigned long long)us, pass + 1, capacities);
		ftl_get_stats(f, &s0);
		double t1 = now_seconds(), c1 = cpu_seconds();
		rc = rand_writes(f, units, rng, us, true);
		r->rate = units / (now_seconds() - t1);
		r->cpu_rate = units / (cpu_seconds() - c1);
	}
	if (rc)
		return rc;
	ftl_get_stats(f, &s1);
	r->waf = (double)(s1.nand_write_bytes - s0.nand_write_bytes) /
	         (double)(s1.host_write_bytes - s0.host_write_bytes);
	return 0;
}

/*
 * (d) the ent-tlc-4t preset: a 3.84 TB fill, then random 4 KiB writes, one ftl_write() each and
 * batched (ftl_write_batch), then to steady state (steady_random()), peak RSS; then the memory
 * model that bounds the random rate.
 *
 * The model: a random 4 KiB host write must bring in lines at random addresses of tables far
 * larger than the caches: its L2P entry and its old copy's valid-bitmap word, and one L2P line
 * per unit that GC moves (gc_moves_per_write; the fill leaves the spare free, so (d) has none).
 * The P2L and bitmap of the new copies are sequential. So with m = 2 + gc_moves_per_write lines
 * per write, one core writes at most
 *   serial:     1 / (m x latency)          (each miss waits for the one before: ftl_write)
 *   overlapped: random lines per s / m     (misses overlap as far as the core allows: the batch)
 * with latency and random lines per s measured on a buffer of the L2P's size.
 */
static int bench_big(struct json_out *j, uint64_t *rng)
{
	fprintf(stderr, "bench (d): ent-tlc-4t: filling 3.84 TB...\n");
	struct ftl *f = make("ent-tlc-4t", NULL);
	int rc;
	if (!f)
		return 1;
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t user_bytes = g->user_bytes, user_units = g->user_units, l2p_bytes = user_units * 4;
	double t0 = now_seconds();
	if ((rc = fill_seq(f, g->user_bytes, 1 << 20)))
		goto fail;
	double fill_s = now_seconds() - t0;
	const uint64_t n = 4000000;
	struct big_run one, batch;
	fprintf(stderr, "bench (d): 4M random 4 KiB writes, one ftl_write() each, then batched...\n");
	if ((rc = big_random(f, n, rng, false, &one)) || (rc = big_random(f, n, rng, true, &batch)))
		goto fail;
	/* then to steady state: two more user capacities of random 4 KiB writes (GC at work) */
	struct steady_run st;
	if ((rc = steady_random(f, rng, 2, "(d)", &st)))
		goto fail;
	uint64_t meta = ftl_metadata_bytes(f);
	long rss = rss_kib("VmHWM:");
	ftl_destroy(f);
	struct memfig m = {0};
	fprintf(stderr, "bench (d): memory latency and random-line rate on %.1f GiB...\n",
	        l2p_bytes / 1073741824.0);
	int mrc = mem_measure(l2p_bytes, &m);
	double lines = 2 + batch.gc_per_write;
	jout_object(j, "d_ent_tlc_4t", JOUT_BLOCK);
	jout_u64(j, "user_bytes", user_bytes);
	jout_num(j, "fill_seconds", "%.1f", fill_s);
	jout_num(j, "random_4k_per_s", "%.0f", batch.rate);
	print_big_run(j, "random_4k_ftl_write", &one, n);
	print_big_run(j, "random_4k_batched", &batch, n);
	jout_object(j, "steady_random_4k", JOUT_INLINE);
	jout_num(j, "host_writes_per_s", "%.0f", st.rate);
	jout_num(j, "host_writes_per_cpu_s", "%.0f", st.cpu_rate);
	jout_num(j, "waf", "%.4f", st.waf);
	jout_end(j);
	if (one.hw_why)
		jout_str(j, "counters", one.hw_why);
	jout_u64(j, "metadata_bytes", meta);
	jout_num(j, "metadata_bytes_per_user_unit", "%.3f", (double)meta / user_units);
	jout_i64(j, "peak_rss_kib", rss);
	jout_object(j, "memory_model", JOUT_INLINE);
	if (mrc < 0) {
		jout_str(j, "error", "no memory for the measurement buffer");
	} else {
		jout_num(j, "random_lines_per_write", "%.2f", lines);
		jout_num(j, "load_latency_ns", "%.1f", m.lat_ns);
		jout_num(j, "random_lines_per_s", "%.0f", m.lines_per_s);
		jout_num(j, "first_touch_gb_per_s", "%.2f", m.touch_gb_s);
		jout_num(j, "serial_limit_writes_per_s", "%.0f", 1e9 / (lines * m.lat_ns));
		jout_num(j, "overlapped_limit_writes_per_s", "%.0f", m.lines_per_s / lines);
		jout_num(j, "batched_share_of_limit", "%.3f", batch.rate / (m.lines_per_s / lines));
		jout_num(j, "batched_cpu_share_of_limit", "%.3f",
		         batch.cpu_rate / (m.lines_per_s / lines));
	}
	jout_end(j);
	jout_end(j);
	return 0;
fail:
	fprintf(stderr, "femu-gandalf bench: write failed: %s\n", ftl_strerror(rc));
	ftl_destroy(f);
	return 1;
}

/*
 * (f) with --big: the qlc-8t preset (7.68 TB user, 16 KiB mapping units) at full size, filled
 * once with 1 MiB writes, then uniform random unit-sized writes through ftl_write_batch() until
 * it was written 3 times (the fill included): the rate and WAF of the last user capacity (steady
 * state for uniform random writes), and the peak RSS of this drive alone (the kernel's peak is
 * reset first, /proc/self/clear_refs).
 */
static long peak_before_reset; /* the process's peak RSS before bench_qlc8t() reset it */

static int bench_qlc8t(struct json_out *j, uint64_t *rng)
{
	peak_before_reset = rss_kib("VmHWM:");
	FILE *cr = fopen("/proc/self/clear_refs", "w");
	bool reset = cr && fputs("5", cr) >= 0;
	if (cr && fclose(cr))
		reset = false;
	fprintf(stderr, "bench (f): qlc-8t: filling 7.68 TB...\n");
	struct ftl *f = make("qlc-8t", NULL);
	if (!f)
		return 1;
	const struct ftl_geometry *g = ftl_get_geometry(f);
	const uint64_t units = g->user_units, us = g->user_bytes / units;
	struct steady_run st;
	double t0 = now_seconds();
	int rc = fill_seq(f, g->user_bytes, 1 << 20);
	double fill_s = now_seconds() - t0;
	if (!rc)
		rc = steady_random(f, rng, 2, "(f)", &st);
	if (rc) {
		fprintf(stderr, "femu-gandalf bench: write failed: %s\n", ftl_strerror(rc));
		ftl_destroy(f);
		return 1;
	}
	uint64_t meta = ftl_metadata_bytes(f);
	jout_object(j, "f_qlc_8t", JOUT_INLINE);
	jout_u64(j, "user_bytes", g->user_bytes);
	jout_u64(j, "unit_bytes", us);
	jout_num(j, "fill_seconds", "%.1f", fill_s);
	jout_num(j, "random_writes_per_s", "%.0f", st.rate);
	jout_num(j, "random_writes_per_cpu_s", "%.0f", st.cpu_rate);
	jout_num(j, "waf", "%.4f", st.waf);
	jout_u64(j, "metadata_bytes", meta);
	jout_num(j, "metadata_bytes_per_user_unit", "%.3f", (double)meta / units);
	if (reset)
		jout_i64(j, "peak_rss_kib", rss_kib("VmHWM:"));
	else
		jout_null(j, "peak_rss_kib");
	jout_end(j);
	ftl_destroy(f);
	return 0;
}

/* (a)-(c) and (e) on fresh devices of the same geometry, (d) and (f): those of only's letters */
static int bench_ftl(bool quick, const char *only)
{
	/* 64 GiB user at Sf 0.10: 8 ch x 8 LUN, 1 MiB blocks (64 x 16 KiB pages), GC by block (the
	 * tiny preset's gc_unit: the published figures of (a)-(c) are block GC's) */
	const char *bpp = quick ? "blocks_per_plane=143" : "blocks_per_plane=1138";
	char *sets[] = {"channels=8", "luns_per_channel=8", "planes_per_lun=1", (char *)bpp,
			"pages_per_block=64", "page_size=16384", "unit_size=4096", "spare_factor=0.10",
			"gc_policy=greedy", "gc_bg_free_pct=0", "gc_fg_free_pct=0", "pe_cycles=100000", NULL};
	uint64_t rng = 42;
	struct ftl_bench r = {0};
	int rc = 0;

	struct ftl *f = make("tiny", sets);
	if (!f)
		return 1;
	r.units = ftl_get_geometry(f)->user_units;
	if (strchr(only, 'a') && (rc = bench_random_4k(f, &rng, &r)))
		goto fail;
	ftl_destroy(f);

	if (strchr(only, 'b')) {
		fprintf(stderr, "bench (b): 1 MiB sequential...\n");
		if (!(f = make("tiny", sets)) || (rc = bench_seq_1m(f, &r)))
			goto fail;
		ftl_destroy(f);
	}

	if (!(f = make("tiny", sets)))
		return 1;
	if (strchr(only, 'c')) {
		if ((rc = fill_seq(f, ftl_get_geometry(f)->user_bytes, 1 << 20)))
			goto fail;
		fprintf(stderr, "bench (c): KV-like 2-64 MiB objects...\n");
		if ((rc = bench_kv_objects(f, &rng, &r)))
			goto fail;
	}
	if (strchr(only, 'e') && (rc = bench_mqsim(&rng, &r)))
		goto fail;

	struct json_out j;
	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	print_ftl_bench(&j, ftl_get_geometry(f), &r, only);
	ftl_destroy(f);
	if ((strchr(only, 'd') && bench_big(&j, &rng)) || (strchr(only, 'f') && bench_qlc8t(&j, &rng)))
		return 1;
	long peak = rss_kib("VmHWM:");
	jout_i64(&j, "peak_rss_kib", peak > peak_before_reset ? peak : peak_before_reset);
	jout_end(&j);
	return fg_json_finish(&j);
fail:
	if (f)
		fprintf(stderr, "femu-gandalf bench: write failed: %s\n", ftl_strerror(rc));
	ftl_destroy(f);
	return 1;
}

int cmd_bench(int argc, char **argv)
{
	gboolean big = FALSE, quick = FALSE;
	char **parse = NULL, *kv = NULL, *policy = "all", *device = NULL, *only = NULL;
	GOptionEntry opts[] = {
		{"quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "8 GiB device instead of 64 GiB (faster, less exact)", NULL},
		{"big", 0, 0, G_OPTION_ARG_NONE, &big, "also run (d) and (f): the 3.84 TB ent-tlc-4t and 7.68 TB qlc-8t presets at full size, peak RSS", NULL},
		{"only", 0, 0, G_OPTION_ARG_STRING, &only, "run only these of the cases a-f (e.g. --only c, --only ce; d and f need no --big)", "LETTERS"},
		{"parse", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &parse, "instead, time the trace reader on PATH (repeatable)", "PATH"},
		{"kv", 0, 0, G_OPTION_ARG_FILENAME, &kv, "instead, time the KV simulator's policies on the KV trace PATH", "PATH"},
		{"policy", 'p', 0, G_OPTION_ARG_STRING, &policy, "with --kv: one policy (default all)", "P"},
		{"device", 'd', 0, G_OPTION_ARG_STRING, &device, "with --kv: run each policy as kv does, on this preset's drive and without one, and print the drive's cost (wall and CPU ratio)", "PRESET"},
		{NULL},
	};
	GOptionContext *ctx = g_option_context_new("- FTL speed and memory benchmarks (JSON on stdout)");
	g_option_context_add_main_entries(ctx, opts, NULL);
	g_option_context_set_description(ctx, "Examples:\n  femu-gandalf bench\n  femu-gandalf bench --quick\n"
					      "  femu-gandalf bench --big   # needs ~10 GiB RAM\n"
					      "  femu-gandalf bench --only c   # one case: (c), the KV-like objects\n"
					      "  femu-gandalf bench --parse ../shared/traces/weka-claude-code\n"
					      "  femu-gandalf bench --kv ../shared/traces/weka-claude-code --policy lru\n"
					      "  femu-gandalf bench --kv ../shared/traces/weka-claude-code --policy lru --device ent-tlc-1t\n");
	if (!fg_parse_opts(ctx, &argc, &argv)) {
		g_option_context_free(ctx);
		return EXIT_USAGE;
	}
	g_option_context_free(ctx);
	if (parse)
		return bench_parse(parse);
	if (device && !kv) {
		fprintf(stderr, "femu-gandalf bench: --device goes with --kv\n");
		return EXIT_USAGE;
	}
	if (kv)
		return bench_kv(kv, policy, device);
	if (only && (!*only || only[strspn(only, "abcdef")])) {
		fprintf(stderr, "femu-gandalf bench: --only %s: the cases are letters a-f (e.g. --only c)\n", only);
		return EXIT_USAGE;
	}
	return bench_ftl(quick, only ? only : big ? "abcdef" : "abce");
}
