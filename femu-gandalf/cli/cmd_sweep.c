/* cmd_sweep.c - a sweep as independent jobs, for whatever runs them: GNU parallel, xargs on
 * this machine's cores, a Slurm job array on a cluster (docs/sweep.md).
 *
 *   femu-gandalf sweep --emit-jobs DIR KV-FLAGS...   DIR/jobs.txt: one shell command per line,
 *                                                    each one `kv` point writing its own
 *                                                    DIR/results/NNNN.csv (NNNN = line number)
 *   femu-gandalf sweep --merge DIR [--output FILE]   every result checked, then the table
 *   femu-gandalf sweep --missing DIR                 the lines whose result is missing or bad
 *   femu-gandalf sweep --emit-batch FILE             --emit-jobs for each line of FILE, "DIR
 *                                                    KV-FLAGS..." in shell words, in one process
 *   femu-gandalf sweep --run-batch FILE|-            jobs.txt lines run in one process, one
 *                                                    after another
 *
 * A batch is how an experiment writes its sweeps (scripts/experiments/lib.sh): a process per
 * sweep would parse the trace again for each of them (the WEKA subset: half a second, and an
 * experiment has up to 400 sweeps), where the batch keeps the last trace for the next sweep that
 * reads it the same way.
 *
 * The merged table is the CSV that `femu-gandalf kv KV-FLAGS` prints, row for row, without its
 * wall_s column: what is left depends only on the flags, so the table is the same bytes
 * wherever and in whatever order the jobs ran. Each job's wall time goes to DIR/wall.csv. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"

#define SWEEP_WALL_COLUMN "wall_s"

struct emit {
	struct kv_jobs jobs;
	GString *lines;
	char *cwd, *self, *dir;
	char **args; /* the kv flags, as given */
	unsigned n;
	bool quiet; /* in a batch: no job list on stdout, no how-to-run on stderr */
};

/* s for a POSIX shell: as is when nothing in it is special, else single-quoted */
static void sh_word(GString *out, const char *s)
{
	if (*s && s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	                      "_-+=.,:/@%")] == '\0') {
		g_string_append(out, s);
		return;
	}
	char *q = g_shell_quote(s);
	g_string_append(out, q);
	g_free(q);
}

static int emit_one(const struct kv_jobs *j, const char *policy, uint64_t point)
{
	struct emit *e = j->arg;
	GString *l = e->lines;
	char job[96], res[32];
	e->n++;
	g_string_append(l, "cd ");
	sh_word(l, e->cwd);
	g_string_append(l, " && ");
	sh_word(l, e->self);
	g_string_append(l, " kv");
	for (char **a = e->args; *a; a++) {
		g_string_append_c(l, ' ');
		sh_word(l, *a);
	}
	snprintf(job, sizeof(job), "%s:%llu", policy, (unsigned long long)point);
	snprintf(res, sizeof(res), "/results/%04u.csv", e->n);
	char *path = g_strconcat(e->dir, res, NULL);
	g_string_append(l, " --csv --job ");
	sh_word(l, job);
	g_string_append(l, " --output ");
	sh_word(l, path);
	g_string_append_c(l, '\n');
	g_free(path);
	return 0;
}

/* DIR/jobs.txt: the new list, or the same list kept (its results too); another sweep's list is
 * refused. 0 or an exit code. */
