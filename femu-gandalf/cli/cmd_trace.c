/*
 * cmd_trace.c - `femu-gandalf trace info`: describe any trace the readers understand.
 *
 * Reads the whole trace once, streaming, and prints the detected format and its counts. The
 * distinct block ids are counted in a hash set, and only the ids a turn adds to its session's
 * previous turn are looked up: a turn resends its conversation (the WEKA subset has 18.5 M
 * references to 675 K ids), and its ids up to where it departs from the previous turn were
 * counted with that one. Each session's latest ids are kept for the comparison.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvsim.h"
#include "trace.h"
#include "u64map.h"
#include "vec.h"

GOptionEntry *fg_trace_entries(struct trace_cli *c)
{
	static GOptionEntry e[8];
	GOptionEntry tmp[] = {
		{"format", 0, 0, G_OPTION_ARG_STRING, &c->format, "force a format: blk-csv, biosnoop, mooncake, bailian, aiperf, weka", "F"},
		{"skip-bad", 0, 0, G_OPTION_ARG_NONE, &c->skip_bad, "count and skip malformed records instead of stopping", NULL},
		{"block-tokens", 0, 0, G_OPTION_ARG_INT, &c->block_tokens, "tokens per hash block (default: the format's)", "N"},
		{"session-rate", 0, 0, G_OPTION_ARG_DOUBLE, &c->session_rate, "WEKA: Poisson session arrivals per second (default 0.05)", "R"},
		{"stagger", 0, 0, G_OPTION_ARG_DOUBLE, &c->stagger, "WEKA: fixed seconds between session starts (overrides the rate)", "S"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &c->seed, "WEKA: arrival seed (default 1)", "S"},
		{"fold", 0, 0, G_OPTION_ARG_STRING, &c->fold, "only fold I of K of the sessions (1 <= I <= K <= 64; docs/kv.md)", "I/K"},
		{NULL},
	};
	memcpy(e, tmp, sizeof(tmp));
	return e;
}

int fg_trace_opts(const struct trace_cli *c, struct trace_opts *o)
{
	trace_opts_default(o);
	o->skip_bad = c->skip_bad;
	if (c->format) {
		o->force = trace_format_parse(c->format);
		if (o->force == TF_UNKNOWN) {
			fprintf(stderr, "femu-gandalf: --format %s: must be blk-csv, biosnoop, mooncake, bailian, aiperf or weka\n", c->format);
			return -1;
		}
	}
	const struct {
		const char *flag;
		double v;
	} nonneg[] = {{"--block-tokens", (double)c->block_tokens},
	              {"--session-rate", c->session_rate},
	              {"--stagger", c->stagger}};
	for (size_t i = 0; i < sizeof(nonneg) / sizeof(nonneg[0]); i++)
		if (!(nonneg[i].v >= 0)) {
			fprintf(stderr, "femu-gandalf: %s %g: must be >= 0\n", nonneg[i].flag,
			        nonneg[i].v);
			return -1;
		}
	o->block_tokens = (uint32_t)c->block_tokens;
	if (c->session_rate > 0)
		o->session_rate = c->session_rate;
	o->stagger = c->stagger;
	if (c->seed && !fg_parse_seed(c->seed, &o->seed))
		return -1;
	if (c->fold) {
		unsigned i = 0, k = 0;
		int end = 0;
		if (sscanf(c->fold, "%u/%u%n", &i, &k, &end) != 2 || c->fold[end] || !isdigit((unsigned char)*c->fold) ||
		    k < 1 || k > 64 || i < 1 || i > k) {
			fprintf(stderr, "femu-gandalf: --fold %s: must be I/K with 1 <= I <= K <= 64 (e.g. 2/4)\n", c->fold);
			return -1;
		}
		o->fold = i;
		o->folds = k;
	}
	return 0;
}

/* What trace info counts in one pass. */
struct info {
	uint64_t n;         /* records */
	double first, last; /* their first and last times, seconds */
	/* block traces */
	uint64_t nr, nw, nd, nf, rb, wb, db, end;
	/* KV traces: block references (nblk), the distinct ids among them */
	uint64_t nblk, in, out, sessions;
	struct u64map distinct;
	GHashTable *seen; /* session id -> its latest turn (struct turn) */
	uint32_t bt;
};

