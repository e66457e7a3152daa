/*
 * cmd_lift.c - `femu-gandalf lift CAPTURE`: a block trace of a KV store back to KV requests
 * (store/lift.c, docs/lift.md). The requests go to --out (or stdout) as AIPerf JSONL; what was
 * found and what could not be told goes to stderr, or with --json as one object on stdout
 * (then --out is required). --against T measures the result against the original trace.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "kvsim.h"
#include "lift.h"
#include "parse.h"

static int parse_slots(const char *s, uint64_t slot[2])
{
	char a[64], *comma;
	unsigned long long x = 0, y = 0;
	snprintf(a, sizeof(a), "%s", s);
	if ((comma = strchr(a, ',')))
		*comma = 0;
	if (!fg_parse_size(a, &x) || !x || (comma && (!fg_parse_size(comma + 1, &y) || !y)))
		return -1;
	slot[0] = x;
	slot[1] = y;
	return 0;
}

static void print_text(FILE *o, const char *out, const struct lift_result *r)
{
	fprintf(o, "lift: layout found: %s%" PRIu64 "-byte metadata region%s; slots %" PRIu64
	           " bytes (chunks)",
	        "", r->meta_bytes, r->meta_inferred ? " (inferred)" : "", r->slot[0]);
	if (r->slot[1])
		fprintf(o, " and %" PRIu64 " bytes (states)", r->slot[1]);
	fprintf(o, "%s; %u tokens per block\n", r->slot_inferred ? " (inferred)" : "",
	        r->block_tokens);
	fprintf(o, "lift: %" PRIu64 " reads, %" PRIu64 " writes, %" PRIu64 " checkpoints, %" PRIu64
	           " discards, %" PRIu64 " flushes (%s)\n",
	        r->reads, r->writes, r->checkpoints, r->discards, r->flushes,
	        r->demuxed ? "interleaved requests: demultiplexed"
	        : r->fenced ? "requests cut at the fences"
	                    : "no fences: requests cut at chain breaks");
	if (r->demuxed)
		fprintf(o, "lift: %" PRIu64 " I/Os given to one of several candidate requests: %" PRIu64
		           " requests could not be split with certainty\n",
		        r->uncertain, r->uncertain_requests);
	fprintf(o, "lift: %" PRIu64 " requests in %" PRIu64 " sessions, %" PRIu64 " chunks, %" PRIu64
	           " states -> %s; %" PRIu64 " requests end in a partial block (tokens estimated)\n",
	        r->requests, r->sessions, r->chunks, r->states, out ? out : "stdout",
	        r->tokens_estimated);
	if (r->placed_writes) {
		fprintf(o, "lift: %" PRIu64 " puts with an FDP placement ID:", r->placed_writes);
		for (unsigned k = 0; k < r->nplacement; k++)
			fprintf(o, "%s ID %u: %" PRIu64 " chunks, %" PRIu64 " states", k ? ";" : "",
			        r->placement[k].pid, r->placement[k].chunks, r->placement[k].states);
		fprintf(o, "\n");
	}
	uint64_t w = r->unwritten_reads + r->chain_breaks + r->read_after_write + r->orphan_headers +
	             r->other_ios;
	if (w)
		fprintf(o,
		        "lift: warning: %" PRIu64 " reads of never-written slots, %" PRIu64
		        " chain breaks, %" PRIu64 " reads after writes, %" PRIu64
		        " headers without payload, %" PRIu64 " other I/Os; the first: %s\n",
		        r->unwritten_reads, r->chain_breaks, r->read_after_write, r->orphan_headers,
		        r->other_ios, r->first_warning);
}

static int print_json(const struct lift_result *r, const struct lift_compare *c,
                      const char *layout)
{
	struct json_out j;
	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_str(&j, "layout", layout);
	jout_u64(&j, "meta_bytes", r->meta_bytes);
	jout_bool(&j, "meta_inferred", r->meta_inferred);
	jout_u64(&j, "slot_chunk_bytes", r->slot[0]);
	jout_u64(&j, "slot_state_bytes", r->slot[1]);
	jout_bool(&j, "slots_inferred", r->slot_inferred);
	jout_u64(&j, "block_tokens", r->block_tokens);
	jout_bool(&j, "fenced", r->fenced);
	jout_bool(&j, "demultiplexed", r->demuxed);
	jout_u64(&j, "uncertain", r->uncertain);
	jout_u64(&j, "uncertain_requests", r->uncertain_requests);
	jout_u64(&j, "requests", r->requests);
	jout_u64(&j, "sessions", r->sessions);
	jout_u64(&j, "chunks", r->chunks);
	jout_u64(&j, "states", r->states);
	jout_u64(&j, "reads", r->reads);
	jout_u64(&j, "writes", r->writes);
	jout_u64(&j, "checkpoints", r->checkpoints);
	jout_u64(&j, "discards", r->discards);
	jout_u64(&j, "flushes", r->flushes);
	jout_u64(&j, "tokens_estimated", r->tokens_estimated);
	jout_u64(&j, "placed_writes", r->placed_writes);
	jout_array(&j, "placement", JOUT_BLOCK);
	for (unsigned k = 0; k < r->nplacement; k++) {
		jout_object(&j, NULL, JOUT_INLINE);
		jout_u64(&j, "pid", r->placement[k].pid);
		jout_u64(&j, "chunks", r->placement[k].chunks);
		jout_u64(&j, "states", r->placement[k].states);
		jout_end(&j);
	}
	jout_end(&j);
	jout_object(&j, "warnings", JOUT_INLINE);
	jout_u64(&j, "unwritten_reads", r->unwritten_reads);
	jout_u64(&j, "chain_breaks", r->chain_breaks);
	jout_u64(&j, "read_after_write", r->read_after_write);
	jout_u64(&j, "orphan_headers", r->orphan_headers);
	jout_u64(&j, "other_ios", r->other_ios);
	jout_end(&j);
	if (c) {
		jout_object(&j, "against", JOUT_INLINE);
		jout_u64(&j, "original", c->original);
		jout_u64(&j, "invisible", c->invisible);
		jout_u64(&j, "lifted", c->lifted);
		jout_u64(&j, "exact", c->exact);
		jout_u64(&j, "exact_with_tokens", c->exact_tokens);
		jout_u64(&j, "chain_wrong", c->chain_wrong);
		jout_u64(&j, "session_wrong", c->session_wrong);
		jout_u64(&j, "tokens_wrong", c->tokens_wrong);
		jout_u64(&j, "time_wrong", c->time_wrong);
		jout_num(&j, "token_error", "%.6f",
		         c->tokens ? (double)c->token_abs_err / (double)c->tokens : 0);
		jout_end(&j);
	}
	jout_end(&j);
	return fg_json_finish(&j);
}

/* The flags, as GOption fills them. */
struct lift_cli {
	char *layout, *split, *meta, *slots, *model, *out, *against, *format;
	gint btok;
	double speed;
	gboolean json;
};

