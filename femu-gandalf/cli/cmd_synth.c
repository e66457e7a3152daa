/*
 * cmd_synth.c - `femu-gandalf synth`: write a seeded synthetic KV-request trace (AIPerf
 * mooncake_trace JSONL plus "block_tokens") for the KV-cache tier to replay.
 *
 * The generator is trace/synth.c; this file only parses options. Numbers are taken as strings
 * and converted here so that every bad value gets the same "femu-gandalf synth: --FLAG VALUE:
 * reason" message (exit 2); range checks live in synth_validate(), which names the flag too.
 * Defaults depend on --kind, so options start unset and the kind's defaults fill the gaps.
 * Options that a kind would ignore (--tool, --subagent-p outside agentic) are errors, not
 * silently dropped. With --out, a failed run removes the partial file (regular files only).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "synth.h"

int cmd_synth(int argc, char **argv); /* the command table's prototype (cli.h) */

#define PFX "femu-gandalf synth"

static bool parse_u64(const char *flag, const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || x > max) {
		fprintf(stderr, PFX ": %s %s: must be an integer in 0..%llu\n", flag, s,
			(unsigned long long)max);
		return false;
	}
	*v = x;
	return true;
}

static bool parse_u32(const char *flag, const char *s, uint32_t *v)
{
	uint64_t x;
	if (!s)
		return true;
	if (!parse_u64(flag, s, UINT32_MAX, &x))
		return false;
	*v = (uint32_t)x;
	return true;
}

static bool parse_num(const char *flag, const char *s, double *v)
{
	char *end;
	if (!s)
		return true;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(x)) {
		fprintf(stderr, PFX ": %s %s: not a number\n", flag, s);
		return false;
	}
	*v = x;
	return true;
}

/* "MIN:MAX" or "N" (= N:N) */
static bool parse_turns(const char *s, uint32_t *mn, uint32_t *mx)
{
	char a[32], *colon = strchr(s, ':');
	uint64_t lo, hi;
	const char *hs = colon ? colon + 1 : s;
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	if (n >= sizeof(a))
		n = sizeof(a) - 1;
	memcpy(a, s, n);
	a[n] = 0;
	char *end;
	errno = 0;
	lo = strtoull(a, &end, 10);
	bool ok = *a >= '0' && *a <= '9' && !*end && !errno && lo <= UINT32_MAX;
	errno = 0;
	hi = ok ? strtoull(hs, &end, 10) : 0;
	ok = ok && *hs >= '0' && *hs <= '9' && !*end && !errno && hi <= UINT32_MAX;
	if (!ok) {
		fprintf(stderr, PFX ": --turns %s: must be MIN:MAX (or N), e.g. 2:20\n", s);
		return false;
	}
	*mn = (uint32_t)lo;
	*mx = (uint32_t)hi;
	return true;
}

static const char description[] =
	"One JSON object per line, sorted by timestamp:\n"
	"  {\"timestamp\": MS, \"session_id\": \"s3\", \"input_length\": N, \"output_length\": N,\n"
	"   \"hash_ids\": [...], \"block_tokens\": B}\n"
	"len(hash_ids) = ceil(input_length / block_tokens). A turn repeats the previous turn's\n"
	"full-block ids; sessions share only the system prompt's full blocks. Same options and\n"
	"seed give byte-identical output.\n\n"
	"Kinds:\n"
	"  multiturn  chats: each turn appends the previous output and a new user message\n"
	"  agentic    agent loops: each turn appends the previous output and a tool output;\n"
	"             with --subagent-p a turn spawns a sub-agent session \"<parent>/sub<k>\"\n"
	"             (system prompt + task message, 2..8 turns) running concurrently\n"
	"  aiperf     100-turn chats with no prefix shared between sessions\n\n"
	"Examples:\n"
	"  femu-gandalf synth --kind multiturn --sessions 100 --out multiturn.jsonl\n"
	"  femu-gandalf synth --kind agentic --sessions 3 --subagent-p 0.2 --seed 7\n"
	"  femu-gandalf synth --kind aiperf --sessions 5 --rate 0.1 --duration 3600\n";

/* synth's options as text, as GOption fills them (parsed by synth_fill()). */
struct synth_args {
	char *kind, *out, *seed, *sessions, *turns, *rate, *think, *prompt, *message, *output;
	char *system, *tool, *subp, *bt, *duration;
};