/* a session's latest turn: its block ids */
struct turn {
	uint64_t *ids;
	uint64_t n, cap;
};

static void turn_free(gpointer p)
{
	struct turn *t = p;
	free(t->ids);
	g_free(t);
}

static int count_blk(struct trace *t, struct info *s)
{
	struct blk_io io;
	int r;

	while ((r = trace_next_blk(t, &io)) == 1) {
		double ts = io.t_ns / 1e9;
		if (!s->n)
			s->first = ts;
		s->last = ts;
		s->n++;
		switch (io.op) {
		case 'R':
			s->nr++, s->rb += io.bytes;
			break;
		case 'W':
			s->nw++, s->wb += io.bytes;
			break;
		case 'D':
			s->nd++, s->db += io.bytes;
			break;
		default:
			s->nf++;
			break;
		}
		if (io.op != 'F' && io.lba * 512 + io.bytes > s->end)
			s->end = io.lba * 512 + io.bytes;
	}
	return r;
}

/* -1 on a trace error, -2 out of memory, else 0. */
static int count_kv(struct trace *t, struct info *s)
{
	struct kv_request rq;
	int r;

	while ((r = trace_next_kv(t, &rq)) == 1) {
		if (!s->n)
			s->first = rq.t, s->bt = rq.block_tokens;
		s->last = rq.t;
		s->n++;
		s->in += rq.input_tokens;
		s->out += rq.output_tokens;
		struct turn *tn = NULL;
		uint32_t k = 0; /* the ids this turn keeps from its session's previous one */
		if (rq.session != KV_NO_SESSION) { /* (ids are dense, but a fold keeps some) */
			gint64 key = (gint64)rq.session;
			if (!(tn = g_hash_table_lookup(s->seen, &key))) {
				tn = g_new0(struct turn, 1);
				g_hash_table_insert(s->seen, g_memdup2(&key, sizeof(key)), tn);
			}
			k = kv_ids_kept(tn->ids, (uint32_t)tn->n, rq.blocks, rq.nblocks);
		}
		for (uint32_t i = k; i < rq.nblocks; i++)
			if (!u64map_upsert(&s->distinct, rq.blocks[i], 1))
				return -2;
		if (tn) {
			if (vec_reserve(tn->ids, tn->cap, rq.nblocks))
				return -2;
			memcpy(tn->ids + k, rq.blocks + k, (rq.nblocks - k) * sizeof(uint64_t));
			tn->n = rq.nblocks;
		}
		s->nblk += rq.nblocks;
	}
	s->sessions = g_hash_table_size(s->seen);
	return r;
}

/* --model: the trace's peak active KV for that model (kv_active_peak(), docs/kv.md) */
struct active_info {
	const char *model; /* NULL: not asked */
	struct kv_active a;
};