static GOptionContext *lift_context(struct lift_cli *c)
{
	GOptionEntry opts[] = {
	        {"layout", 0, 0, G_OPTION_ARG_STRING, &c->layout,
	         "the store's layout: lmcache-rawblock (default) | kvbm | vllm-disk", "L"},
	        {"meta", 0, 0, G_OPTION_ARG_STRING, &c->meta,
	         "lmcache-rawblock: the metadata region's bytes (default: inferred)", "BYTES"},
	        {"slot", 0, 0, G_OPTION_ARG_STRING, &c->slots,
	         "slot bytes of a chunk and of a state (default: inferred)", "CHUNK[,STATE]"},
	        {"block-tokens", 0, 0, G_OPTION_ARG_INT, &c->btok, "tokens per block", "N"},
	        {"model", 'm', 0, G_OPTION_ARG_FILENAME, &c->model,
	         "the model the store ran (tokens per block = chunk bytes / its bytes per token)",
	         "M"},
	        {"split", 0, 0, G_OPTION_ARG_STRING, &c->split,
	         "how requests are cut: auto (default) | seq (at the fences) | demux (interleaved "
	         "requests)",
	         "S"},
	        {"speed", 0, 0, G_OPTION_ARG_DOUBLE, &c->speed,
	         "the store ran at N x trace speed (kv --timing xN): multiply the gaps by N", "N"},
	        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &c->out, "write the requests here", "FILE"},
	        {"against", 0, 0, G_OPTION_ARG_FILENAME, &c->against,
	         "compare the result with the original KV-request trace", "T"},
	        {"json", 'j', 0, G_OPTION_ARG_NONE, &c->json, "print the summary as one JSON object",
	         NULL},
	        {"format", 0, 0, G_OPTION_ARG_STRING, &c->format,
	         "force the capture's format: blk-csv | biosnoop | blk-ftrace", "F"},
	        {NULL},
	};
	GOptionContext *ctx =
	        g_option_context_new("CAPTURE - a KV store's block trace back to KV requests");
	g_option_context_add_main_entries(ctx, opts, NULL); /* GLib copies the table */
	g_option_context_set_description(
	        ctx, "The capture mode, and what a block trace cannot show: docs/lift.md.\n"
	             "Example:\n"
	             "  femu-gandalf kv --trace traces/agentic-small.jsonl --model test-hybrid-256 "
	             "--policy write-through --dram 0 \\\n"
	             "      --target store.img --capture --record capture.csv\n"
	             "  femu-gandalf lift capture.csv --model test-hybrid-256 --out lifted.jsonl "
	             "--against traces/agentic-small.jsonl\n");
	return ctx;
}

