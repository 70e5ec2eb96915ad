/* pacer — --history on the measuring commands (cli/history_io.h). */
#include "cli/history_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/report_io.h"
#include "cli/signals.h"
#include "history/history.h"
#include "util/err.h"
#include "util/text.h"

int cli_history_prepare(struct measure *s)
{
	if (!s->history) {
		const char *env = getenv("PACER_HISTORY");
		if (env && *env)
			s->history = env;
	}
	if (!s->history || s->history_db)
		return 0;
	char err[512];
	int rc = history_open(&s->history_db, s->history, NULL, err, sizeof err);
	if (rc) {
		char safe[sizeof err];
		fprintf(stderr, "pacer %s: --history %s\n", s->cmd,
			rc == -ENOMEM ? "out of memory" : text_term_safe(safe, sizeof safe, err));
		return EXIT_USAGE;
	}
	return 0;
}

/* The commit checked out in the working directory (the code under test),
 * with "+dirty" when tracked files differ from it; "" outside git. */
static void git_commit(char *out, size_t cap)
{
	out[0] = '\0';
	FILE *p = popen("git rev-parse HEAD 2>/dev/null && "
			"git status --porcelain --untracked-files=no 2>/dev/null | head -c 1",
			"r");
	if (!p)
		return;
	char line[128] = "", more[8] = "";
	if (fgets(line, sizeof line, p)) {
		line[strcspn(line, "\r\n")] = '\0';
		size_t n = fread(more, 1, sizeof more - 1, p);
		snprintf(out, cap, "%s%s", line, n ? "+dirty" : "");
	}
	pclose(p);
}

int cli_history_record(const struct measure *s, bool quiet,
		       int (*write)(FILE *f, const void *arg), const void *arg)
{
	if (!s->history_db)
		return 0;
	cli_test_signal("history");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m) {
		fprintf(stderr, "pacer %s: --history: out of memory\n", s->cmd);
		return EXIT_RUNTIME;
	}
	int rc = write(m, arg);
	if (fclose(m) && !rc)
		rc = -ENOMEM;
	if (rc) {
		fprintf(stderr, "pacer %s: --history: cannot render the result: %s\n", s->cmd,
			err_name(rc));
		free(buf);
		return EXIT_RUNTIME;
	}
	char commit[160];
	git_commit(commit, sizeof commit);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct history_meta meta = {
		.command = s->cmd,
		.git_commit = commit[0] ? commit : NULL,
		.recorded_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
	};
	char err[512];
	int64_t id = 0;
	rc = history_add(s->history_db, &meta, buf, len, &id, err, sizeof err);
	free(buf);
	if (rc) {
		char safe[sizeof err];
		fprintf(stderr, "pacer %s: --history %s\n", s->cmd,
			rc == -ENOMEM ? "out of memory" : text_term_safe(safe, sizeof safe, err));
		/* a database that went bad or stayed locked is the input's fault */
		return rc == -EBUSY || rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED ? EXIT_USAGE
										  : EXIT_RUNTIME;
	}
	if (!quiet)
		fprintf(stderr, "history: %s run %lld\n", s->history, (long long)id);
	return 0;
}

struct pick {
	int64_t *ids;
	size_t n;
};

static int pick_id(void *arg, const struct history_row *row)
{
	struct pick *p = arg;
	p->ids[p->n++] = row->id;
	return 0;
}

/* src split at its last ':' into the database path (in db[cap]) and the
 * run; false when it has no such shape. */
static bool split_src(const char *src, char *db, size_t cap, const char **run)
{
	const char *colon = strrchr(src, ':');
	if (!colon || colon == src || !colon[1] || (size_t)(colon - src) >= cap)
		return false;
	const char *r = colon + 1;
	bool num = strspn(r, "0123456789") == strlen(r);
	if (!num && strcmp(r, "last") && strcmp(r, "prev"))
		return false;
	memcpy(db, src, (size_t)(colon - src));
	db[colon - src] = '\0';
	*run = r;
	return true;
}

int cli_history_resolve(struct history_db *h, const char *db, const char *run, int64_t *id,
			char *err, size_t errlen)
{
	*id = 0;
	if (!strcmp(run, "last") || !strcmp(run, "prev")) {
		struct history_filter f = {.limit = 2};
		int64_t ids[2] = {0, 0};
		struct pick pk = {ids, 0};
		int rc = history_list(h, &f, pick_id, &pk, err, errlen);
		if (rc)
			return rc;
		*id = !strcmp(run, "last") ? ids[0] : ids[1];
		if (!*id) {
			snprintf(err, errlen, "%s: no %s run in this history", db,
				 !strcmp(run, "last") ? "newest" : "previous");
			return -ENOENT;
		}
		return 0;
	}
	errno = 0;
	char *end;
	long long v = strtoll(run, &end, 10);
	if (errno || end == run || *end || v <= 0) {
		snprintf(err, errlen, "%s: run id '%s': expected a positive number, last or prev", db,
			 run);
		return -ENOENT;
	}
	*id = v;
	return 0;
}

bool cli_src_is_history(const char *src)
{
	struct stat st;
	char db[4096];
	const char *run;
	return stat(src, &st) != 0 && split_src(src, db, sizeof db, &run);
}

int cli_result_load_src(struct loaded_result *r, const char *src, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	char db[4096];
	const char *run;
	if (!cli_src_is_history(src) || !split_src(src, db, sizeof db, &run))
		return cli_result_load(r, src, err, errlen);
	struct history_db *h;
	struct history_open_opts o = {.read_only = true};
	int rc = history_open(&h, db, &o, err, errlen);
	if (rc)
		return rc;
	int64_t id = 0;
	rc = cli_history_resolve(h, db, run, &id, err, errlen);
	char *json = NULL;
	size_t len = 0;
	if (!rc)
		rc = history_get(h, id, &json, &len, err, errlen);
	history_close(h);
	if (rc)
		return rc;
	rc = result_read_mem(r, json, len, src, err, errlen);
	free(json);
	return rc;
}
