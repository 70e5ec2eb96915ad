/* Tests of unix: URLs in request tables ("unix:/PATH.sock:http://host/path",
 * table_url_unix and its use by every loader): the split itself, table by
 * table; which requests share a host (socket path + scheme + host + port);
 * the socket path kept in table_host.unix_path through the targets, JSON
 * Lines and bodies loaders and through a JSON Lines round trip; the wire
 * bytes and hash (the socket path is not in them); `table show` labels; and
 * malformed forms, each with its exact "FILE:LINE: message" and code. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "table/table.h"
#include "util/err.h"
#include "tmpfiles.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof dir, "test-unix") < 0)
		return -1;
	char sub[300];
	snprintf(sub, sizeof sub, "%s/bodies", dir);
	mkdir(sub, 0700);
	write_file("bodies/1.json", "{\"a\":1}", 7);
	write_file("bodies/2.json", "{\"a\":2}", 7);
	return 0;
}

static struct table *parse_ok(const char *text, enum table_format fmt, const char *source)
{
	struct table *t = NULL;
	char err[512] = "";
	int rc = table_parse(text, strlen(text), fmt, source, dir, NULL, &t, err, sizeof err);
	if (rc)
		fail_msg("%s: rc %d (%s): %s", source, rc, err_name(rc), err);
	assert_non_null(t);
	return t;
}

/* ---- the split ------------------------------------------------------ */

static const struct split_case {
	const char *url;
	int code;
	const char *path;  /* NULL: not a unix: URL (or an error) */
	const char *http;  /* what follows the path (or the URL itself) */
	const char *why;   /* a part of the phrase on error */
} splits[] = {
	{"unix:/run/app.sock:http://app.local/x", 0, "/run/app.sock", "http://app.local/x", NULL},
	{"UNIX:/run/app.sock:HTTPS://app.local:8443/", 0, "/run/app.sock", "HTTPS://app.local:8443/",
	 NULL},
	/* the path ends at the first ":http://": a ':' elsewhere in it is kept */
	{"unix:/run/a:b.sock:http://h/", 0, "/run/a:b.sock", "http://h/", NULL},
	{"unix:/s:http://h/next:http://x", 0, "/s", "http://h/next:http://x", NULL},
	{"unix:///run/x.sock:http://h/", 0, "///run/x.sock", "http://h/", NULL},
	{"http://h/unix:/x:http://y/", 0, NULL, "http://h/unix:/x:http://y/", NULL},
	{"https://h/", 0, NULL, "https://h/", NULL},
	{"unix:/run/x.sock", PACER_EURL, NULL, NULL, "no ':http://' or ':https://'"},
	{"unix:/run/x.sock:ftp://h/", PACER_EURL, NULL, NULL, "no ':http://' or ':https://'"},
	{"unix:/run/x.sock/http://h/", PACER_EURL, NULL, NULL, "no ':http://' or ':https://'"},
	{"unix::http://h/", PACER_EURL, NULL, NULL, "empty socket path"},
	{"unix:run/x.sock:http://h/", PACER_EURL, NULL, NULL, "must be absolute"},
	{"unix:/run/a b.sock:http://h/", PACER_EURL, NULL, NULL, "a space, control character"},
	{"unix:/run/a\tb.sock:http://h/", PACER_EURL, NULL, NULL, "a space, control character"},
	{"unix:/run/\xc3\xa9.sock:http://h/", PACER_EURL, NULL, NULL, "non-ASCII"},
};

