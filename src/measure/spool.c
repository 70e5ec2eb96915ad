/* pacer — --lazy (measure/measure_int.h): a request table of any size, read a
 * piece at a time (table_stream) and encoded into a spool, an unlinked
 * file mapped into memory, so the kernel keeps in RAM only the pages the
 * load touches and writes the rest back to disk. Two files: the wire bytes
 * of every request back to back, and the engine's request array (offsets
 * into the first while it is written, pointers once it is mapped). The
 * identity hash, the names and the workload summary are taken request by
 * request as they pass, so nothing grows with the table but the spool.
 * The engine reads the mapped array as it reads a table loaded whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "measure/measure_int.h"
#include "http/req.h"
#include "result/names.h"
#include "table/table.h"

#define WBUF (1u << 20)

/* One spool file being written through a buffer. */
struct spool_file {
	int fd;
	char *buf;
	size_t len;
	uint64_t size;     /* bytes written to it (flushed or not) */
	int err;           /* first write error (-errno), 0 */
};

struct measure_spool {
	void *wire, *reqs;           /* the mappings */
	size_t wire_len, reqs_len;
	char *first_url;             /* plan->url_str */
};

/* The folder the spool goes into: $TMPDIR, else /var/tmp (on disk where
 * /tmp is a RAM file system), else /tmp. */
