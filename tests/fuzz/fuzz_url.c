/* libFuzzer harness for the URL parser (src/http/url.c).
 *
 * Input: the URL text (cut at the first NUL). On success the fields must be
 * sane, and the URL rebuilt from them (scheme://Host-header + target) must
 * parse to the same fields; on error the phrase must be set and the url
 * cleared. Violations abort(). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/url.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_url"
#include "common/fuzz_check.h"

static char text[4 * URL_TARGET_CAP];
static char rebuilt[URL_HOST_CAP + URL_TARGET_CAP + 32];
static struct url u, v;

static void check_ok(const struct url *x)
{
	size_t hl = strnlen(x->host, URL_HOST_CAP);
	size_t tl = strnlen(x->target, URL_TARGET_CAP);
	CHECK(hl > 0 && hl < URL_HOST_CAP);
	CHECK(tl > 0 && tl < URL_TARGET_CAP);
	CHECK(x->target[0] == '/');
	CHECK(!strchr(x->target, '#'));
	for (size_t i = 0; i < tl; i++)
		CHECK((unsigned char)x->target[i] > 0x20 && (unsigned char)x->target[i] < 0x7f);
	for (size_t i = 0; i < hl; i++)
		CHECK(x->host[i] != '/' && x->host[i] != '@' && x->host[i] != '[' &&
		      x->host[i] != ']' && x->host[i] > 0x20);
	CHECK(x->port != 0);
	if (!x->port_explicit)
		CHECK(x->port == (x->tls ? 443 : 80));
	if (!x->host_is_ipv6)
		CHECK(!strchr(x->host, ':'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= sizeof text)
		size = sizeof text - 1;
	memcpy(text, data, size);
	text[size] = '\0';

	const char *why = "unset";
	int rc = url_parse(&u, text, &why);
	if (rc < 0) {
		CHECK(rc == PACER_EURL || rc == PACER_ETOOBIG);
		CHECK(why != NULL && why[0] != '\0');
		CHECK(u.host[0] == '\0' && u.target[0] == '\0' && u.port == 0);
		CHECK(url_parse(&u, text, NULL) == rc);
		return 0;
	}
	CHECK(rc == 0 && why == NULL);
	check_ok(&u);

	char hh[URL_HOST_CAP + 16];
	int n = url_host_header(&u, hh, sizeof hh);
	CHECK(n > 0 && (size_t)n == strlen(hh));
	CHECK(url_host_header(&u, hh, (size_t)n) == -ENOSPC);
	CHECK(url_host_header(&u, hh, (size_t)n + 1) == n);

	/* round trip: the default port is dropped by the Host header, so the
	 * rebuilt URL keeps port_explicit only when the port is not the default */
	snprintf(rebuilt, sizeof rebuilt, "%s://%s%s", u.tls ? "https" : "http", hh, u.target);
	CHECK(url_parse(&v, rebuilt, &why) == 0);
	CHECK(v.tls == u.tls && v.port == u.port && v.host_is_ipv6 == u.host_is_ipv6);
	CHECK(strcmp(v.host, u.host) == 0);
	CHECK(strcmp(v.target, u.target) == 0);
	return 0;
}