/* The flags into lift_run()'s options. 0, or -1 after printing the error. */
#define BAD(...) return fprintf(stderr, "femu-gandalf: " __VA_ARGS__), fputc('\n', stderr), -1
static int lift_flags(const struct lift_cli *c, struct lift_opts *lo, struct trace_opts *to)
{
	char err[1024];
	unsigned long long m = 0;
	memset(lo, 0, sizeof(*lo));
	trace_opts_default(to);
	lo->split = !strcmp(c->split, "auto")  ? LIFT_SPLIT_AUTO
	            : !strcmp(c->split, "seq") ? LIFT_SPLIT_SEQ
	                                       : LIFT_SPLIT_DEMUX;
	if (store_layout_parse(c->layout, &lo->layout))
		BAD("--layout %s: must be lmcache-rawblock, kvbm or vllm-disk", c->layout);
	if (c->meta && (lo->layout != STORE_LMCACHE_RAWBLOCK || !fg_parse_size(c->meta, &m) || !m))
		BAD("--meta %s: a size > 0, with --layout lmcache-rawblock", c->meta);
	if (c->slots && parse_slots(c->slots, lo->slot))
		BAD("--slot %s: must be CHUNK or CHUNK,STATE sizes > 0", c->slots);
	if (c->btok < 0)
		BAD("--block-tokens %d: must be > 0", c->btok);
	if (c->speed < 0 || !isfinite(c->speed))
		BAD("--speed %g: must be > 0", c->speed);
	if (strcmp(c->split, "auto") && strcmp(c->split, "seq") && strcmp(c->split, "demux"))
		BAD("--split %s: must be auto, seq or demux", c->split);
	if (c->json && !c->out)
		BAD("--json prints the summary on stdout: give --out FILE for the requests");
	if (c->against && !c->out)
		BAD("--against reads the lifted trace back: give --out FILE");
	if (c->format && !trace_format_is_block(to->force = trace_format_parse(c->format)))
		BAD("--format %s: not a block trace format", c->format);
	lo->meta_bytes = m;
	lo->block_tokens = (uint32_t)c->btok;
	lo->speed = c->speed;
	if (c->model) {
		struct kv_model km;
		if (kv_model_load(c->model, &km, err, sizeof(err)))
			BAD("--model %s: %s", c->model, err);
		lo->have_model = true;
		lo->bytes_per_token = km.full_kv_bytes_per_token;
	}
	return 0;
}
#undef BAD

static void print_against(const char *against, const struct lift_compare *c)
{
	fprintf(stderr,
	        "lift: against %s: %" PRIu64 " of %" PRIu64 " requests exact in chain and session, "
	        "%" PRIu64 " with their token count too (%" PRIu64 " without blocks, invisible); "
	        "wrong: %" PRIu64 " chains, %" PRIu64 " sessions, %" PRIu64 " token counts (error "
	        "%.4f%% of tokens), %" PRIu64 " times\n",
	        against, c->exact, c->original - c->invisible, c->exact_tokens, c->invisible,
	        c->chain_wrong, c->session_wrong, c->tokens_wrong,
	        c->tokens ? 100.0 * (double)c->token_abs_err / (double)c->tokens : 0, c->time_wrong);
}

int cmd_lift(int argc, char **argv)
{
	struct lift_cli c = {.layout = "lmcache-rawblock", .split = "auto"};
	struct lift_opts lo;
	struct trace_opts to;
	struct lift_result r;
	struct lift_compare cmp;
	char err[2048];
	GOptionContext *ctx = lift_context(&c);
	int rc = EXIT_USAGE;
	if (!fg_parse_opts_args(ctx, &argc, &argv, 1, "CAPTURE") || lift_flags(&c, &lo, &to))
		goto done;
	/* the trace goes to a file beside --out, renamed over it when whole (common/atomicfile):
	 * a failed lift leaves --out as it was, and a device or link to one is never replaced */
	struct fg_atomic out;
	FILE *o = stdout;
	rc = 1;
	if (c.out && !(o = fg_out_open(&out, "--out", c.out)))
		goto done;
	int lr = lift_run(argv[1], &to, &lo, o, &r, err, sizeof(err));
	rc = 1;
	if (lr) {
		fprintf(stderr, "femu-gandalf: %s: %s\n", argv[1], err);
		if (c.out)
			fg_atomic_abort(&out); /* never leave half a trace behind */
		goto done;
	}
	if (c.out && fg_out_commit(&out, "--out"))
		goto done;
	if (c.against) {
		struct trace_opts ta;
		trace_opts_default(&ta);
		if (lift_compare(c.out, c.against, &ta, &cmp, err, sizeof(err))) {
			fprintf(stderr, "femu-gandalf: --against %s: %s\n", c.against, err);
			goto done;
		}
	}
	rc = 0;
	if (c.json)
		rc = print_json(&r, c.against ? &cmp : NULL, c.layout);
	else {
		print_text(stderr, c.out, &r);
		if (c.against)
			print_against(c.against, &cmp);
	}
done:
	g_option_context_free(ctx);
	return rc;
}