static void test_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(splits); i++) {
		const struct split_case *c = &splits[i];
		const char *path = (const char *)1, *http = NULL, *why = (const char *)1;
		size_t plen = 99;
		int rc = table_url_unix(c->url, &path, &plen, &http, &why);
		if (rc != c->code)
			fail_msg("'%s': rc %d, want %d (%s)", c->url, rc, c->code, why ? why : "");
		if (rc) {
			assert_null(path);
			assert_int_equal(plen, 0);
			assert_non_null(why);
			if (!strstr(why, c->why))
				fail_msg("'%s': '%s' does not contain '%s'", c->url, why, c->why);
			continue;
		}
		assert_null(why);
		assert_string_equal(http, c->http);
		if (!c->path) {
			assert_null(path);
			assert_int_equal(plen, 0);
			assert_ptr_equal(http, c->url);
		} else {
			assert_non_null(path);
			assert_int_equal(plen, strlen(c->path));
			assert_memory_equal(path, c->path, plen);
			assert_ptr_equal(http, path + plen + 1); /* points into the URL */
		}
	}
}

static void test_split_length(void **state)
{
	(void)state;
	char url[300], path[200];
	memset(path, 'p', sizeof path);
	path[0] = '/';
	/* 107 bytes fit a sun_path with its NUL; 108 do not */
	path[TABLE_UNIX_PATH_MAX] = '\0';
	snprintf(url, sizeof url, "unix:%s:http://h/", path);
	const char *p, *http, *why;
	size_t plen;
	assert_int_equal(table_url_unix(url, &p, &plen, &http, &why), 0);
	assert_int_equal(plen, TABLE_UNIX_PATH_MAX);
	path[TABLE_UNIX_PATH_MAX] = 'p';
	path[TABLE_UNIX_PATH_MAX + 1] = '\0';
	snprintf(url, sizeof url, "unix:%s:http://h/", path);
	assert_int_equal(table_url_unix(url, &p, &plen, &http, &why), PACER_ETOOBIG);
	assert_non_null(strstr(why, "longer than 107 bytes"));
	assert_null(p);
	/* why may be NULL */
	assert_int_equal(table_url_unix("unix:x", &p, &plen, &http, NULL), PACER_EURL);
}

/* ---- hosts ---------------------------------------------------------- */

static const char mixed_targets[] =
	"GET unix:/run/a.sock:http://app.local/one\n"          /* 1: host 0 */
	"Accept: */*\n"
	"\n"
	"GET unix:/run/a.sock:http://APP.local/two?x=1\n"      /* 4: host 0 (case of the host) */
	"GET UNIX:/run/a.sock:HTTP://app.local/three\n"        /* 5: host 0 (no blank line needed) */
	"GET unix:/run/b.sock:http://app.local/one\n"          /* 6: host 1: another socket */
	"GET http://app.local/one\n"                           /* 7: host 2: TCP */
	"GET unix:/run/a.sock:https://app.local/one\n"         /* 8: host 3: https on a.sock */
	"GET unix:/run/a.sock:http://app.local:8080/one\n"     /* 9: host 4: another Host header */
	"GET unix:/run/a.sock:http://other.local/one\n"        /* 10: host 5: another name */
	"GET unix:/run/A.sock:http://app.local/one\n"          /* 11: host 6: paths are bytes */
	"POST unix:/run/b.sock:http://app.local/two\n"         /* 12: host 1 */
	"@bodies/1.json\n";

static void check_mixed(const struct table *t)
{
	assert_int_equal(t->n, 10);
	assert_int_equal(t->n_hosts, 7);
	static const size_t want_host[] = {0, 0, 0, 1, 2, 3, 4, 5, 6, 1};
	for (size_t i = 0; i < N(want_host); i++)
		if (t->reqs[i].host != want_host[i])
			fail_msg("request %zu (%s): host %zu, want %zu", i, t->reqs[i].url, t->reqs[i].host,
			         want_host[i]);
	static const struct {
		const char *name, *path;
		uint16_t port;
		bool tls;
		size_t n;
	} want[] = {
		{"app.local", "/run/a.sock", 80, false, 3},  {"app.local", "/run/b.sock", 80, false, 2},
		{"app.local", NULL, 80, false, 1},           {"app.local", "/run/a.sock", 443, true, 1},
		{"app.local", "/run/a.sock", 8080, false, 1}, {"other.local", "/run/a.sock", 80, false, 1},
		{"app.local", "/run/A.sock", 80, false, 1},
	};
	for (size_t h = 0; h < N(want); h++) {
		const struct table_host *th = &t->hosts[h];
		assert_string_equal(th->name, want[h].name);
		assert_int_equal(th->port, want[h].port);
		assert_int_equal(th->tls, want[h].tls);
		assert_int_equal(th->n_reqs, want[h].n);
		if (want[h].path)
			assert_string_equal(th->unix_path, want[h].path);
		else
			assert_null(th->unix_path);
	}
	/* the URL is kept as written; the target is the http part's */
	assert_string_equal(t->reqs[1].url, "unix:/run/a.sock:http://APP.local/two?x=1");
	assert_string_equal(t->reqs[1].target, "/two?x=1");
	assert_string_equal(t->reqs[0].target, "/one");
	assert_int_equal(t->reqs[9].body_len, 7);
}

