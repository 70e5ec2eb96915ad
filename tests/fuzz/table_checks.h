/* Checks shared by the table fuzz harnesses (fuzz_targets, fuzz_jsonl,
 * fuzz_har): the contract every successfully parsed table must meet, and the
 * JSON Lines round trip. Define FUZZ_NAME before including. */
#ifndef PACER_FUZZ_TABLE_CHECKS_H
#define PACER_FUZZ_TABLE_CHECKS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/mman.h>
#include <unistd.h>

#include "http/req.h"
#include "http/url.h"
#include "table/table.h"
#include "util/err.h"

#include "common/fuzz_check.h"

static const struct table_limits lim = {
	.max_requests = 512, .max_body_bytes = 4096, .max_line_bytes = 2048,
	.max_file_bytes = 1 << 20, .max_headers = 16, .max_total_bytes = 1 << 22,
	.no_body_files = true,
};

static struct url u;

static void check_table(const struct table *t, const struct table_limits *l)
{
	CHECK(t->n >= 1 && t->n <= l->max_requests);
	CHECK(t->n_hosts >= 1 && t->n_hosts <= t->n);
	size_t sum = 0;
	for (size_t h = 0; h < t->n_hosts; h++)
		sum += t->hosts[h].n_reqs;
	CHECK(sum == t->n);
	for (size_t i = 0; i < t->n; i++) {
		const struct table_req *q = &t->reqs[i];
		CHECK(req_method_check(q->method) == 0);
		const char *why = NULL, *upath = NULL, *http = NULL;
		size_t upath_len = 0;
		CHECK(table_url_unix(q->url, &upath, &upath_len, &http, &why) == 0);
		CHECK(url_parse(&u, http, &why) == 0);
		CHECK(strcmp(u.target, q->target) == 0);
		CHECK(q->host < t->n_hosts);
		const struct table_host *h = &t->hosts[q->host];
		CHECK(h->port == u.port && h->tls == u.tls && strcasecmp(h->name, u.host) == 0);
		/* a unix: URL's socket path is its host's, byte for byte; TCP hosts have none */
		CHECK((upath == NULL) == (h->unix_path == NULL));
		if (upath) {
			CHECK(upath[0] == '/' && upath_len <= TABLE_UNIX_PATH_MAX);
			CHECK(strlen(h->unix_path) == upath_len && memcmp(h->unix_path, upath, upath_len) == 0);
		}
		CHECK(q->n_headers <= l->max_headers);
		for (size_t k = 0; k < q->n_headers; k++) {
			CHECK(req_header_check(q->headers[k], &why) == 0);
			CHECK(strstr(q->headers[k], ": ") != NULL);
		}
		CHECK(q->body_len <= l->max_body_bytes);
		CHECK((q->body_len == 0) == (q->body == NULL));
		/* every request is named, printably; a given name within the limit */
		CHECK(q->name != NULL && q->name[0] != '\0');
		CHECK(!q->name_given || strlen(q->name) <= TABLE_NAME_MAX);
		for (const char *p = q->name; *p; p++)
			CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	}
}

static char *jsonl_of(const struct table *t, size_t *len, int *rc)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	CHECK(f != NULL);
	char err[256];
	*rc = table_write_jsonl(f, t, err, sizeof err);
	CHECK(*rc == 0 || *rc == PACER_EUNSUPPORTED);
	fclose(f);
	return buf;
}

static void check_round_trip(const struct table *t)
{
	struct table_wire w;
	char err[512], hex[65], hex2[65];
	CHECK(table_encode(t, "fuzz", NULL, 0, &w, err, sizeof err) == 0);
	CHECK(w.n == t->n);
	for (size_t i = 0; i < w.n; i++) {
		const char *b = w.bytes + w.off[i];
		size_t len = w.off[i + 1] - w.off[i];
		const struct table_req *q = &t->reqs[i];
		size_t ml = strlen(q->method);
		CHECK(len > ml + 1 && memcmp(b, q->method, ml) == 0 && b[ml] == ' ');
		CHECK(len >= q->body_len + 4);
		CHECK(memcmp(b + len - q->body_len - 4, "\r\n\r\n", 4) == 0);
		if (q->body_len)
			CHECK(memcmp(b + len - q->body_len, q->body, q->body_len) == 0);
	}
	CHECK(table_wire_hash(&w, hex) == 0);
	CHECK(strlen(hex) == 64);
	table_wire_free(&w);

	size_t len = 0;
	int rc;
	char *jl = jsonl_of(t, &len, &rc);
	if (rc == 0) {
		struct table_limits big = lim;
		big.max_line_bytes = 1 << 20;
		struct table *b = NULL;
		rc = table_parse(jl, len, TABLE_FMT_AUTO, "rt.jsonl", NULL, &big, &b, err, sizeof err);
		if (rc)
			fprintf(stderr, "round trip: %s\n", err);
		CHECK(rc == 0);
		CHECK(b->n == t->n && b->format == TABLE_FMT_JSONL);
		/* the socket paths are not in the wire bytes: they travel in the URLs */
		CHECK(b->n_hosts == t->n_hosts);
		for (size_t h = 0; h < t->n_hosts; h++) {
			const char *p1 = t->hosts[h].unix_path, *p2 = b->hosts[h].unix_path;
			CHECK((p1 == NULL) == (p2 == NULL) && (!p1 || strcmp(p1, p2) == 0));
		}
		CHECK(table_hash(b, "fuzz", NULL, 0, hex2, err, sizeof err) == 0);
		CHECK(strcmp(hex, hex2) == 0);
		/* names travel: given ones as "name", derived ones derive again */
		for (size_t i = 0; i < t->n; i++)
			CHECK(strcmp(t->reqs[i].name, b->reqs[i].name) == 0 &&
			      t->reqs[i].name_given == b->reqs[i].name_given);
		size_t len2 = 0;
		char *jl2 = jsonl_of(b, &len2, &rc);
		CHECK(rc == 0 && len2 == len && memcmp(jl, jl2, len) == 0);
		free(jl2);
		table_free(b);
	}
	free(jl);
}


