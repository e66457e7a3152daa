/*
 * synth.c - seeded synthetic KV-request traces (AIPerf mooncake_trace JSONL with block_tokens).
 *
 * Model. A session is a growing token context: the shared system prompt (--system tokens, the
 * same content in every session), then the first user prompt, then per turn the previous output
 * plus a new user message (multiturn, aiperf) or tool output (agentic). Each turn is one request
 * whose input is the whole context. Lengths are lognormal with the requested mean (clamped to
 * [1, 20 x mean]); session arrivals are Poisson (the first at t = 0); the gap between two
 * requests of a session is exponential with mean --think (it includes the response time).
 * Agentic: after each main-session turn, with probability --subagent-p, a sub-agent session
 * "<parent>/sub<k>" (a session path: the AIPerf reader links it to its parent by the rule in
 * traces/FORMATS.md) starts one gap later with the system prompt plus a task message (mean
 * --message) and runs 2..8 turns of its own, concurrently with the parent.
 *
 * Hash ids, counter-based. The context is cut into blocks of --block-tokens. The system
 * prompt's full blocks get ids 0..n-1 once; any other block gets the next counter value when it
 * first becomes full, and keeps it for the rest of the session. The last, partial block of a
 * request gets a fresh id (its content is new: a context only grows). Since every non-system
 * token is unique to its session, each distinct content prefix has exactly one id, so ids form
 * the prefix tree of the content: a turn repeats the previous turn's full-block ids, sessions
 * share exactly the system prompt's full blocks, and the aiperf kind (no system prompt) shares
 * nothing. Ids stay far below 2^53 (exact in JSON doubles).
 *
 * Determinism. xoshiro256** seeded through splitmix64: one stream for arrivals and one per
 * session (derived from --seed, the kind and the session number; a sub-agent's from its parent's
 * number and its own), so a session's lengths and times do not depend on --sessions or
 * --subagent-p. A request past --duration is dropped but still takes its ids, so a capped trace
 * is the uncapped one cut at the cap. Requests are collected (the ids stay in the per-session
 * block arrays), sorted by (timestamp, generation order) and written: identical options give
 * byte-identical output with the same libm (rounding to whole tokens and milliseconds hides
 * last-bit differences in log/exp/cos almost always).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ftl.h"
#include "json.h"
#include "synth.h"
#include "vec.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define NO_ID UINT64_MAX
#define MAX_TOKENS 10000000u /* per mean length option */
#define MAX_SESSIONS 10000000u
#define MAX_TURNS 100000u
#define SUB_TURNS_MIN 2
#define SUB_TURNS_MAX 8

/* ---- RNG: splitmix64 seeding, xoshiro256** ---- */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* An independent stream per (seed, a, b). */
static void rng_seed(struct rng *r, uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t x = seed;
	uint64_t h = splitmix64(&x);
	x = h ^ a;
	h = splitmix64(&x);
	x = h ^ b;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

/* xoshiro256**, the FTL's generator */
static uint64_t rng_next(struct rng *r)
{
	return ftl_rand(r->s);
}

/* uniform in [0, 1) */
static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1p-53;
}