static void test_targets_hosts(void **state)
{
	(void)state;
	struct table *t = parse_ok(mixed_targets, TABLE_FMT_TARGETS, "m.targets");
	check_mixed(t);
	assert_int_equal(t->reqs[0].n_headers, 1);
	assert_int_equal(t->reqs[2].line, 5);
	assert_int_equal(t->reqs[9].line, 12);
	table_free(t);
}

/* The same table as JSON Lines: the same hosts; and written back, the same. */
static void test_jsonl_hosts_round_trip(void **state)
{
	(void)state;
	static const char text[] =
		"{\"method\":\"GET\",\"url\":\"unix:/run/a.sock:http://app.local/one\","
		"\"header\":{\"Accept\":[\"*/*\"]}}\n"
		"{\"method\":\"GET\",\"url\":\"unix:/run/a.sock:http://APP.local/two?x=1\"}\n"
		"{\"method\":\"GET\",\"url\":\"UNIX:/run/a.sock:HTTP://app.local/three\"}\n"
		"{\"method\":\"GET\",\"url\":\"unix:/run/b.sock:http://app.local/one\"}\n"
		"{\"method\":\"GET\",\"url\":\"http://app.local/one\"}\n"
		"{\"method\":\"GET\",\"url\":\"unix:/run/a.sock:https://app.local/one\"}\n"
		"{\"method\":\"GET\",\"url\":\"unix:/run/a.sock:http://app.local:8080/one\"}\n"
		"{\"method\":\"GET\",\"url\":\"unix:/run/a.sock:http://other.local/one\"}\n"
		"{\"method\":\"GET\",\"url\":\"unix:/run/A.sock:http://app.local/one\"}\n"
		"{\"method\":\"POST\",\"url\":\"unix:/run/b.sock:http://app.local/two\","
		"\"body_file\":\"bodies/1.json\"}\n";
	struct table *t = parse_ok(text, TABLE_FMT_AUTO, "m.jsonl");
	assert_int_equal(t->format, TABLE_FMT_JSONL);
	check_mixed(t);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	char err[512] = "";
	assert_int_equal(table_write_jsonl(f, t, err, sizeof err), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"unix:/run/b.sock:http://app.local/two\""));
	struct table *b = NULL;
	assert_int_equal(table_parse(buf, len, TABLE_FMT_AUTO, "rt.jsonl", NULL, NULL, &b, err,
	                             sizeof err), 0);
	check_mixed(b);
	char h1[65], h2[65];
	assert_int_equal(table_hash(t, "ua", NULL, 0, h1, err, sizeof err), 0);
	assert_int_equal(table_hash(b, "ua", NULL, 0, h2, err, sizeof err), 0);
	assert_string_equal(h1, h2);
	free(buf);
	table_free(b);
	table_free(t);
}

/* The wire bytes carry the http part only (Host from its host and port);
 * the hash is over those bytes, so the socket path is not in it: the
 * table's hosts carry it (and the result prints it). */