/* The generator's options from the command line: 0, or -1 after saying what is wrong. */
static int synth_fill(const struct synth_args *a, struct synth_opts *o)
{
	enum synth_kind kind;
	char err[256];

	if (synth_kind_parse(a->kind ? a->kind : "multiturn", &kind)) {
		fprintf(stderr, PFX ": --kind %s: must be multiturn, agentic or aiperf\n", a->kind);
		return -1;
	}
	synth_opts_default(o, kind);
	if (kind != SYNTH_AGENTIC && (a->tool || a->subp)) {
		fprintf(stderr, PFX ": %s applies only to --kind agentic\n",
		        a->tool ? "--tool" : "--subagent-p");
		return -1;
	}
	if (a->seed && !fg_parse_seed(a->seed, &o->seed))
		return -1;
	if (a->turns && !parse_turns(a->turns, &o->turns_min, &o->turns_max))
		return -1;
	if (!parse_u32("--sessions", a->sessions, &o->sessions) ||
	    !parse_num("--rate", a->rate, &o->rate) || !parse_num("--think", a->think, &o->think) ||
	    !parse_u32("--prompt", a->prompt, &o->prompt) ||
	    !parse_u32("--message", a->message, &o->message) ||
	    !parse_u32("--output", a->output, &o->output) ||
	    !parse_u32("--system", a->system, &o->system) ||
	    !parse_u32("--tool", a->tool, &o->tool) ||
	    !parse_num("--subagent-p", a->subp, &o->subagent_p) ||
	    !parse_u32("--block-tokens", a->bt, &o->block_tokens) ||
	    !parse_num("--duration", a->duration, &o->duration))
		return -1;
	if (a->duration && !(o->duration > 0)) {
		fprintf(stderr, PFX ": --duration %s: must be > 0 seconds\n", a->duration);
		return -1;
	}
	if (synth_validate(o, err, sizeof(err))) {
		fprintf(stderr, PFX ": %s\n", err);
		return -1;
	}
	return 0;
}

/* Generate into out_path (NULL: stdout): the exit code. A file is written beside out_path and
 * renamed over it when whole (common/atomicfile): on failure out_path is as it was. */
static int synth_write(const struct synth_opts *o, const char *out_path)
{
	struct fg_atomic a;
	FILE *out = stdout;
	char err[256];
	int g;

	if (out_path && !(out = fg_out_open(&a, "--out", out_path)))
		return 1;
	g = synth_generate(o, out, err, sizeof(err));
	if (!g)
		return out_path && fg_out_commit(&a, "--out") ? 1 : 0;
	if (out_path)
		fg_atomic_abort(&a);
	fprintf(stderr, PFX ": %s%s%s\n", out_path ? out_path : "", out_path ? ": " : "", err);
	return g == SYNTH_E_OPTS ? EXIT_USAGE : 1;
}

int cmd_synth(int argc, char **argv)
{
	struct synth_args a = {0};
	int rc = EXIT_USAGE;
	GOptionEntry opts[] = {
	        {"kind", 'k', 0, G_OPTION_ARG_STRING, &a.kind,
	         "multiturn | agentic | aiperf (default multiturn)", "KIND"},
	        {"sessions", 'n', 0, G_OPTION_ARG_STRING, &a.sessions,
	         "main sessions (default 200)", "N"},
	        {"turns", 't', 0, G_OPTION_ARG_STRING, &a.turns,
	         "turns per main session (default 2:20; agentic 5:30; aiperf 100:100)", "MIN:MAX"},
	        {"rate", 'r', 0, G_OPTION_ARG_STRING, &a.rate,
	         "Poisson session arrivals per second (default 0.5)", "R"},
	        {"think", 0, 0, G_OPTION_ARG_STRING, &a.think,
	         "mean gap between a session's requests, exponential (default 30; agentic 5)", "S"},
	        {"prompt", 0, 0, G_OPTION_ARG_STRING, &a.prompt,
	         "mean first prompt, lognormal (default 2000)", "TOKENS"},
	        {"message", 0, 0, G_OPTION_ARG_STRING, &a.message,
	         "mean later user message; agentic: sub-agent task (default 300)", "TOKENS"},
	        {"output", 0, 0, G_OPTION_ARG_STRING, &a.output, "mean output length (default 400)",
	         "TOKENS"},
	        {"system", 0, 0, G_OPTION_ARG_STRING, &a.system,
	         "prompt shared by all sessions, 0 = none (default 1000; agentic 4000; aiperf 0)",
	         "TOKENS"},
	        {"tool", 0, 0, G_OPTION_ARG_STRING, &a.tool,
	         "agentic: mean tool output appended per turn (default 2000)", "TOKENS"},
	        {"subagent-p", 0, 0, G_OPTION_ARG_STRING, &a.subp,
	         "agentic: probability a turn spawns a sub-agent (default 0.1)", "P"},
	        {"block-tokens", 'b', 0, G_OPTION_ARG_STRING, &a.bt,
	         "tokens per hash block (default 512; agentic 64)", "B"},
	        {"duration", 'd', 0, G_OPTION_ARG_STRING, &a.duration,
	         "drop requests after this many seconds (default: no cap)", "SECONDS"},
	        {"seed", 's', 0, G_OPTION_ARG_STRING, &a.seed, "random seed (default 1)", "S"},
	        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a.out, "output file (default stdout)",
	         "FILE"},
	        {NULL},
	};
	GOptionContext *ctx =
	        g_option_context_new("- synthetic KV-request trace (AIPerf mooncake_trace JSONL)");
	g_option_context_add_main_entries(ctx, opts, NULL);
	g_option_context_set_description(ctx, description);
	struct synth_opts o;

	if (fg_parse_opts(ctx, &argc, &argv) && !synth_fill(&a, &o))
		rc = synth_write(&o, a.out);
	g_option_context_free(ctx);
	char *strs[] = {a.kind,   a.out,   a.seed,   a.sessions, a.turns,
	                a.rate,   a.think, a.prompt, a.message,  a.output,
	                a.system, a.tool,  a.subp,   a.bt,       a.duration};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		g_free(strs[i]);
	return rc;
}