static int active_of(const char *path, const struct trace_opts *o, struct active_info *ai)
{
	char err[PATH_MAX + 700];
	struct kv_model m;
	struct kv_trace kt;
	if (kv_model_load(ai->model, &m, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: --model %s: %s\n", ai->model, err);
		return EXIT_USAGE;
	}
	if (kv_trace_load(path, o, &kt, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return EXIT_USAGE;
	}
	int rc = kv_active_peak(&kt, &m, &ai->a, err, sizeof(err));
	kv_trace_free(&kt);
	if (rc)
		fprintf(stderr, "femu-gandalf: %s\n", err);
	return rc ? 1 : 0;
}

static int print_info_json(const char *path, struct trace *t, const struct info *s, double secs,
                           const struct active_info *ai)
{
	struct json_out j;

	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_str(&j, "path", path);
	jout_str(&j, "format", trace_format_name(trace_format(t)));
	if (trace_is_block(t)) {
		jout_u64(&j, "ios", s->n);
		jout_u64(&j, "reads", s->nr);
		jout_u64(&j, "writes", s->nw);
		jout_u64(&j, "discards", s->nd);
		jout_u64(&j, "flushes", s->nf);
		jout_u64(&j, "read_bytes", s->rb);
		jout_u64(&j, "write_bytes", s->wb);
		jout_u64(&j, "discard_bytes", s->db);
		jout_u64(&j, "max_offset_bytes", s->end);
	} else {
		jout_u64(&j, "requests", s->n);
		jout_u64(&j, "sessions", s->sessions);
		jout_u64(&j, "block_tokens", s->bt);
		jout_u64(&j, "blocks", s->nblk);
		jout_u64(&j, "unique_blocks", s->distinct.count);
		jout_u64(&j, "input_tokens", s->in);
		jout_u64(&j, "output_tokens", s->out);
		jout_u64(&j, "read_bytes", 0);
		jout_u64(&j, "write_bytes", 0);
	}
	jout_num(&j, "duration_s", "%.6f", s->last - s->first);
	jout_u64(&j, "skipped", trace_skipped(t));
	jout_u64(&j, "input_bytes", trace_bytes_read(t));
	jout_num(&j, "parse_mb_per_s", "%.1f",
	         trace_bytes_read(t) / 1e6 / (secs > 0 ? secs : 1e-9));
	if (ai->model) {
		jout_object(&j, "peak_active_kv", JOUT_INLINE);
		jout_str(&j, "model", ai->model);
		jout_u64(&j, "bytes", ai->a.peak_bytes);
		jout_num(&j, "mean_bytes", "%.6g", ai->a.mean_bytes);
		jout_u64(&j, "request", ai->a.peak_req);
		jout_num(&j, "t_s", "%.3f", ai->a.peak_t);
		jout_end(&j);
	}
	jout_end(&j);
	return fg_json_finish(&j) ? 1 : 0;
}

static void print_info_text(const char *path, struct trace *t, const struct info *s,
                            const struct active_info *ai)
{
	double dur = s->last - s->first;

	printf("%s: %s trace\n", path, trace_format_name(trace_format(t)));
	if (trace_is_block(t)) {
		char b1[32], b2[32], b3[32], b4[32];
		printf("  %llu I/Os: %llu reads (%s), %llu writes (%s), %llu discards (%s), %llu "
		       "flushes\n"
		       "  highest offset %s\n",
		       (unsigned long long)s->n, (unsigned long long)s->nr, fg_human(s->rb, b1),
		       (unsigned long long)s->nw, fg_human(s->wb, b2), (unsigned long long)s->nd,
		       fg_human(s->db, b3), (unsigned long long)s->nf, fg_human(s->end, b4));
	} else
		printf("  %llu requests in %llu sessions, %u tokens per block\n"
		       "  %llu block references, %llu unique; %llu input and %llu output tokens\n",
		       (unsigned long long)s->n, (unsigned long long)s->sessions, s->bt,
		       (unsigned long long)s->nblk, (unsigned long long)s->distinct.count,
		       (unsigned long long)s->in, (unsigned long long)s->out);
	printf("  duration %.1f s (%.2f h)\n", dur, dur / 3600);
	if (trace_skipped(t))
		printf("  %llu malformed records skipped (last: %s)\n",
		       (unsigned long long)trace_skipped(t), trace_error(t));
	if (ai->model) {
		char b1[32], b2[32];
		printf("  peak active KV for %s: %s at request %llu (t = %.1f s); mean %s\n",
		       ai->model, fg_human((double)ai->a.peak_bytes, b1),
		       (unsigned long long)ai->a.peak_req, ai->a.peak_t, fg_human(ai->a.mean_bytes, b2));
	}
}

/* Read the trace at path once and print what it holds: the command's exit code. */
static int describe(const char *path, const struct trace_opts *o, bool json,
                    struct active_info *ai)
{
	struct info s = {.first = NAN, .last = NAN,
	                 .seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, turn_free)};
	char err[PATH_MAX + 700];
	double t0 = now_seconds(), secs;
	struct trace *t = trace_open(path, o, err, sizeof(err));
	int rc = EXIT_USAGE, r;

	if (!t) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		g_hash_table_destroy(s.seen);
		return rc;
	}
	r = trace_is_block(t) ? count_blk(t, &s) : count_kv(t, &s);
	secs = now_seconds() - t0; /* the reader's speed, with the counting */
	if (r == -2) {
		fprintf(stderr, "femu-gandalf: out of memory\n");
		rc = 1;
	} else if (r < 0) {
		fprintf(stderr, "femu-gandalf: %s\n", trace_error(t));
	} else if (o->folds && !s.sessions && !trace_is_block(t)) {
		fprintf(stderr, "femu-gandalf: --fold: %s has no sessions to deal out; kv folds such a "
		        "trace by time (docs/kv.md), trace info does not\n", path);
	} else if (!s.n) {
		fprintf(stderr, "femu-gandalf: %s: no usable records%s\n", path,
		        trace_skipped(t) ? " (all malformed and skipped)" : "");
	} else if (ai->model && trace_is_block(t)) {
		fprintf(stderr, "femu-gandalf: --model: %s is a block trace (no KV requests)\n", path);
	} else if (ai->model && (rc = active_of(path, o, ai))) {
		; /* the error is printed */
	} else if (json) {
		rc = print_info_json(path, t, &s, secs, ai);
	} else {
		print_info_text(path, t, &s, ai);
		rc = 0;
	}
	u64map_free(&s.distinct);
	g_hash_table_destroy(s.seen);
	trace_close(t);
	return rc;
}