static void test_wire_and_hash(void **state)
{
	(void)state;
	struct table *u = parse_ok("GET unix:/run/a.sock:http://app.local:8080/x?y=1\n",
	                           TABLE_FMT_TARGETS, "u.targets");
	struct table *v = parse_ok("GET unix:/run/b.sock:http://app.local:8080/x?y=1\n",
	                           TABLE_FMT_TARGETS, "v.targets");
	struct table *p = parse_ok("GET http://app.local:8080/x?y=1\n", TABLE_FMT_TARGETS, "p.targets");
	struct table_wire w;
	char err[256];
	assert_int_equal(table_encode(u, "ua", NULL, 0, &w, err, sizeof err), 0);
	const char want[] = "GET /x?y=1 HTTP/1.1\r\nHost: app.local:8080\r\n";
	assert_true(w.off[1] > sizeof want);
	assert_memory_equal(w.bytes, want, sizeof want - 1);
	assert_null(memmem(w.bytes, w.off[1], "sock", 4));
	assert_null(memmem(w.bytes, w.off[1], "unix", 4));
	table_wire_free(&w);
	char hu[65], hv[65], hp[65];
	assert_int_equal(table_hash(u, "ua", NULL, 0, hu, err, sizeof err), 0);
	assert_int_equal(table_hash(v, "ua", NULL, 0, hv, err, sizeof err), 0);
	assert_int_equal(table_hash(p, "ua", NULL, 0, hp, err, sizeof err), 0);
	assert_string_equal(hu, hv);
	assert_string_equal(hu, hp);
	/* ... which is why the hosts must tell them apart */
	assert_string_equal(u->hosts[0].unix_path, "/run/a.sock");
	assert_string_equal(v->hosts[0].unix_path, "/run/b.sock");
	assert_null(p->hosts[0].unix_path);
	table_free(u);
	table_free(v);
	table_free(p);
}

static void test_summary_labels(void **state)
{
	(void)state;
	struct table *t = parse_ok("GET unix:/run/a.sock:http://h/1\n"
	                           "GET unix:/run/a.sock:http://h/2\n"
	                           "GET unix:/run/a.sock:https://[::1]:8443/3\n"
	                           "GET http://h/4\n",
	                           TABLE_FMT_TARGETS, "s.targets");
	struct table_wire w;
	char err[256];
	assert_int_equal(table_encode(t, "ua", NULL, 0, &w, err, sizeof err), 0);
	struct table_summary s;
	assert_int_equal(table_summarize(t, &w, &s), 0);
	assert_int_equal(s.n_hosts, 3);
	assert_string_equal(s.hosts[0].name, "unix:/run/a.sock:http://h:80");
	assert_int_equal(s.hosts[0].n, 2);
	bool v6 = false, tcp = false;
	for (size_t i = 1; i < s.n_hosts; i++) {
		v6 |= strcmp(s.hosts[i].name, "unix:/run/a.sock:https://[::1]:8443") == 0;
		tcp |= strcmp(s.hosts[i].name, "h:80") == 0;
	}
	assert_true(v6 && tcp);
	table_summary_free(&s);
	table_wire_free(&w);
	table_free(t);
}

static void test_bodies(void **state)
{
	(void)state;
	char d[300], err[512] = "";
	snprintf(d, sizeof d, "%s/bodies", dir);
	struct table *t = NULL;
	assert_int_equal(table_from_bodies(d, "unix:/run/api.sock:http://api.local/ingest", NULL,
	                                   "application/json", NULL, &t, err, sizeof err),
	                 0);
	assert_int_equal(t->n, 2);
	assert_int_equal(t->n_hosts, 1);
	assert_string_equal(t->hosts[0].unix_path, "/run/api.sock");
	assert_string_equal(t->hosts[0].name, "api.local");
	assert_string_equal(t->reqs[1].target, "/ingest");
	table_free(t);
	t = (struct table *)d;
	assert_int_equal(table_from_bodies(d, "unix:api.sock:http://api.local/", NULL, NULL, NULL,
	                                   &t, err, sizeof err),
	                 PACER_EURL);
	assert_null(t);
	assert_string_equal(err, "bad URL 'unix:api.sock:http://api.local/': the socket path after "
	                         "'unix:' must be absolute (start with '/')");
}

