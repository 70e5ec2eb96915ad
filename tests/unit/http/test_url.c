/* Tests of the URL parser (src/http/url.c): a table of valid URLs with the
 * expected fields and Host header, and of invalid ones with the expected
 * error code and `why` phrase; its IPv4 and IPv6 literals accepted exactly
 * when the C library's inet_pton accepts them (crafted and random
 * strings). */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/url.h"
#include "util/err.h"
#include "util/rng.h"

struct url_ok {
	const char *in;
	bool tls;
	const char *host;
	bool ipv6;
	uint16_t port;
	bool port_explicit;
	const char *target;
	const char *host_header;
};

static const struct url_ok valid[] = {
	{ "http://example.com", false, "example.com", false, 80, false, "/", "example.com" },
	{ "https://example.com", true, "example.com", false, 443, false, "/", "example.com" },
	{ "HTTP://Example.COM/", false, "Example.COM", false, 80, false, "/", "Example.COM" },
	{ "hTTpS://h/", true, "h", false, 443, false, "/", "h" },
	{ "http://localhost:8080/a/b?x=1&y=2", false, "localhost", false, 8080, true, "/a/b?x=1&y=2",
	  "localhost:8080" },
	{ "http://127.0.0.1:1/", false, "127.0.0.1", false, 1, true, "/", "127.0.0.1:1" },
	{ "http://h:65535", false, "h", false, 65535, true, "/", "h:65535" },
	{ "http://h:080/", false, "h", false, 80, true, "/", "h" }, /* explicit default: omitted */
	{ "https://h:443/x", true, "h", false, 443, true, "/x", "h" },
	{ "https://h:80/x", true, "h", false, 80, true, "/x", "h:80" },
	{ "http://h:443/x", false, "h", false, 443, true, "/x", "h:443" },
	{ "http://[::1]:8080/p", false, "::1", true, 8080, true, "/p", "[::1]:8080" },
	{ "http://[::1]/", false, "::1", true, 80, false, "/", "[::1]" },
	{ "https://[2001:db8::a:1]", true, "2001:db8::a:1", true, 443, false, "/", "[2001:db8::a:1]" },
	{ "http://[::ffff:10.0.0.1]:81", false, "::ffff:10.0.0.1", true, 81, true, "/",
	  "[::ffff:10.0.0.1]:81" },
	{ "http://h?q=1", false, "h", false, 80, false, "/?q=1", "h" },
	{ "http://h:81?q", false, "h", false, 81, true, "/?q", "h:81" },
	{ "http://h#frag", false, "h", false, 80, false, "/", "h" },
	{ "http://h/p?q#frag", false, "h", false, 80, false, "/p?q", "h" },
	{ "http://h/p#f?notquery", false, "h", false, 80, false, "/p", "h" },
	{ "http://h/a%20b/~x;p=1?q=%41&r=/s:t@u", false, "h", false, 80, false,
	  "/a%20b/~x;p=1?q=%41&r=/s:t@u", "h" },
	{ "http://my_service.internal-1.example./", false, "my_service.internal-1.example.", false, 80,
	  false, "/", "my_service.internal-1.example." },
	{ "http://10.1.2.3:9000/", false, "10.1.2.3", false, 9000, true, "/", "10.1.2.3:9000" },
	{ "http://1.2.3.4.example/", false, "1.2.3.4.example", false, 80, false, "/",
	  "1.2.3.4.example" },
	{ "http://h//double//slash", false, "h", false, 80, false, "//double//slash", "h" },
};

struct url_bad {
	const char *in;
	int rc;
	const char *why; /* substring of the expected phrase */
};