static int emit_save(struct emit *e)
{
	char *path = g_build_filename(e->dir, "jobs.txt", NULL), *old = NULL, *sub;
	int rc = 0;
	if (g_file_get_contents(path, &old, NULL, NULL) && strcmp(old, e->lines->str)) {
		fprintf(stderr,
		        "femu-gandalf: sweep --emit-jobs: %s holds another sweep's jobs (other flags, "
		        "or another build): use an empty directory\n",
		        path);
		rc = EXIT_USAGE;
	}
	for (int i = 0; i < 2 && !rc; i++) {
		sub = g_build_filename(e->dir, i ? "logs" : "results", NULL);
		if (g_mkdir_with_parents(sub, 0755)) {
			fprintf(stderr, "femu-gandalf: sweep: %s: %s\n", sub, g_strerror(errno));
			rc = 1;
		}
		g_free(sub);
	}
	if (!rc && !old && fg_save_file("sweep", path, e->lines->str, e->lines->len))
		rc = 1;
	if (!rc && !e->quiet) {
		GString *w = g_string_new(NULL), *q = g_string_new(NULL);
		g_string_printf(w, "sed -n \"${SLURM_ARRAY_TASK_ID}p\" ");
		sh_word(w, path);
		g_string_append(w, " | sh");
		char *logs = g_build_filename(e->dir, "logs", "%a.out", NULL);
		char *wrap = g_shell_quote(w->str);
		sh_word(q, logs);
		fwrite(e->lines->str, 1, e->lines->len, stdout);
		fprintf(stderr,
		        "femu-gandalf: sweep: %u jobs in %s%s; run them with one of\n"
		        "  parallel -j 2 < %s\n"
		        "  xargs -d '\\n' -P 2 -I{} sh -c {} < %s\n"
		        "  sbatch --array=1-%u --output=%s --wrap %s\n"
		        "then: femu-gandalf sweep --merge %s\n",
		        e->n, path, old ? " (kept: the same jobs were there)" : "", path, path, e->n,
		        q->str, wrap, e->dir);
		g_free(wrap);
		g_free(logs);
		g_string_free(w, TRUE);
		g_string_free(q, TRUE);
	}
	g_free(old);
	g_free(path);
	return rc;
}

/* This program's path, as jobs.txt names it (g_free it), or NULL after saying why. */
static char *self_path(void)
{
	char *p = g_file_read_link("/proc/self/exe", NULL);
	if (!p)
		fprintf(stderr, "femu-gandalf: sweep: cannot find this program (/proc/self/exe)\n");
	return p;
}

/* --emit-jobs DIR with kv's argv (argv[0] a program name). keep: a batch's kept trace, or
 * NULL. *njobs += the jobs written. 0, or an exit code after printing the error. */
static int sweep_emit(const char *dir, int argc, char **argv, struct kv_trace_keep *keep,
                      unsigned *njobs)
{
	struct emit e = {.jobs = {.emit = emit_one, .keep = keep}, .lines = g_string_new(NULL)};
	e.jobs.arg = &e;
	e.quiet = keep != NULL;
	e.cwd = g_get_current_dir();
	e.self = self_path();
	e.dir = g_path_is_absolute(dir) ? g_strdup(dir) : g_build_filename(e.cwd, dir, NULL);
	e.args = g_new0(char *, argc + 1);
	for (int i = 1; i < argc; i++)
		e.args[i - 1] = argv[i];
	int rc = e.self ? 0 : 1;
	if (!rc)
		rc = kv_emit_jobs(argc, argv, &e.jobs);
	if (!rc && !e.n) {
		fprintf(stderr, "femu-gandalf: sweep --emit-jobs: these flags run nothing\n");
		rc = EXIT_USAGE;
	}
	if (!rc)
		rc = emit_save(&e);
	if (!rc && njobs)
		*njobs += e.n;
	g_string_free(e.lines, TRUE);
	g_free(e.args);
	g_free(e.cwd);
	g_free(e.self);
	g_free(e.dir);
	return rc;
}

/*
 * A batch file's lines, each as POSIX shell words, handed to fn in order (blank lines and lines
 * starting with # skipped) until one fails; FILE "-" is standard input. what names the mode in
 * errors. 0, or the failing line's exit code after printing the error.
 */
