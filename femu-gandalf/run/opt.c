/*
 * opt.c - how the run layer names an option in its messages. It knows an option by its key (the
 * name it has in struct ssd_run_opts, kv_run_opts and blk_run_opts, hyphenated); the front-end
 * says how its users spell it (the CLI: "--" and the key, cli/main.c), so that no front-end's
 * spelling is written into this layer.
 */
#include <stddef.h>

#include "run.h"

static const char *const keys[RUN_OPT_N] = {
        [RUN_OPT_ACCELERATE] = "accelerate",
        [RUN_OPT_BS] = "bs",
        [RUN_OPT_DEVICE] = "device",
        [RUN_OPT_DRIVE_WRITES] = "drive-writes",
        [RUN_OPT_DWPD] = "dwpd",
        [RUN_OPT_IODEPTH] = "iodepth",
        [RUN_OPT_LOOP] = "loop",
        [RUN_OPT_MAX_LOOPS] = "max-loops",
        [RUN_OPT_MAX_ROUNDS] = "max-rounds",
        [RUN_OPT_PRECONDITION] = "precondition",
        [RUN_OPT_PRESET] = "preset",
        [RUN_OPT_RAMP] = "ramp",
        [RUN_OPT_RATE] = "rate",
        [RUN_OPT_ROUND] = "round",
        [RUN_OPT_RUNTIME] = "runtime",
        [RUN_OPT_RW] = "rw",
        [RUN_OPT_SAVE_SNAPSHOT] = "save-snapshot",
        [RUN_OPT_SSD] = "ssd",
        [RUN_OPT_STEADY_RULE] = "steady-rule",
        [RUN_OPT_UNTIL_STEADY] = "until-steady",
        [RUN_OPT_WORKLOAD] = "workload",
        [RUN_OPT_WRAP] = "wrap",
        [RUN_OPT_WRITES] = "writes",
        [RUN_OPT_ZONE_STREAMS] = "zone-streams",
};

static const char *const *names = keys;

const char *run_opt_key(enum run_opt o)
{
	return o < RUN_OPT_N ? keys[o] : "?";
}

const char *run_opt(enum run_opt o)
{
	return o < RUN_OPT_N && names[o] ? names[o] : run_opt_key(o);
}

void run_opt_spelling(const char *const *spelled)
{
	names = spelled ? spelled : keys;
}