static const struct url_bad invalid[] = {
	{ "", PACER_EURL, "empty URL" },
	{ "example.com", PACER_EURL, "missing \"://\"" },
	{ "localhost:8080/x", PACER_EURL, "missing \"://\"" },
	{ "http:/h/", PACER_EURL, "missing \"://\"" },
	{ "http:h", PACER_EURL, "missing \"://\"" },
	{ "://h/", PACER_EURL, "missing scheme" },
	{ "ftp://h/", PACER_EURL, "unsupported scheme" },
	{ "httpx://h/", PACER_EURL, "unsupported scheme" },
	{ "ws://h/", PACER_EURL, "unsupported scheme" },
	{ "http://", PACER_EURL, "missing host" },
	{ "http:///path", PACER_EURL, "missing host" },
	{ "http://:80/", PACER_EURL, "missing host" },
	{ "http://?q", PACER_EURL, "missing host" },
	{ "http://[]/", PACER_EURL, "missing host" },
	{ "http://user@h/", PACER_EURL, "userinfo" },
	{ "http://user:pw@h:80/", PACER_EURL, "userinfo" },
	{ "http://h /", PACER_EURL, "space" },
	{ "http://h/a b", PACER_EURL, "space" },
	{ "http://h/a\tb", PACER_EURL, "control character" },
	{ "http://h/\r\nX: y", PACER_EURL, "control character" },
	{ "http://h/\x7f", PACER_EURL, "control character" },
	{ "http://h/caf\xc3\xa9", PACER_EURL, "non-ASCII" },
	{ "http://h\xc3\xa9.com/", PACER_EURL, "non-ASCII" },
	{ "http://h:/", PACER_EURL, "empty port" },
	{ "http://h:0/", PACER_EURL, "port out of range" },
	{ "http://h:65536/", PACER_EURL, "port out of range" },
	{ "http://h:99999999999999999999999/", PACER_EURL, "port out of range" },
	{ "http://h:-1/", PACER_EURL, "port is not a number" },
	{ "http://h:8a/", PACER_EURL, "port is not a number" },
	{ "http://h:+80/", PACER_EURL, "port is not a number" },
	{ "http://h:80x81/", PACER_EURL, "port is not a number" },
	{ "http://[::1:80/", PACER_EURL, "unterminated '['" },
	{ "http://[::1]x/", PACER_EURL, "after ']'" },
	{ "http://[::1]]/", PACER_EURL, "after ']'" },
	{ "http://[::g]/", PACER_EURL, "bad IPv6" },
	{ "http://[1.2.3.4]/", PACER_EURL, "bad IPv6" },
	{ "http://[fe80::1%25eth0]/", PACER_EURL, "bad IPv6" },
	{ "http://::1/", PACER_EURL, "must be in brackets" },
	{ "http://2001:db8::1:8080/", PACER_EURL, "must be in brackets" },
	{ "http://h%41/", PACER_EURL, "bad character in host" },
	{ "http://h!x/", PACER_EURL, "bad character in host" },
	{ "http://a]b/", PACER_EURL, "bad character in host" },
	{ "http://.h/", PACER_EURL, "empty label" },
	{ "http://a..b/", PACER_EURL, "empty label" },
	{ "http://./", PACER_EURL, "empty label" },
	{ "http://256.1.1.1/", PACER_EURL, "bad IPv4" },
	{ "http://1.2.3/", PACER_EURL, "bad IPv4" },
	{ "http://1.2.3.4.5/", PACER_EURL, "bad IPv4" },
	{ "http://123/", PACER_EURL, "bad IPv4" },
	{ "http://01.2.3.4/", PACER_EURL, "bad IPv4" },
};

static void test_valid(void **state)
{
	(void)state;
	static struct url u;
	char hh[512];
	for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
		const struct url_ok *c = &valid[i];
		const char *why = "unset";
		int rc = url_parse(&u, c->in, &why);
		if (rc != 0)
			print_message("\"%s\": %s (%s)\n", c->in, err_name(rc), why ? why : "?");
		assert_int_equal(rc, 0);
		assert_null(why);
		assert_int_equal(u.tls, c->tls);
		assert_string_equal(u.host, c->host);
		assert_int_equal(u.host_is_ipv6, c->ipv6);
		assert_int_equal(u.port, c->port);
		assert_int_equal(u.port_explicit, c->port_explicit);
		assert_string_equal(u.target, c->target);
		int n = url_host_header(&u, hh, sizeof hh);
		assert_int_equal(n, (int)strlen(c->host_header));
		assert_string_equal(hh, c->host_header);
		/* why may be NULL */
		assert_int_equal(url_parse(&u, c->in, NULL), 0);
	}
}