typedef int (*batch_fn)(char **words, int n, const char *where, void *arg);
static int batch_each(const char *what, const char *file, batch_fn fn, void *arg)
{
	char *text = NULL;
	gsize len = 0;
	GError *e = NULL;
	if (!strcmp(file, "-")) {
		GIOChannel *in = g_io_channel_unix_new(0);
		if (g_io_channel_set_encoding(in, NULL, &e) == G_IO_STATUS_NORMAL)
			g_io_channel_read_to_end(in, &text, &len, &e);
		g_io_channel_unref(in);
	} else {
		g_file_get_contents(file, &text, &len, &e);
	}
	if (e) {
		fprintf(stderr, "femu-gandalf: sweep %s: %s: %s\n", what, file, e->message);
		g_error_free(e);
		g_free(text);
		return 1;
	}
	char **lines = g_strsplit(text, "\n", -1);
	int rc = 0;
	for (unsigned i = 0; lines[i] && !rc; i++) {
		char **words = NULL, where[PATH_MAX + 32];
		int n = 0;
		const char *l = lines[i] + strspn(lines[i], " \t");
		if (!*l || *l == '#')
			continue;
		snprintf(where, sizeof(where), "%s:%u", strcmp(file, "-") ? file : "stdin", i + 1);
		if (!g_shell_parse_argv(l, &n, &words, &e)) {
			fprintf(stderr, "femu-gandalf: sweep %s: %s: %s\n", what, where, e->message);
			g_clear_error(&e);
			rc = EXIT_USAGE;
		} else {
			rc = fn(words, n, where, arg);
		}
		g_strfreev(words);
	}
	g_strfreev(lines);
	g_free(text);
	return rc;
}

struct emit_batch {
	struct kv_trace_keep keep;
	unsigned sweeps, jobs;
};

static int emit_batch_line(char **words, int n, const char *where, void *arg)
{
	struct emit_batch *b = arg;
	if (n < 2) {
		fprintf(stderr, "femu-gandalf: sweep --emit-batch: %s: needs a directory and kv's "
		                "flags\n", where);
		return EXIT_USAGE;
	}
	/* kv's argv: a program name, then the flags after DIR (a copy of the pointers: option
	 * parsing reorders them) */
	char **argv = g_memdup2(words, ((size_t)n + 1) * sizeof(*words));
	argv[0] = "sweep";
	int rc = sweep_emit(words[0], n, argv, &b->keep, &b->jobs);
	g_free(argv);
	if (rc)
		fprintf(stderr, "femu-gandalf: sweep --emit-batch: %s: the sweep into %s failed "
		                "(above); the ones before it are written\n", where, words[0]);
	b->sweeps++;
	return rc;
}

/* --emit-batch FILE: each line "DIR KV-FLAGS..." emitted as --emit-jobs DIR KV-FLAGS would, in
 * order, the trace kept from one sweep to the next. Stops at the first line that fails: the
 * sweeps before it are written, the rest are not. 0, or an exit code after printing the
 * error. */
static int sweep_emit_batch(const char *file)
{
	struct emit_batch b = {0};
	int rc = batch_each("--emit-batch", file, emit_batch_line, &b);
	if (!rc)
		fprintf(stderr, "femu-gandalf: sweep --emit-batch: %u sweeps, %u jobs written\n",
		        b.sweeps, b.jobs);
	kv_trace_keep_free(&b.keep);
	return rc;
}

struct run_batch {
	struct kv_trace_keep keep;
	char *self; /* this program's real path */
	int home;   /* the directory --run-batch started in (an fd, for fchdir) */
};

/* One line of jobs.txt, "cd DIR && PROGRAM kv FLAGS...", run here as PROGRAM would run it. */
static int run_batch_line(char **words, int n, const char *where, void *arg)
{
	struct run_batch *b = arg;
	char *prog = n >= 5 ? realpath(words[3], NULL) : NULL;
	int rc = 0;
	if (n < 5 || strcmp(words[0], "cd") || strcmp(words[2], "&&") || strcmp(words[4], "kv")) {
		fprintf(stderr, "femu-gandalf: sweep --run-batch: %s: not a job line (\"cd DIR && "
		                "PROGRAM kv FLAGS...\", as jobs.txt has them)\n", where);
		rc = EXIT_USAGE;
	} else if (!prog || strcmp(prog, b->self)) {
		fprintf(stderr, "femu-gandalf: sweep --run-batch: %s: the job runs %s, not this "
		                "program (%s): run it with sh\n", where, words[3], b->self);
		rc = EXIT_USAGE;
	} else if (chdir(words[1])) {
		fprintf(stderr, "femu-gandalf: sweep --run-batch: %s: cd %s: %s\n", where, words[1],
		        g_strerror(errno));
		rc = 1;
	} else {
		char **argv = g_memdup2(words + 4, ((size_t)n - 4 + 1) * sizeof(*words));
		rc = kv_run_kept(n - 4, argv, &b->keep);
		g_free(argv);
		if (rc)
			fprintf(stderr, "femu-gandalf: sweep --run-batch: %s: the run failed (above); "
			                "the ones before it are written\n", where);
		if (fchdir(b->home) && !rc) {
			fprintf(stderr, "femu-gandalf: sweep --run-batch: back to the first "
			                "directory: %s\n", g_strerror(errno));
			rc = 1;
		}
	}
	free(prog);
	return rc;
}