/* uniform integer in [lo, hi] (hi - lo < 2^32) */
static uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi)
{
	uint64_t n = (uint64_t)hi - lo + 1;
	return lo + (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

static double rng_exp(struct rng *r, double mean)
{
	return -mean * log1p(-rng_unit(r));
}

static double rng_normal(struct rng *r)
{
	double u = 1.0 - rng_unit(r), v = rng_unit(r); /* u in (0, 1] */
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* Lognormal with the given mean, rounded and clamped to [1, 20 x mean]. */
static uint64_t rng_len(struct rng *r, double mean, double sigma)
{
	double x = exp(log(mean) - sigma * sigma / 2 + sigma * rng_normal(r));
	double hi = 20 * mean;
	x = x > hi ? hi : x;
	return x < 1 ? 1 : (uint64_t)llround(x);
}

#define SIGMA_PROMPT 1.0
#define SIGMA_MESSAGE 0.8
#define SIGMA_OUTPUT 0.8
#define SIGMA_TOOL 1.0

/* ---- generator state ---- */

struct session {
	char name[40];
	uint64_t *blocks; /* ids of the context's full blocks */
	uint64_t nblocks, cap;
	uint64_t ctx; /* tokens */
};

struct rec {
	uint64_t t_ms;
	uint64_t seq; /* generation order: the tie-break */
	uint64_t partial; /* id of the last, partial block, or NO_ID */
	uint64_t input;
	uint32_t output;
	uint32_t sess;
	uint64_t nfull;
};

struct gen {
	const struct synth_opts *o;
	struct session *sess;
	size_t nsess;
	uint64_t sesscap;
	struct rec *recs;
	size_t nrec;
	uint64_t reccap;
	uint64_t next_id;
	uint64_t nsys; /* full blocks of the system prompt: ids 0..nsys-1 */
	double cap_ms; /* drop requests with a later timestamp; INFINITY when no --duration */
	bool oom;
};

/* A new session (context empty); returns its index, or -1 when out of memory. */
static long sess_new(struct gen *g, const char *name)
{
	if (vec_reserve(g->sess, g->sesscap, g->nsess + 1)) {
		g->oom = true;
		return -1;
	}
	struct session *s = &g->sess[g->nsess];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	return (long)g->nsess++;
}

/* Append tokens to a session's context; blocks that become full get their ids. */
static void sess_extend(struct gen *g, uint32_t si, uint64_t tokens)
{
	struct session *s = &g->sess[si];
	uint64_t B = g->o->block_tokens, full = (s->ctx + tokens) / B;
	if (vec_reserve(s->blocks, s->cap, full)) {
		g->oom = true;
		return;
	}
	for (uint64_t i = s->nblocks; i < full; i++)
		s->blocks[i] = i < g->nsys ? i : g->next_id++;
	s->nblocks = full;
	s->ctx += tokens;
}

/*
 * Record a request with the session's current context as input. A request after the cap is
 * dropped but still takes its ids, so a capped trace is exactly the uncapped one cut at the cap.
 */
static void request(struct gen *g, uint32_t si, double t, uint64_t output)
{
	struct session *s = &g->sess[si];
	uint64_t t_ms = (uint64_t)llround(t * 1000);
	uint64_t partial = s->ctx % g->o->block_tokens ? g->next_id++ : NO_ID;
	if ((double)t_ms > g->cap_ms)
		return;
	if (vec_reserve(g->recs, g->reccap, g->nrec + 1)) {
		g->oom = true;
		return;
	}
	struct rec *r = &g->recs[g->nrec];
	r->t_ms = t_ms;
	r->seq = g->nrec++;
	r->partial = partial;
	r->input = s->ctx;
	r->output = (uint32_t)output;
	r->sess = si;
	r->nfull = s->nblocks;
}

/* Sub-agent k of main session number pidx, spawned by the parent's request at time t. */
static void subagent(struct gen *g, uint32_t pidx, uint32_t k, double t)
{
	const struct synth_opts *o = g->o;
	char name[40];
	struct rng r;
	rng_seed(&r, o->seed, ((uint64_t)o->kind << 32) | pidx, 0x5ab0000000000000ull | k);
	/* a session path "<parent>/<child>" (traces/FORMATS.md) names its parent */
	snprintf(name, sizeof(name), "s%u/sub%u", pidx, k);
	long si = sess_new(g, name);
	if (si < 0)
		return;
	sess_extend(g, (uint32_t)si, o->system + rng_len(&r, o->message, SIGMA_MESSAGE));
	uint32_t turns = rng_range(&r, SUB_TURNS_MIN, SUB_TURNS_MAX);
	uint64_t out = 0;
	for (uint32_t j = 0; j < turns && !g->oom; j++) {
		t += rng_exp(&r, o->think);
		if (j)
			sess_extend(g, (uint32_t)si, out + rng_len(&r, o->tool, SIGMA_TOOL));
		out = rng_len(&r, o->output, SIGMA_OUTPUT);
		request(g, (uint32_t)si, t, out);
	}
}

/* Main session number i, arriving at time t. */
static void main_session(struct gen *g, uint32_t i, double t)
{
	const struct synth_opts *o = g->o;
	char name[40];
	struct rng r;
	rng_seed(&r, o->seed, ((uint64_t)o->kind << 32) | i, 1);
	snprintf(name, sizeof(name), "s%u", i);
	long si = sess_new(g, name);
	if (si < 0)
		return;
	uint32_t turns = rng_range(&r, o->turns_min, o->turns_max), nsub = 0;
	sess_extend(g, (uint32_t)si, o->system + rng_len(&r, o->prompt, SIGMA_PROMPT));
	uint64_t out = 0;
	for (uint32_t k = 0; k < turns && !g->oom; k++) {
		if (k) {
			t += rng_exp(&r, o->think);
			if (o->kind == SYNTH_AGENTIC)
				sess_extend(g, (uint32_t)si,
					    out + rng_len(&r, o->tool, SIGMA_TOOL));
			else
				sess_extend(g, (uint32_t)si,
					    out + rng_len(&r, o->message, SIGMA_MESSAGE));
		}
		out = rng_len(&r, o->output, SIGMA_OUTPUT);
		request(g, (uint32_t)si, t, out);
		if (o->kind == SYNTH_AGENTIC && rng_unit(&r) < o->subagent_p)
			subagent(g, i, nsub++, t);
	}
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->t_ms != y->t_ms)
		return x->t_ms < y->t_ms ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int write_all(const struct gen *g, FILE *out)
{
	struct json_out j;
	jout_init(&j, out);
	for (size_t i = 0; i < g->nrec && !jout_error(&j); i++) {
		const struct rec *r = &g->recs[i];
		const struct session *s = &g->sess[r->sess];
		jout_object(&j, NULL, JOUT_INLINE); /* one line per request: JSONL */
		jout_u64(&j, "timestamp", r->t_ms);
		jout_str(&j, "session_id", s->name);
		jout_u64(&j, "input_length", r->input);
		jout_u64(&j, "output_length", r->output);
		jout_array(&j, "hash_ids", JOUT_INLINE);
		for (uint64_t b = 0; b < r->nfull; b++)
			jout_u64(&j, NULL, s->blocks[b]);
		if (r->partial != NO_ID)
			jout_u64(&j, NULL, r->partial);
		jout_end(&j);
		jout_u64(&j, "block_tokens", g->o->block_tokens);
		jout_end(&j);
	}
	return jout_finish(&j) ? -1 : 0;
}

/* ---- public API ---- */

void synth_opts_default(struct synth_opts *o, enum synth_kind kind)
{
	*o = (struct synth_opts){
		.kind = kind,
		.seed = 1,
		.sessions = 200,
		.turns_min = 2,
		.turns_max = 20,
		.rate = 0.5,
		.think = 30,
		.prompt = 2000,
		.message = 300,
		.output = 400,
		.system = 1000,
		.tool = 2000,
		.subagent_p = 0.1,
		.block_tokens = 512,
		.duration = 0,
	};
	if (kind == SYNTH_AGENTIC) {
		o->block_tokens = 64;
		o->turns_min = 5;
		o->turns_max = 30;
		o->think = 5;
		o->system = 4000;
	} else if (kind == SYNTH_AIPERF) {
		o->turns_min = o->turns_max = 100;
		o->system = 0;
	}
}

static const char *const kind_names[] = {"multiturn", "agentic", "aiperf"};

const char *synth_kind_name(enum synth_kind k)
{
	return (unsigned)k < 3 ? kind_names[k] : "?";
}

int synth_kind_parse(const char *s, enum synth_kind *k)
{
	for (unsigned i = 0; i < 3; i++)
		if (!strcmp(s, kind_names[i])) {
			*k = (enum synth_kind)i;
			return 0;
		}
	return -1;
}

#define BAD(...)                                                                                   \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return SYNTH_E_OPTS;                                                               \
	} while (0)

int synth_validate(const struct synth_opts *o, char *err, size_t errlen)
{
	if ((unsigned)o->kind > SYNTH_AIPERF)
		BAD("--kind: must be multiturn, agentic or aiperf");
	if (o->sessions < 1 || o->sessions > MAX_SESSIONS)
		BAD("--sessions %u: must be in 1..%u", o->sessions, MAX_SESSIONS);
	if (o->turns_min < 1)
		BAD("--turns %u:%u: MIN must be at least 1", o->turns_min, o->turns_max);
	if (o->turns_min > o->turns_max)
		BAD("--turns %u:%u: MIN must not exceed MAX", o->turns_min, o->turns_max);
	if (o->turns_max > MAX_TURNS)
		BAD("--turns %u:%u: MAX must be at most %u", o->turns_min, o->turns_max, MAX_TURNS);
	if (!(o->rate >= 1e-6 && o->rate <= 1e6))
		BAD("--rate %g: must be in 1e-6..1e6 sessions/s", o->rate);
	if (!(o->think >= 0 && o->think <= 1e7))
		BAD("--think %g: must be in 0..1e7 seconds", o->think);
	const struct {
		const char *flag;
		uint32_t v, min;
	} lens[] = {
		{"--prompt", o->prompt, 1}, {"--message", o->message, 1},
		{"--output", o->output, 1}, {"--system", o->system, 0}, {"--tool", o->tool, 1},
	};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		if (lens[i].v < lens[i].min || lens[i].v > MAX_TOKENS)
			BAD("%s %u: must be in %u..%u tokens", lens[i].flag, lens[i].v, lens[i].min,
			    MAX_TOKENS);
	if (o->kind == SYNTH_AIPERF && o->system)
		BAD("--system %u: the aiperf kind shares no prefix between sessions (try --kind "
		    "multiturn)",
		    o->system);
	if (!(o->subagent_p >= 0 && o->subagent_p <= 1))
		BAD("--subagent-p %g: must be a probability in [0, 1]", o->subagent_p);
	if (o->block_tokens < 1 || o->block_tokens > (1u << 20))
		BAD("--block-tokens %u: must be in 1..%u", o->block_tokens, 1u << 20);
	if (!(o->duration >= 0 && o->duration <= 1e12))
		BAD("--duration %g: must be >= 0 seconds (0 = no cap)", o->duration);
	return 0;
}

int synth_generate(const struct synth_opts *o, FILE *out, char *err, size_t errlen)
{
	int rc = synth_validate(o, err, errlen);
	if (rc)
		return rc;
	struct gen g = {
		.o = o,
		.nsys = o->system / o->block_tokens,
		.cap_ms = o->duration > 0 ? o->duration * 1000 : INFINITY,
	};
	g.next_id = g.nsys;
	struct rng arr;
	rng_seed(&arr, o->seed, (uint64_t)o->kind << 32, 0xa77a000000000000ull);
	double t = 0;
	for (uint32_t i = 0; i < o->sessions && !g.oom; i++) {
		if (i)
			t += rng_exp(&arr, 1 / o->rate);
		if ((double)llround(t * 1000) > g.cap_ms)
			break; /* this and all later sessions start after the cap */
		main_session(&g, i, t);
	}
	rc = 0;
	if (g.oom) {
		snprintf(err, errlen, "out of memory (%zu requests generated)", g.nrec);
		rc = SYNTH_E_IO;
	} else {
		qsort(g.recs, g.nrec, sizeof(*g.recs), rec_cmp);
		if (write_all(&g, out)) {
			snprintf(err, errlen, "write error");
			rc = SYNTH_E_IO;
		}
	}
	for (size_t i = 0; i < g.nsess; i++)
		free(g.sess[i].blocks);
	free(g.sess);
	free(g.recs);
	return rc;
}