static int trace_info(int argc, char **argv)
{
	struct trace_cli c = {0};
	gboolean json = FALSE;
	struct active_info ai = {0};
	GOptionEntry mine[] = {
		{"json", 'j', 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
		{"model", 'm', 0, G_OPTION_ARG_STRING, &ai.model,
		 "also the peak active KV for this model (femu-gandalf models)", "M"},
		{NULL},
	};
	GOptionContext *ctx = g_option_context_new("FILE|DIR - describe a block or KV-request trace");
	g_option_context_add_main_entries(ctx, mine, NULL);
	g_option_context_add_main_entries(ctx, fg_trace_entries(&c), NULL);
	g_option_context_set_description(ctx,
		"Formats are detected from the content; .zst files are read transparently.\n"
		"A malformed record stops with FILE:LINE: reason and exit code 2.\n\n"
		"Examples:\n"
		"  femu-gandalf trace info ../shared/traces/mooncake/conversation_trace.jsonl\n"
		"  femu-gandalf trace info ../shared/traces/weka-claude-code --json\n"
		"  femu-gandalf trace info ../shared/traces/weka-claude-code --model paper-kimi-k3\n"
		"  femu-gandalf trace info capture.csv.zst --skip-bad\n");
	int rc = EXIT_USAGE;
	struct trace_opts o;

	if (fg_parse_opts_args(ctx, &argc, &argv, 1, "FILE or DIR") && !fg_trace_opts(&c, &o))
		rc = describe(argv[1], &o, json, &ai);
	g_option_context_free(ctx);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "info"))
		return trace_info(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: femu-gandalf trace info FILE|DIR [--json]\n\nDescribe a trace.\n"
		       "Example:\n  femu-gandalf trace info ../shared/traces/mooncake/conversation_trace.jsonl\n");
		return 0;
	}
	fprintf(stderr, "femu-gandalf trace: expected 'info' (try: femu-gandalf trace --help)\n");
	return EXIT_USAGE;
}
