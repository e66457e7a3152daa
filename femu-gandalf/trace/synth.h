/*
 * synth.h - seeded, deterministic synthetic KV-request traces in AIPerf mooncake_trace JSONL.
 *
 * One JSON object per line, sorted by timestamp (ties keep generation order):
 *   {"timestamp": MS, "session_id": "s3", "input_length": N, "output_length": N,
 *    "hash_ids": [ID, ...], "block_tokens": B}
 * len(hash_ids) == ceil(input_length / block_tokens); ids encode a prefix tree (a turn repeats
 * the previous turn's full-block ids; sessions share only the system prompt's full blocks).
 * "block_tokens" is our extension. Same options and seed -> byte-identical output.
 */
#ifndef FG_SYNTH_H
#define FG_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum synth_kind {
	SYNTH_MULTITURN, /* chat: each turn appends the previous answer and a new user message */
	SYNTH_AGENTIC,   /* agent loop: each turn appends the previous answer and a tool output;
			    sometimes spawns a sub-agent session "<parent>/sub<k>" */
	SYNTH_AIPERF,    /* 100-turn chats, no prefix shared between sessions */
};

struct synth_opts {
	enum synth_kind kind;
	uint64_t seed;
	uint32_t sessions;              /* main sessions */
	uint32_t turns_min, turns_max;  /* turns per main session, uniform in [min, max] */
	double rate;                    /* session arrivals per second (Poisson; first at t = 0) */
	double think;                   /* mean gap between a session's requests, s (exponential) */
	uint32_t prompt;                /* mean first user prompt, tokens (lognormal) */
	uint32_t message;               /* mean later user message (agentic: sub-agent task) */
	uint32_t output;                /* mean output length */
	uint32_t system;                /* shared system prompt, tokens (0 = none) */
	uint32_t tool;                  /* agentic: mean tool output appended per turn */
	double subagent_p;              /* agentic: probability a turn spawns a sub-agent */
	uint32_t block_tokens;          /* tokens per hash block */
	double duration;                /* drop requests after this many seconds (0 = no cap) */
};

/* Defaults of a kind (see cmd_synth.c --help for the table). */
void synth_opts_default(struct synth_opts *o, enum synth_kind kind);
/* "multiturn", "agentic", "aiperf"; parse returns -1 for an unknown name. */
const char *synth_kind_name(enum synth_kind k);
int synth_kind_parse(const char *s, enum synth_kind *k);

#define SYNTH_E_OPTS (-1) /* invalid options: err says which, e.g. "--turns 0:3: ..." */
#define SYNTH_E_IO (-2)   /* write error or out of memory */

/* Check options; 0 or SYNTH_E_OPTS with a message naming the flag in err. */
int synth_validate(const struct synth_opts *o, char *err, size_t errlen);
/* Generate the whole trace to out. Returns 0, SYNTH_E_OPTS or SYNTH_E_IO (message in err). */
int synth_generate(const struct synth_opts *o, FILE *out, char *err, size_t errlen);

#endif
