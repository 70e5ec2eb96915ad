/* pacer — request tables read a piece at a time (table.h: table_stream).
 * The text is read into a buffer, cut after its last whole request
 * (JSONL: the last newline; targets: tb_targets_cut) and that part parsed
 * by the same parser table_load uses, with the lines before it counted
 * (tb.line0) and the hosts of the pieces before it registered first
 * (tb_seed_hosts), so that messages, lines and host numbers are those of
 * the whole file. The buffer grows only when one request does not fit. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table/table_int.h"
#include "util/err.h"

#define PIECE_DEFAULT (1u << 20)
#define PIECE_MAX (64u << 20) /* the buffer grows to this, or to one_max + 1 */

struct table_stream {
	int fd;
	bool own_fd;
	bool eof, failed, known;       /* known: fmt is resolved */
	enum table_format fmt;
	struct table_limits lim;
	char *source, *base_dir;
	char *buf;
	size_t len, cap, piece;
	size_t one_max;                /* the longest text one request may have by the limits
	                                * (of its format, once known: set_format) */
	size_t one_jsonl, one_targets;
	size_t cap_max;                /* the buffer grows to this at most */
	unsigned line0;                /* lines before buf[0] */
	size_t count;                  /* requests given */
	struct table *last;            /* hosts of the pieces so far (a copy, no requests) */
	bool reg;                      /* a regular file: its size and mtime when opened */
	struct stat at_open;
	uint64_t read_total; /* bytes read, from offset0 */
	off_t offset0;
};

static int fail(struct table_stream *st, int rc)
{
	st->failed = true;
	return rc;
}

int table_stream_open_fd(int fd, const char *source, const char *base_dir,
                         enum table_format fmt, const struct table_limits *lim,
                         size_t piece_bytes, struct table_stream **out, char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	if (!source)
		source = "(table)";
	if (fmt != TABLE_FMT_AUTO && fmt != TABLE_FMT_TARGETS && fmt != TABLE_FMT_JSONL)
		return tb_err(err, cap, PACER_EUNSUPPORTED, "%s: a stream reads targets or jsonl",
		              source);
	struct table_stream *st = calloc(1, sizeof *st);
	if (!st)
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", source);
	st->fd = fd;
	/* a regular file is checked at its end against what it was here: a
	 * table cut short, grown or rewritten while read gives requests (and
	 * a hash) no read of the file gives */
	st->reg = fstat(fd, &st->at_open) == 0 && S_ISREG(st->at_open.st_mode) &&
		  (st->offset0 = lseek(fd, 0, SEEK_CUR)) >= 0;
	st->fmt = fmt;
	st->known = fmt != TABLE_FMT_AUTO;
	tb_limits(&st->lim, lim);
	/* the table as a whole has no request limit: a piece is bounded by its
	 * text (and by max_total_bytes, which counts per piece) */
	st->lim.max_requests = SIZE_MAX;
	st->piece = piece_bytes ? piece_bytes : PIECE_DEFAULT;
	if (st->piece > PIECE_MAX)
		st->piece = PIECE_MAX;
	st->cap = st->piece;
	size_t jl = st->lim.max_line_bytes + st->lim.max_body_bytes / 3 * 4 + 6;
	size_t tl = (st->lim.max_headers + 4) * (st->lim.max_line_bytes + 2);
	st->one_jsonl = jl;
	st->one_targets = tl;
	st->one_max = fmt == TABLE_FMT_JSONL ? jl : fmt == TABLE_FMT_TARGETS ? tl : jl > tl ? jl : tl;
	st->cap_max = st->one_max + 1 > PIECE_MAX ? st->one_max + 1 : PIECE_MAX;
	st->source = strdup(source);
	st->base_dir = strdup(base_dir ? base_dir : ".");
	st->buf = malloc(st->cap);
	if (!st->source || !st->base_dir || !st->buf) {
		table_stream_close(st);
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", source);
	}
	*out = st;
	return 0;
}