static void test_invalid(void **state)
{
	(void)state;
	static struct url u;
	for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		const struct url_bad *c = &invalid[i];
		const char *why = NULL;
		int rc = url_parse(&u, c->in, &why);
		if (rc != c->rc || !why || !strstr(why, c->why))
			print_message("\"%s\": got %d (%s), want %d (%s)\n", c->in, rc,
			              why ? why : "(null)", c->rc, c->why);
		assert_int_equal(rc, c->rc);
		assert_non_null(why);
		assert_non_null(strstr(why, c->why));
		/* on error the url is cleared */
		assert_string_equal(u.host, "");
		assert_string_equal(u.target, "");
		assert_int_equal(u.port, 0);
		/* why may be NULL */
		assert_int_equal(url_parse(&u, c->in, NULL), c->rc);
	}
	const char *why = NULL;
	assert_int_equal(url_parse(&u, NULL, &why), PACER_EURL);
	assert_string_equal(why, "empty URL");
}

static char buf[3 * URL_TARGET_CAP];

static void test_caps(void **state)
{
	(void)state;
	static struct url u;
	const char *why = NULL;

	/* host: URL_HOST_CAP - 1 characters fit; labels of 63 with dots */
	size_t n = (size_t)sprintf(buf, "http://");
	size_t host_start = n;
	while (n - host_start < URL_HOST_CAP - 1) {
		size_t room = URL_HOST_CAP - 1 - (n - host_start);
		size_t label = room > 63 ? 63 : room;
		memset(buf + n, 'a', label);
		n += label;
		if (n - host_start < URL_HOST_CAP - 1)
			buf[n++] = '.';
	}
	strcpy(buf + n, "/");
	assert_int_equal(url_parse(&u, buf, &why), 0);
	assert_int_equal(strlen(u.host), URL_HOST_CAP - 1);
	/* one more: too big */
	memmove(buf + host_start + 1, buf + host_start, strlen(buf + host_start) + 1);
	buf[host_start] = 'b';
	assert_int_equal(url_parse(&u, buf, &why), PACER_ETOOBIG);
	assert_non_null(strstr(why, "host too long"));

	/* a label of 64 */
	n = (size_t)sprintf(buf, "http://");
	memset(buf + n, 'l', 64);
	strcpy(buf + n + 64, ".com/");
	assert_int_equal(url_parse(&u, buf, &why), PACER_EURL);
	assert_non_null(strstr(why, "longer than 63"));

	/* IPv6 literal longer than the host cap */
	n = (size_t)sprintf(buf, "http://[");
	memset(buf + n, '1', URL_HOST_CAP);
	strcpy(buf + n + URL_HOST_CAP, "]/");
	assert_int_equal(url_parse(&u, buf, &why), PACER_ETOOBIG);
	assert_non_null(strstr(why, "host too long"));

	/* target: URL_TARGET_CAP - 1 characters fit */
	n = (size_t)sprintf(buf, "http://h");
	buf[n] = '/';
	memset(buf + n + 1, 'p', URL_TARGET_CAP - 2);
	strcpy(buf + n + URL_TARGET_CAP - 1, "#fragment-not-counted");
	assert_int_equal(url_parse(&u, buf, &why), 0);
	assert_int_equal(strlen(u.target), URL_TARGET_CAP - 1);
	buf[n + URL_TARGET_CAP - 1] = 'p';
	buf[n + URL_TARGET_CAP] = '\0';
	assert_int_equal(url_parse(&u, buf, &why), PACER_ETOOBIG);
	assert_non_null(strstr(why, "too long"));

	/* a query-only target gains a "/" that counts */
	n = (size_t)sprintf(buf, "http://h?");
	memset(buf + n, 'q', URL_TARGET_CAP - 3);
	buf[n + URL_TARGET_CAP - 3] = '\0';
	assert_int_equal(url_parse(&u, buf, &why), 0);
	assert_int_equal(strlen(u.target), URL_TARGET_CAP - 1);
	assert_int_equal(u.target[0], '/');
	assert_int_equal(u.target[1], '?');
	buf[n + URL_TARGET_CAP - 3] = 'q';
	buf[n + URL_TARGET_CAP - 2] = '\0';
	assert_int_equal(url_parse(&u, buf, &why), PACER_ETOOBIG);
}