/* --run-batch FILE: job lines run one after another in this process, as `sh` would run them,
 * with the trace kept from one run to the next that reads it the same way, the drive's
 * tables from one drive to the next of the same geometry (ftl_keep_tables), and the
 * simulation from one run to the next that differs from it only in the drive's side
 * (kv_run_keep_sims). Stops at the first run that fails: the results of the runs before it are
 * written. 0, or an exit code. */
static int sweep_run_batch(const char *file)
{
	struct run_batch b = {.self = self_path(), .home = -1};
	int rc = b.self ? 0 : 1;
	if (!rc && (b.home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "femu-gandalf: sweep --run-batch: cannot open the current "
		                "directory: %s\n", g_strerror(errno));
		rc = 1;
	}
	if (!rc) {
		ftl_keep_tables(true);
		kv_run_keep_sims(true);
		rc = batch_each("--run-batch", file, run_batch_line, &b);
		kv_run_keep_sims(false);
		ftl_keep_tables(false);
	}
	kv_trace_keep_free(&b.keep);
	if (b.home >= 0)
		close(b.home);
	g_free(b.self);
	return rc;
}

/* The lines of DIR/jobs.txt (NULL-terminated), or NULL after saying why. */
static char **sweep_jobs(const char *dir, unsigned *n)
{
	char *path = g_build_filename(dir, "jobs.txt", NULL), *text = NULL;
	char **lines = NULL;
	GError *e = NULL;
	size_t len = 0;
	if (!g_file_get_contents(path, &text, &len, &e)) {
		fprintf(stderr, "femu-gandalf: sweep: %s (write the jobs first: sweep --emit-jobs)\n",
		        e->message);
		g_error_free(e);
	} else if (!len || text[len - 1] != '\n' || strlen(text) != len) {
		fprintf(stderr, "femu-gandalf: sweep: %s: empty, cut short or not text\n", path);
	} else {
		text[len - 1] = '\0';
		lines = g_strsplit(text, "\n", -1);
		*n = g_strv_length(lines);
	}
	g_free(text);
	g_free(path);
	return lines;
}

/* Job i's (from 1) row, without the header; NULL with the reason in *why. */
static char *sweep_result(const char *dir, unsigned i, const char *header, char **why)
{
	char name[32], *text = NULL, *row = NULL;
	GError *e = NULL;
	snprintf(name, sizeof(name), "%04u.csv", i);
	char *path = g_build_filename(dir, "results", name, NULL);
	if (!g_file_get_contents(path, &text, NULL, &e)) {
		*why = g_strdup(e->message);
		g_error_free(e);
	} else if (!g_str_has_prefix(text, header)) {
		*why = g_strdup_printf("%s: line 1 is not the kv CSV header (another femu-gandalf "
		                       "version wrote it?)",
		                       path);
	} else {
		const char *r = text + strlen(header), *nl = strchr(r, '\n');
		if (nl && nl > r && !nl[1])
			row = g_strdup(r);
		else
			*why = g_strdup_printf("%s: not one CSV row after the header", path);
	}
	g_free(text);
	g_free(path);
	return row;
}

/* line (one CSV record and its newline) without field k, into out; field k into *cut. Fields
 * may be quoted, with "" for a quote inside (RFC 4180). */
static void csv_cut(const char *line, int k, GString *out, GString *cut)
{
	bool quoted = false, first = true;
	int f = 0;
	const char *start = line;
	for (const char *p = line;; p++) {
		if (*p == '"') {
			quoted = !quoted; /* a doubled quote flips twice */
			continue;
		}
		if (quoted || (*p && *p != ',' && *p != '\n'))
			continue;
		if (f == k)
			g_string_append_len(cut, start, p - start);
		else {
			if (!first)
				g_string_append_c(out, ',');
			g_string_append_len(out, start, p - start);
			first = false;
		}
		f++;
		start = p + 1;
		if (*p != ',')
			break;
	}
	g_string_append_c(out, '\n');
}