int table_stream_open(const char *path, enum table_format fmt, const struct table_limits *lim,
                      size_t piece_bytes, struct table_stream **out, char *err, size_t cap)
{
	*out = NULL;
	if (strcmp(path, "-") == 0)
		return table_stream_open_fd(0, "stdin", ".", fmt, lim, piece_bytes, out, err, cap);
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return tb_err(err, cap, -EISDIR, "%s: cannot read: it is a folder", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return tb_err(err, cap, -e, "%s: cannot read: %s", path, strerror(e));
	}
	char *dir = tb_dirname(path);
	int rc = dir ? table_stream_open_fd(fd, path, dir, fmt, lim, piece_bytes, out, err, cap)
	             : tb_err(err, cap, -ENOMEM, "%s: out of memory", path);
	free(dir);
	if (rc) {
		close(fd);
		return rc;
	}
	(*out)->own_fd = true;
	return 0;
}

/* At the end of a regular file: it is as it was when opened (size,
 * modification time) and all of it was read; else an error. */
static int unchanged(struct table_stream *st, char *err, size_t cap)
{
	struct stat now;
	if (!st->reg)
		return 0;
	if (fstat(st->fd, &now) != 0) {
		int e = errno;
		return tb_err(err, cap, -e, "%s: cannot read: %s", st->source, strerror(e));
	}
	if (now.st_size == st->at_open.st_size &&
	    now.st_mtim.tv_sec == st->at_open.st_mtim.tv_sec &&
	    now.st_mtim.tv_nsec == st->at_open.st_mtim.tv_nsec &&
	    st->read_total == (uint64_t)(st->at_open.st_size - st->offset0))
		return 0;
	return tb_err(err, cap, -ESTALE,
		      "%s: the file changed while it was read (%lld bytes when opened, %llu read, "
		      "%lld now): its requests would not be the file's; read it again once it "
		      "is written",
		      st->source, (long long)st->at_open.st_size,
		      (unsigned long long)st->read_total, (long long)now.st_size);
}

/* Read until the buffer is full or the input ends. */
static int fill(struct table_stream *st, char *err, size_t cap)
{
	while (!st->eof && st->len < st->cap) {
		ssize_t r = read(st->fd, st->buf + st->len, st->cap - st->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			return tb_err(err, cap, -e, "%s: cannot read: %s", st->source, strerror(e));
		}
		if (r == 0) {
			st->eof = true;
			int rc = unchanged(st, err, cap);
			if (rc)
				return rc;
		}
		st->len += (size_t)r;
		st->read_total += (uint64_t)r;
	}
	return 0;
}

static int grow(struct table_stream *st, char *err, size_t cap)
{
	if (st->cap >= st->cap_max)
		return tb_err(err, cap, PACER_ETOOBIG, "%s:%u: a request longer than %zu bytes",
		              st->source, st->line0 + 1, st->one_max);
	size_t nc = st->cap * 2 > st->cap_max ? st->cap_max : st->cap * 2;
	char *nb = realloc(st->buf, nc);
	if (!nb)
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", st->source);
	st->buf = nb;
	st->cap = nc;
	return 0;
}

/* Parse buf[0..cut) into *piece (NULL when it holds no request). */
static int parse(struct table_stream *st, size_t cut, struct table **piece, char *err,
                 size_t cap)
{
	*piece = NULL;
	struct tb b;
	int rc = tb_init(&b, &st->lim, st->fmt, st->source);
	if (!rc)
		rc = tb_seed_hosts(&b, st->last);
	if (rc) {
		if (b.t)
			tb_abort(&b);
		return tb_err(err, cap, rc, "%s: out of memory", st->source);
	}
	b.line0 = st->line0;
	rc = st->fmt == TABLE_FMT_JSONL ? tb_parse_jsonl(&b, st->buf, cut, st->base_dir, err, cap)
	                                : tb_parse_targets(&b, st->buf, cut, st->base_dir, err, cap);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	if (b.t->n == 0) {
		tb_abort(&b);
		return 0;
	}
	*piece = tb_finish(&b);
	return *piece ? 0 : tb_err(err, cap, -ENOMEM, "%s: out of memory", st->source);
}

