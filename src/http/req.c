#include "http/req.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

int req_method_check(const char *method)
{
	if (!method || !*method || strlen(method) > 32)
		return PACER_EPARSE;
	bool digits = true;
	for (const char *p = method; *p; p++) {
		if (!is_tchar((unsigned char)*p))
			return PACER_EPARSE;
		digits &= *p >= '0' && *p <= '9';
	}
	/* "10" is a token, but no method: a number where a method goes is
	 * another tool's option (h2load's -m 10, streams per connection) */
	return digits ? PACER_EPARSE : 0;
}

int req_header_check(const char *line, const char **why)
{
	const char *colon = strchr(line, ':');
	if (!colon) {
		*why = "expected \"Name: value\"";
		return PACER_EHEADER;
	}
	if (colon == line) {
		*why = "empty header name";
		return PACER_EHEADER;
	}
	for (const char *p = line; p < colon; p++)
		if (!is_tchar((unsigned char)*p)) {
			*why = "header name has a character not allowed in a token";
			return PACER_EHEADER;
		}
	for (const char *p = colon + 1; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\r' || c == '\n' || (c < 0x20 && c != '\t') || c == 0x7f) {
			*why = "header value has a control character";
			return PACER_EHEADER;
		}
	}
	return 0;
}

static bool header_named(const char *line, const char *name)
{
	size_t n = strlen(name);
	return strncasecmp(line, name, n) == 0 && line[n] == ':';
}

static bool has_header(const struct req_spec *s, const char *name)
{
	for (size_t i = 0; i < s->n_headers; i++)
		if (header_named(s->headers[i], name))
			return true;
	return false;
}

int req_encode(const struct req_spec *s, char **out, size_t *out_len, const char **why)
{
	for (size_t i = 0; i < s->n_headers; i++) {
		int rc = req_header_check(s->headers[i], why);
		if (rc)
			return rc;
	}
	char host[URL_HOST_CAP + 16];
	if (url_host_header(s->url, host, sizeof host) < 0) {
		*why = "host too long";
		return PACER_EHEADER;
	}
	size_t cap = strlen(s->method) + strlen(s->url->target) + sizeof host + 256 + s->body_len +
		     (s->user_agent ? strlen(s->user_agent) : 0);
	for (size_t i = 0; i < s->n_headers; i++)
		cap += strlen(s->headers[i]) + 4;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	size_t o = 0;
#define PUT(...) o += (size_t)snprintf(buf + o, cap - o, __VA_ARGS__)
	PUT("%s %s HTTP/1.1\r\n", s->method, s->url->target);
	if (!has_header(s, "Host"))
		PUT("Host: %s\r\n", host);
	if (!has_header(s, "User-Agent") && s->user_agent)
		PUT("User-Agent: %s\r\n", s->user_agent);
	for (size_t i = 0; i < s->n_headers; i++) {
		/* normalise "Name:value" / "Name:   value" to "Name: value" */
		const char *colon = strchr(s->headers[i], ':');
		const char *v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		PUT("%.*s: %s\r\n", (int)(colon - s->headers[i]), s->headers[i], v);
	}
	bool wants_len = s->body_len > 0 || strcmp(s->method, "POST") == 0 ||
			 strcmp(s->method, "PUT") == 0 || strcmp(s->method, "PATCH") == 0;
	if (wants_len && !has_header(s, "Content-Length"))
		PUT("Content-Length: %zu\r\n", s->body_len);
	PUT("\r\n");
#undef PUT
	if (s->body_len) {
		memcpy(buf + o, s->body, s->body_len);
		o += s->body_len;
	}
	*out = buf;
	*out_len = o;
	return 0;
}