/* The field number of name in a header line, or -1. */
static int csv_column(const char *header, const char *name)
{
	char **cols = g_strsplit_set(header, ",\n", -1);
	int k = -1;
	for (int i = 0; cols[i] && k < 0; i++)
		if (!strcmp(cols[i], name))
			k = i;
	g_strfreev(cols);
	return k;
}

/* The fields of one CSV record (quotes as in csv_cut()), and its first field into first. */
static int csv_fields(const char *line, GString *first)
{
	bool quoted = false;
	int f = 1;
	g_string_truncate(first, 0);
	for (const char *p = line; *p && (quoted || *p != '\n'); p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (!quoted && *p == ',')
			f++;
		else if (f == 1)
			g_string_append_c(first, *p);
	}
	return quoted ? -1 : f;
}

/* Whether row is job's (its jobs.txt line): as many fields as the header, and the policy the
 * line's --job names. NULL, or the reason. */
static char *sweep_row_check(const char *row, const char *header, const char *job)
{
	GString *pol = g_string_new(NULL), *hfirst = g_string_new(NULL);
	int want = csv_fields(header, hfirst), got = csv_fields(row, pol);
	const char *j = strstr(job, " --job ");
	char *why = NULL;
	if (got != want) {
		why = got < 0 ? g_strdup("an unclosed quote in its row")
		              : g_strdup_printf("its row has %d fields, the header %d", got, want);
	} else if (j) {
		j += strlen(" --job ");
		size_t n = strcspn(j, ": ");
		if (pol->len != n || strncmp(pol->str, j, n))
			why = g_strdup_printf("its row is policy '%s', the job runs '%.*s'", pol->str,
			                      (int)n, j);
	}
	g_string_free(pol, TRUE);
	g_string_free(hfirst, TRUE);
	return why;
}

static char *kv_header(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	kv_result_csv_header(m);
	fclose(m);
	return buf;
}

/* --merge (table to output, or stdout) or --missing (the lines to run again). */
static int sweep_collect(const char *dir, const char *output, bool missing)
{
	unsigned n = 0, bad = 0;
	char **jobs = sweep_jobs(dir, &n), *header = kv_header();
	if (!jobs || !header) {
		g_strfreev(jobs);
		free(header);
		return 1;
	}
	int wall = csv_column(header, SWEEP_WALL_COLUMN);
	GString *table = g_string_new(NULL), *walls = g_string_new("job,wall_s\n");
	GString *cut = g_string_new(NULL), *again = g_string_new(NULL);
	csv_cut(header, wall, table, cut);
	for (unsigned i = 1; i <= n; i++) {
		char *why = NULL, *row = sweep_result(dir, i, header, &why);
		if (row && (why = sweep_row_check(row, header, jobs[i - 1]))) {
			char *w = g_strdup_printf("results/%04u.csv: %s (another job's or a damaged "
			                          "file?)", i, why);
			g_free(why);
			why = w;
			g_free(row);
			row = NULL;
		}
		if (row) {
			g_string_truncate(cut, 0);
			csv_cut(row, wall, table, cut);
			g_string_append_printf(walls, "%u,%s\n", i, cut->str);
		} else {
			if (!missing && ++bad <= 10)
				fprintf(stderr, "femu-gandalf: sweep: job %u: %s\n", i, why);
			g_string_append_printf(again, "%s\n", jobs[i - 1]);
		}
		g_free(row);
		g_free(why);
	}
	int rc = 0;
	if (missing) {
		fwrite(again->str, 1, again->len, stdout);
	} else if (bad) {
		fprintf(stderr,
		        "femu-gandalf: sweep --merge: %u of %u jobs have no usable result; nothing "
		        "written. Run them again: femu-gandalf sweep --missing %s | parallel -j 2\n",
		        bad, n, dir);
		rc = 1;
	} else {
		char *wpath = g_build_filename(dir, "wall.csv", NULL);
		if (fg_save_file("sweep", wpath, walls->str, walls->len) ||
		    (output && fg_save_file("sweep --merge --output", output, table->str, table->len)))
			rc = 1;
		else if (!output && (fwrite(table->str, 1, table->len, stdout) != table->len ||
		                     fflush(stdout))) {
			fprintf(stderr, "femu-gandalf: sweep --merge: standard output: %s\n",
			        g_strerror(errno));
			rc = 1;
		}
		if (!rc)
			fprintf(stderr, "femu-gandalf: sweep: merged %u jobs (their wall times: %s)\n",
			        n, wpath);
		g_free(wpath);
	}
	g_strfreev(jobs);
	free(header);
	g_string_free(table, TRUE);
	g_string_free(walls, TRUE);
	g_string_free(cut, TRUE);
	g_string_free(again, TRUE);
	return rc;
}