static void test_host_header_space(void **state)
{
	(void)state;
	static struct url u;
	char out[16];
	assert_int_equal(url_parse(&u, "http://[::1]:8080/", NULL), 0);
	/* "[::1]:8080" is 10 characters: needs 11 bytes */
	assert_int_equal(url_host_header(&u, out, 11), 10);
	assert_string_equal(out, "[::1]:8080");
	assert_int_equal(url_host_header(&u, out, 10), -ENOSPC);
	assert_int_equal(url_host_header(&u, NULL, 0), -ENOSPC);
	assert_int_equal(url_parse(&u, "https://abc/", NULL), 0);
	assert_int_equal(url_host_header(&u, out, 4), 3);
	assert_int_equal(url_host_header(&u, out, 3), -ENOSPC);
}

/* url_parse takes a host literal exactly when inet_pton does: the parser
 * checks them itself (http/ stays free of the sockets API), so compare it
 * with the C library on crafted strings and on many random ones. */
static bool url_takes(const char *host, bool v6)
{
	static struct url u;
	char text[128];
	snprintf(text, sizeof text, v6 ? "http://[%s]/" : "http://%s/", host);
	return url_parse(&u, text, NULL) == 0;
}

static bool libc_takes(const char *host, bool v6)
{
	unsigned char a[16];
	return inet_pton(v6 ? AF_INET6 : AF_INET, host, a) == 1;
}

static void test_literals_as_inet_pton(void **state)
{
	(void)state;
	static const char *const v6[] = {
		"::", "::1", "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8",
		"1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7", "1::2::3", ":::", "1:::2",
		":1", "1:", "::1:", "abcd:EF01::", "12345::", "0000::0", "::ffff:1.2.3.4",
		"1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "::1:2:3:4:5:6:1.2.3.4",
		"::1:2:3:4:5:1.2.3.4", "::1.2.3.4", "1.2.3.4", "::01.2.3.4", "::256.1.1.1",
		"::1.2.3", "::1.2.3.4.5", "::1.2.3.4:5", "::a.2.3.4", "fe80::1%eth0", "g::",
		"1:2:3:4:5:6:7:8:9", "::0.0.0.0", "1::1.2.3.4",
	};
	static const char *const v4[] = {
		"1.2.3.4", "0.0.0.0", "255.255.255.255", "256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5",
		"1.2.3.04", "1.2.3.00", "1234.1.1.1", "1.2.3.4.", "1..2.3", "00.0.0.0", "10.0.0.255",
	};
	for (size_t i = 0; i < sizeof v6 / sizeof v6[0]; i++)
		if (url_takes(v6[i], true) != libc_takes(v6[i], true))
			fail_msg("[%s]: url_parse %d, inet_pton %d", v6[i], url_takes(v6[i], true),
				 libc_takes(v6[i], true));
	for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++)
		if (url_takes(v4[i], false) != libc_takes(v4[i], false))
			fail_msg("%s: url_parse %d, inet_pton %d", v4[i], url_takes(v4[i], false),
				 libc_takes(v4[i], false));
	/* random strings over each alphabet: most are invalid, many are not */
	struct rng r;
	rng_seed(&r, 14);
	static const char a6[] = "0123456789abcdefABCDEFg::::...";
	static const char a4[] = "0123456789....";
	size_t taken6 = 0, taken4 = 0;
	for (int k = 0; k < 200000; k++) {
		bool six = k % 2 == 0;
		const char *alpha = six ? a6 : a4;
		size_t na = six ? sizeof a6 - 1 : sizeof a4 - 1;
		char s[48];
		size_t n = 1 + rng_next(&r) % (six ? 40 : 17);
		for (size_t i = 0; i < n; i++)
			s[i] = alpha[rng_next(&r) % na];
		s[n] = '\0';
		bool lib = libc_takes(s, six);
		if (url_takes(s, six) != lib)
			fail_msg("%s: url_parse %d, inet_pton %d", s, !lib, lib);
		*(six ? &taken6 : &taken4) += lib;
	}
	/* the comparison covered both answers */
	assert_true(taken6 > 100);
	assert_true(taken4 > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_host_header_space),
		cmocka_unit_test(test_literals_as_inet_pton),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