static int spool_open(struct spool_file *f, char *path_out, size_t cap)
{
	const char *dirs[3] = {getenv("TMPDIR"), "/var/tmp", "/tmp"};
	int err = ENOENT;
	memset(f, 0, sizeof *f);
	f->fd = -1;
	for (int i = 0; i < 3 && f->fd < 0; i++) {
		const char *d = dirs[i];
		if (!d || !*d)
			continue;
		snprintf(path_out, cap, "%s", d);
		f->fd = open(d, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
		if (f->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
			/* a file system without O_TMPFILE: a named file, unlinked at once */
			char tmpl[4096];
			snprintf(tmpl, sizeof tmpl, "%s/pacer-spool-XXXXXX", d);
			f->fd = mkostemp(tmpl, O_CLOEXEC);
			if (f->fd >= 0)
				unlink(tmpl);
		}
		if (f->fd < 0)
			err = errno;
	}
	if (f->fd < 0)
		return -err;
	f->buf = malloc(WBUF);
	if (!f->buf) {
		close(f->fd);
		f->fd = -1;
		return -ENOMEM;
	}
	return 0;
}

static void spool_flush(struct spool_file *f)
{
	size_t off = 0;
	while (!f->err && off < f->len) {
		ssize_t w = write(f->fd, f->buf + off, f->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			f->err = -errno;
		else
			off += (size_t)w;
	}
	f->len = 0;
}

static void spool_put(struct spool_file *f, const void *p, size_t n)
{
	const char *c = p;
	while (n && !f->err) {
		size_t k = WBUF - f->len < n ? WBUF - f->len : n;
		memcpy(f->buf + f->len, c, k);
		f->len += k;
		f->size += k;
		c += k;
		n -= k;
		if (f->len == WBUF)
			spool_flush(f);
	}
}

static void spool_close(struct spool_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	f->fd = -1;
	f->buf = NULL;
}

/* Standard input can be streamed once per process (compare's variants
 * would each need it). */
static bool stdin_streamed;

/* What each encoded request of a piece goes through. */
struct spool_ctx {
	struct measure *s;
	const struct table *piece;
	struct spool_file *wf, *rf;
	struct req_namer *nm;
	struct table_hasher *hs;
};

/* table_encode_each's callback: request i of the piece into the spool,
 * the hash, the names and the workload. 0, -ENOMEM, -EOVERFLOW (a spool this
 * build cannot map) or a write error (-errno). */
static int spool_one(void *arg, size_t i, const char *req, size_t len)
{
	struct spool_ctx *c = arg;
	const struct table_req *q = &c->piece->reqs[i];
	if (c->wf->size > (uint64_t)UINTPTR_MAX - len)
		return -EOVERFLOW; /* its offsets would not fit a pointer */
	struct engine_req r;
	memset(&r, 0, sizeof r); /* the padding too: the record is written out */
	r.buf = (const char *)(uintptr_t)c->wf->size; /* an offset until mapped */
	r.len = len;
	r.head = strcmp(q->method, "HEAD") == 0;
	r.host = (uint32_t)q->host;
	int rc = req_namer_add(c->nm, q->name, &r.name);
	if (rc)
		return rc;
	table_hasher_add(c->hs, req, len);
	spool_put(c->wf, req, len);
	spool_put(c->rf, &r, sizeof r);
	plan_workload_add(&c->s->workload, q->method, q->target, strlen(q->target), q->body_len,
			  q->name);
	return c->wf->err ? c->wf->err : c->rf->err;
}

/* One line for what stopped the spool and the exit code: err (a message
 * of the table's: bad input), else rc from spool_one or a write. */
static int spool_fail(struct measure *s, int rc, const char *source, const char *err,
		      const char *spool_dir)
{
	if (err)
		return measure_fail(s, rc == -ENOMEM ? MEASURE_ERUNTIME : MEASURE_EUSAGE, "%s", err);
	if (rc == -ENOMEM)
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	if (rc == -EOVERFLOW)
		return measure_fail(s, MEASURE_ERUNTIME,
				    "%s: the --lazy spool is larger than this build can map", source);
	return measure_fail(s, MEASURE_ERUNTIME,
			    "%s: --lazy spool in %s: %s (set TMPDIR to a folder with room)", source,
			    spool_dir, strerror(-rc));
}

/* The work of measure_spool_table on open files; 0 or an exit code after
 * one line. */
static int spool_table(struct measure *s, struct run_plan *plan, struct table_stream *st,
		       struct spool_file *wf, struct spool_file *rf, struct req_namer *nm,
		       struct table_hasher *hs, const char *spool_dir)
{
	char err[1024];
	struct table *piece = NULL;
	size_t n = 0;
	plan_workload_init(&s->workload, "table");
	for (;;) {
		err[0] = '\0';
		int rc = table_stream_next(st, &piece, err, sizeof err);
		if (rc)
			return spool_fail(s, rc, "", err[0] ? err : NULL, spool_dir);
		if (!piece)
			break;
		if (piece->n_hosts > ENGINE_MAX_HOSTS) {
			size_t i = 0;
			while (i + 1 < piece->n && piece->reqs[i].host < ENGINE_MAX_HOSTS)
				i++;
			rc = measure_fail(s, MEASURE_EUSAGE, "%s:%u: a host beyond the first %d; at most "
					  "%d per run", piece->source, piece->reqs[i].line,
					  ENGINE_MAX_HOSTS, ENGINE_MAX_HOSTS);
			table_free(piece);
			return rc;
		}
		struct spool_ctx c = {s, piece, wf, rf, nm, hs};
		err[0] = '\0';
		rc = table_encode_each(piece, PACER_USER_AGENT, plan->headers, plan->n_headers,
				       spool_one, &c, err, sizeof err);
		n += piece->n;
		if (!rc && !s->spool->first_url && !(s->spool->first_url = strdup(piece->reqs[0].url)))
			rc = -ENOMEM;
		if (!rc && n > UINT32_MAX) {
			rc = measure_fail(s, MEASURE_EUSAGE, "%s: more than %u requests (the engine's limit)",
					  piece->source, UINT32_MAX);
			table_free(piece);
			return rc;
		}
		if (rc) {
			/* table_encode's own errors (a bad -H) come with a message */
			bool table_said = err[0] && rc != -ENOMEM && rc != -EOVERFLOW && !wf->err && !rf->err;
			rc = spool_fail(s, rc, piece->source, table_said ? err : NULL, spool_dir);
			table_free(piece);
			return rc;
		}
		table_free(piece);
	}
	/* the run's table: the hosts of the whole table, its source and format */
	s->table = table_stream_take_hosts(st);
	spool_flush(wf);
	spool_flush(rf);
	if (wf->err || rf->err)
		return spool_fail(s, wf->err ? wf->err : rf->err, s->table->source, NULL, spool_dir);
	if (wf->size > SIZE_MAX || rf->size > SIZE_MAX)
		return spool_fail(s, -EOVERFLOW, s->table->source, NULL, spool_dir);
	struct measure_spool *sp = s->spool;
	sp->wire_len = (size_t)wf->size;
	sp->reqs_len = (size_t)rf->size;
	sp->wire = mmap(NULL, sp->wire_len, PROT_READ, MAP_SHARED, wf->fd, 0);
	sp->reqs = mmap(NULL, sp->reqs_len, PROT_READ | PROT_WRITE, MAP_SHARED, rf->fd, 0);
	if (sp->wire == MAP_FAILED || sp->reqs == MAP_FAILED) {
		return measure_fail(s, MEASURE_ERUNTIME, "%s: cannot map the --lazy spool: %s",
			s->table->source, strerror(errno));
	}
	struct engine_req *reqs = sp->reqs;
	for (size_t i = 0; i < n; i++)
		reqs[i].buf = (const char *)sp->wire + (uintptr_t)reqs[i].buf;
	s->reqs = reqs;
	s->n_reqs = n;
	return 0;
}

int measure_spool_table(struct measure *s, struct run_plan *plan,
		      const struct table_limits *lim, enum table_format fmt)
{
	char err[1024];
	bool from_stdin = strcmp(s->requests_file, "-") == 0;
	if (plan->http.h2c || plan->http.http2) {
		return measure_fail(s, MEASURE_EUSAGE, "--lazy does not combine with HTTP/2 yet (HTTP/2 converts every request of the table before the load)");
	}
	if (from_stdin && stdin_streamed) {
		return measure_fail(s, MEASURE_EUSAGE, "--lazy --requests-file -: standard input is read once; give the table as a file here");
	}
	struct table_stream *st = NULL;
	int rc = table_stream_open(s->requests_file, fmt, lim, 0, &st, err, sizeof err);
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "%s", err);
	}
	stdin_streamed |= from_stdin;
	struct spool_file wf, rf;
	char dir[4096] = "";
	struct req_namer *nm = NULL;
	struct table_hasher *hs = NULL;
	int orc = spool_open(&wf, dir, sizeof dir);
	if (!orc && (orc = spool_open(&rf, dir, sizeof dir)))
		spool_close(&wf);
	if (orc) {
		table_stream_close(st);
		return measure_fail(s, MEASURE_ERUNTIME, "--lazy: cannot make a spool file in %s: %s", dir,
			strerror(-orc));
	}
	struct statfs fs;
	if (fstatfs(wf.fd, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
		measure_note(s, "note: the --lazy spool is in %s, a file system in RAM: the table takes "
				"memory there; set TMPDIR to a folder on disk", dir);
	s->spool = calloc(1, sizeof *s->spool);
	/* spool_table says what stopped it; the rest is out of memory */
	bool oom = !s->spool || req_namer_new(&nm) || table_hasher_new(&hs);
	rc = oom ? MEASURE_ERUNTIME : spool_table(s, plan, st, &wf, &rf, nm, hs, dir);
	if (!rc && (req_namer_finish(nm, &s->names) ||
		    table_hasher_end_workload(hs, s->table_sha256, s->workload.workload_sha256)))
		oom = true, rc = MEASURE_ERUNTIME;
	if (oom)
		measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	req_namer_free(nm);
	table_hasher_free(hs);
	spool_close(&wf); /* the mappings stay */
	spool_close(&rf);
	table_stream_close(st);
	if (rc)
		return rc;
	memcpy(s->workload.sha256, s->table_sha256, sizeof s->workload.sha256);
	plan->names = &s->names;
	plan->url_str = s->spool->first_url;
	plan->table_requests = s->n_reqs;
	plan->table_lazy = true;
	return 0;
}

void measure_spool_release(struct measure *s)
{
	struct measure_spool *sp = s->spool;
	if (!sp)
		return;
	if (sp->wire && sp->wire != MAP_FAILED)
		munmap(sp->wire, sp->wire_len);
	if (sp->reqs && sp->reqs != MAP_FAILED) {
		if (s->reqs == sp->reqs)
			s->reqs = NULL;
		munmap(sp->reqs, sp->reqs_len);
	}
	free(sp->first_url);
	free(sp);
	s->spool = NULL;
}