static int sweep_usage(FILE *f, int rc)
{
	fprintf(f, "Usage:\n"
	           "  femu-gandalf sweep --emit-jobs DIR KV-FLAGS...  write DIR/jobs.txt: one "
	           "command per point of `femu-gandalf kv KV-FLAGS`\n"
	           "  femu-gandalf sweep --merge DIR [--output FILE]  check every job's result and "
	           "print the table\n"
	           "  femu-gandalf sweep --missing DIR                the jobs whose result is "
	           "missing or bad\n"
	           "  femu-gandalf sweep --emit-batch FILE            --emit-jobs for each line "
	           "of FILE, \"DIR KV-FLAGS...\"\n"
	           "                                                  (shell words), the trace "
	           "read once for the sweeps that share it\n"
	           "  femu-gandalf sweep --run-batch FILE|-           run jobs.txt lines in this "
	           "process, one after another,\n"
	           "                                                  the trace and the drive's "
	           "tables kept between them\n\n"
	           "Each job writes DIR/results/NNNN.csv (NNNN: its line in jobs.txt). The table is "
	           "kv's CSV without\nwall_s (each job's is in DIR/wall.csv), the same bytes "
	           "wherever the jobs ran. docs/sweep.md\n");
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	if (argc < 2)
		return sweep_usage(stderr, EXIT_USAGE);
	const char *mode = argv[1], *dir = NULL;
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help"))
		return sweep_usage(stdout, 0);
	if (strcmp(mode, "--emit-jobs") && strcmp(mode, "--merge") && strcmp(mode, "--missing") &&
	    strcmp(mode, "--emit-batch") && strcmp(mode, "--run-batch")) {
		fprintf(stderr, "femu-gandalf: sweep: %s: the first flag must be --emit-jobs, "
		                "--emit-batch, --run-batch, --merge or --missing (try --help)\n",
		        mode);
		return EXIT_USAGE;
	}
	if (argc < 3 || !*argv[2]) {
		fprintf(stderr, "femu-gandalf: sweep %s needs a %s\n", mode,
		        strstr(mode, "-batch") ? "file" : "directory");
		return EXIT_USAGE;
	}
	dir = argv[2];
	if (!strcmp(mode, "--emit-jobs")) {
		/* kv sees "sweep" as its program name, then the flags after DIR (and a "--") */
		int skip = argc > 3 && !strcmp(argv[3], "--") ? 3 : 2;
		argv[skip] = argv[0];
		return sweep_emit(dir, argc - skip, argv + skip, NULL, NULL);
	}
	if (strstr(mode, "-batch")) {
		if (argc != 3) {
			fprintf(stderr, "femu-gandalf: sweep %s FILE: unexpected %s\n", mode, argv[3]);
			return EXIT_USAGE;
		}
		return strcmp(mode, "--run-batch") ? sweep_emit_batch(dir) : sweep_run_batch(dir);
	}
	const char *output = NULL;
	if (argc == 5 && !strcmp(mode, "--merge") && !strcmp(argv[3], "--output"))
		output = argv[4];
	else if (argc != 3) {
		fprintf(stderr, "femu-gandalf: sweep %s DIR%s: unexpected %s\n", mode,
		        strcmp(mode, "--merge") ? "" : " [--output FILE]", argv[3]);
		return EXIT_USAGE;
	}
	return sweep_collect(dir, output, !strcmp(mode, "--missing"));
}