/* The same bytes read as a stream (table_stream, in pieces of `piece`
 * bytes from a memory file) against the whole parse (rc, t, err): when the
 * whole parse succeeded, the pieces hold its requests (same wire bytes and
 * hash, lines, hosts), unless one request's text is longer than a stream
 * takes (only long inputs); when it failed for anything but a limit of the
 * whole table (PACER_ETOOBIG), the stream fails with the same code and
 * message. */
static void check_stream(const uint8_t *data, size_t size, enum table_format fmt,
                         const char *source, int rc, const struct table *t, const char *err,
                         size_t piece)
{
	/* the limits of a whole table (requests, the file, everything in all)
	 * are not a stream's: it counts them per piece or not at all */
	if (rc == -ENOMEM ||
	    (rc == PACER_ETOOBIG && (strstr(err, "(the limit)") || strstr(err, " in all") ||
	                             (strstr(err, ": over the limit of ") && !strstr(err, "body")))))
		return;
	int fd = memfd_create("fuzz-stream", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	struct table_stream *st = NULL;
	char serr[512] = "unset";
	CHECK(table_stream_open_fd(fd, source, NULL, fmt, &lim, piece, &st, serr, sizeof serr) == 0);
	struct table_hasher *h = NULL;
	CHECK(table_hasher_new(&h) == 0);
	struct table *p = NULL;
	size_t n = 0;
	int src = 0;
	while (!(src = table_stream_next(st, &p, serr, sizeof serr)) && p) {
		CHECK(p->n >= 1 && p->n_hosts >= 1);
		struct table_wire w;
		CHECK(table_encode(p, "fuzz", NULL, 0, &w, serr, sizeof serr) == 0);
		for (size_t i = 0; i < p->n; i++, n++) {
			table_hasher_add(h, w.bytes + w.off[i], w.off[i + 1] - w.off[i]);
			if (t && rc == 0) {
				CHECK(n < t->n);
				const struct table_req *a = &p->reqs[i], *b = &t->reqs[n];
				CHECK(a->line == b->line && a->host == b->host);
				CHECK(strcmp(a->url, b->url) == 0 && strcmp(a->name, b->name) == 0);
				CHECK(a->name_given == b->name_given);
				CHECK((a->shape == NULL) == (b->shape == NULL) &&
				      (!a->shape || strcmp(a->shape, b->shape) == 0));
			}
		}
		table_wire_free(&w);
		if (t && rc == 0)
			CHECK(p->format == t->format);
		if (t && rc == 0 && n == t->n) {
			/* the last piece: every host, with the whole table's counts */
			CHECK(p->n_hosts == t->n_hosts);
			for (size_t k = 0; k < t->n_hosts; k++) {
				const struct table_host *a = &p->hosts[k], *b = &t->hosts[k];
				CHECK(a->n_reqs == b->n_reqs && strcmp(a->name, b->name) == 0);
				CHECK(a->port == b->port && a->tls == b->tls && a->ipv6 == b->ipv6);
				CHECK((a->unix_path == NULL) == (b->unix_path == NULL) &&
				      (!a->unix_path || strcmp(a->unix_path, b->unix_path) == 0));
			}
		}
		table_free(p);
	}
	if (rc == 0) {
		if (src)
			fprintf(stderr, "stream: %s\n", serr);
		/* a request longer than a stream takes: only long inputs */
		CHECK(src == 0 || (src == PACER_ETOOBIG && size > 40000));
		if (src == 0) {
			char hex[65], hex2[65];
			CHECK(n == t->n && table_stream_count(st) == n);
			CHECK(table_hasher_end(h, hex) == 0);
			CHECK(table_hash(t, "fuzz", NULL, 0, hex2, serr, sizeof serr) == 0);
			CHECK(strcmp(hex, hex2) == 0);
		}
	} else {
		if (src != rc || strcmp(serr, err) != 0)
			fprintf(stderr, "whole: %d %s\nstream: %d %s\n", rc, err, src, serr);
		CHECK(src == rc && strcmp(serr, err) == 0);
	}
	table_hasher_free(h);
	table_stream_close(st);
	close(fd);
}

#endif