/* ---- errors --------------------------------------------------------- */

static const struct err_case {
	const char *name;
	enum table_format fmt;
	const char *text;
	int code;
	const char *want;
} errs[] = {
	{"targets: relative path", TABLE_FMT_TARGETS,
	 "GET http://h/\n\nGET unix:app.sock:http://h/x\n", PACER_EURL,
	 "t.targets:3: bad URL 'unix:app.sock:http://h/x': the socket path after 'unix:' must be "
	 "absolute (start with '/')"},
	{"targets: no http part", TABLE_FMT_TARGETS, "# c\nGET unix:/run/app.sock\n", PACER_EURL,
	 "t.targets:2: bad URL 'unix:/run/app.sock': a unix: URL is unix:/PATH/TO.sock:http://HOST/PATH "
	 "(no ':http://' or ':https://' after the socket path)"},
	{"targets: empty path", TABLE_FMT_TARGETS, "GET unix::http://h/\n", PACER_EURL,
	 "t.targets:1: bad URL 'unix::http://h/': empty socket path after 'unix:'"},
	{"targets: bad http part", TABLE_FMT_TARGETS, "GET unix:/run/a.sock:http://h:0/\n", PACER_EURL,
	 "t.targets:1: bad URL 'unix:/run/a.sock:http://h:0/': port out of range (1-65535)"},
	{"targets: userinfo", TABLE_FMT_TARGETS, "GET unix:/run/a.sock:http://u@h/\n", PACER_EURL,
	 "t.targets:1: bad URL 'unix:/run/a.sock:http://u@h/': userinfo (user@host) is not supported"},
	{"targets: path with a space", TABLE_FMT_TARGETS, "GET unix:/run/a b.sock:http://h/\n",
	 PACER_EPARSE, "t.targets:1: unexpected text after the URL (expected 'METHOD URL')"},
	{"targets: long path", TABLE_FMT_TARGETS,
	 "GET unix:/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaa.sock:http://h/\n",
	 PACER_ETOOBIG,
	 "t.targets:1: bad URL 'unix:/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaa...': socket path longer than 107 bytes (the limit of a Unix socket "
	 "address)"},
	{"jsonl: path with a space", TABLE_FMT_JSONL,
	 "{\"method\":\"GET\",\"url\":\"unix:/run/x.sock:http://h/\"}\n"
	 "{\"method\":\"GET\",\"url\":\"unix:/run/a b.sock:http://h/\"}\n",
	 PACER_EURL,
	 "t.jsonl:2: bad URL 'unix:/run/a b.sock:http://h/': socket path has a space, control "
	 "character or non-ASCII byte"},
	{"jsonl: other scheme", TABLE_FMT_JSONL,
	 "{\"method\":\"GET\",\"url\":\"unix:/run/x.sock:ws://h/\"}\n", PACER_EURL,
	 "t.jsonl:1: bad URL 'unix:/run/x.sock:ws://h/': a unix: URL is "
	 "unix:/PATH/TO.sock:http://HOST/PATH (no ':http://' or ':https://' after the socket path)"},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(errs); i++) {
		const struct err_case *c = &errs[i];
		struct table *t = (struct table *)&i; /* must be reset to NULL */
		char err[512] = "";
		const char *src = c->fmt == TABLE_FMT_JSONL ? "t.jsonl" : "t.targets";
		int rc = table_parse(c->text, strlen(c->text), c->fmt, src, dir, NULL, &t, err, sizeof err);
		if (rc != c->code)
			fail_msg("%s: rc %d (%s), want %d: %s", c->name, rc, err_name(rc), c->code, err);
		assert_null(t);
		if (strcmp(err, c->want) != 0)
			fail_msg("%s:\n got '%s'\nwant '%s'", c->name, err, c->want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_length),
		cmocka_unit_test(test_targets_hosts),
		cmocka_unit_test(test_jsonl_hosts_round_trip),
		cmocka_unit_test(test_wire_and_hash),
		cmocka_unit_test(test_summary_labels),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