/* Keep the hosts of t (strings copied) as the stream's, for the next piece. */
static int keep_hosts(struct table_stream *st, const struct table *t)
{
	struct tb b;
	int rc = tb_init(&b, &st->lim, st->fmt, st->source);
	if (rc)
		return rc;
	if ((rc = tb_seed_hosts(&b, t))) {
		tb_abort(&b);
		return rc;
	}
	struct table *h = b.t; /* no requests: taken apart from tb_finish, which wants one */
	b.t = NULL;
	tb_abort(&b);
	table_free(st->last);
	st->last = h;
	return 0;
}

int table_stream_next(struct table_stream *st, struct table **piece, char *err, size_t cap)
{
	*piece = NULL;
	if (err && cap)
		err[0] = '\0';
	if (st->failed)
		return tb_err(err, cap, PACER_EPARSE, "%s: the stream stopped at an error", st->source);
	for (;;) {
		int rc = fill(st, err, cap);
		if (rc)
			return fail(st, rc);
		if (!st->known) {
			bool known;
			enum table_format f = tb_detect(st->buf, st->len, &known);
			if (!known && !st->eof && st->len == st->cap) {
				/* only comments and blank lines so far: read on (they
				 * are parsed with the rest once the format is known, so
				 * that their errors are the whole file's) */
				if (st->cap >= st->cap_max)
					return fail(st, tb_err(err, cap, PACER_ETOOBIG,
					                       "%s: no request in its first %zu bytes (only "
					                       "comments and blank lines)",
					                       st->source, st->cap));
				if ((rc = grow(st, err, cap)))
					return fail(st, rc);
				continue;
			}
			if (known || st->eof) {
				st->fmt = f;
				st->known = true;
				st->one_max = f == TABLE_FMT_JSONL ? st->one_jsonl : st->one_targets;
			}
		}
		if (st->len == 0 && st->eof) {
			if (st->count == 0)
				return fail(st, tb_err(err, cap, PACER_EPARSE, "%s: no requests", st->source));
			return 0;
		}
		size_t cut = st->len;
		bool whole = true;
		if (!st->eof) {
			if (st->fmt == TABLE_FMT_JSONL) {
				const char *nl = memrchr(st->buf, '\n', st->len);
				cut = nl ? (size_t)(nl - st->buf) + 1 : 0;
			} else {
				cut = tb_targets_cut(st->buf, st->len, st->lim.max_line_bytes);
			}
			if (cut == 0 && st->len > st->one_max) {
				/* longer than any request may be: the parser names the
				 * line or the headers over the limit */
				cut = st->len;
				whole = false;
			} else if (cut == 0) {
				if ((rc = grow(st, err, cap)))
					return fail(st, rc);
				continue;
			}
		}
		struct table *t = NULL;
		rc = parse(st, cut, &t, err, cap);
		if (!rc && !whole)
			rc = tb_err(err, cap, PACER_ETOOBIG, "%s:%u: a request longer than %zu bytes",
			            st->source, st->line0 + 1, st->one_max);
		if (!rc && t && (rc = keep_hosts(st, t)))
			tb_err(err, cap, rc, "%s: out of memory", st->source);
		if (rc) {
			table_free(t);
			return fail(st, rc);
		}
		for (size_t i = 0; i < cut; i++)
			st->line0 += st->buf[i] == '\n';
		memmove(st->buf, st->buf + cut, st->len - cut);
		st->len -= cut;
		if (st->cap > st->piece && st->len <= st->piece) {
			/* grown for one long request: back to pieces of the usual size */
			char *nb = realloc(st->buf, st->piece);
			if (nb) {
				st->buf = nb;
				st->cap = st->piece;
			}
		}
		if (t) {
			st->count += t->n;
			*piece = t;
			return 0;
		}
	}
}

enum table_format table_stream_format(const struct table_stream *st) { return st->fmt; }

size_t table_stream_count(const struct table_stream *st) { return st->count; }

struct table *table_stream_take_hosts(struct table_stream *st)
{
	struct table *t = st->last;
	st->last = NULL;
	return t;
}

void table_stream_close(struct table_stream *st)
{
	if (!st)
		return;
	if (st->own_fd)
		close(st->fd);
	table_free(st->last);
	free(st->buf);
	free(st->source);
	free(st->base_dir);
	free(st);
}
