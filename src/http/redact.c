/* pacer — secret request headers shown redacted (http/redact.h). */
#include "http/redact.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const secret_names[] = {"Authorization", "Proxy-Authorization", "Cookie",
					   "Set-Cookie"};

bool redact_header_name(const struct redact *r, const char *name, size_t len)
{
	if (r && r->off)
		return false;
	for (size_t i = 0; i < sizeof secret_names / sizeof secret_names[0]; i++)
		if (strlen(secret_names[i]) == len && !strncasecmp(secret_names[i], name, len))
			return true;
	for (size_t i = 0; r && i < r->n_names; i++)
		if (r->names[i] && strlen(r->names[i]) == len && !strncasecmp(r->names[i], name, len))
			return true;
	return false;
}

/* An HTTP token character (RFC 9110 tchar). */
static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

bool redact_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n < 1 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!tchar((unsigned char)name[i]))
			return false;
	return true;
}

void redact_fingerprint(const char *v, size_t len, char out[REDACT_FP_HEX + 1])
{
	static const unsigned char salt[] = "pacer redact v1";
	unsigned char md[REDACT_FP_HEX / 2];
	if (!PKCS5_PBKDF2_HMAC(v, (int)len, salt, sizeof salt - 1, 10000, EVP_sha256(),
			       (int)sizeof md, md))
		memset(md, 0, sizeof md); /* out of memory in OpenSSL: a fingerprint of zeros */
	for (size_t i = 0; i < sizeof md; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[REDACT_FP_HEX] = '\0';
}

/* The length of a header name that starts s and is followed by ':' (0: s
 * does not start a header line). */
static size_t name_len(const char *s)
{
	size_t n = 0;
	while (tchar((unsigned char)s[n]))
		n++;
	return n && s[n] == ':' ? n : 0;
}

/* prefix[0..plen) then the header line at line (whose name is n bytes),
 * its value redacted, into out[cap]. */
static const char *redacted(const char *prefix, size_t plen, const char *line, size_t n,
			    char *out, size_t cap)
{
	const char *v = line + n + 1;
	size_t sp = strspn(v, " \t");
	char fp[REDACT_FP_HEX + 1];
	redact_fingerprint(v + sp, strlen(v + sp), fp);
	if (!cap)
		return "";
	snprintf(out, cap, "%.*s%.*s:%.*s[redacted fingerprint %s]", (int)plen, prefix, (int)n, line,
		 (int)sp, v, fp);
	return out;
}

const char *redact_header_line(const struct redact *r, const char *line, char *out, size_t cap)
{
	size_t n = name_len(line);
	if (!n || !redact_header_name(r, line, n))
		return line;
	return redacted("", 0, line, n, out, cap);
}

const char *redact_arg(const struct redact *r, const char *arg, char *out, size_t cap)
{
	if (r && r->off)
		return arg;
	/* a bundle of short options ("-qH"): the letters after one '-' end
	 * before `letters`; a name may follow its 'H' */
	size_t letters = 0;
	if (arg[0] == '-' && arg[1] != '-')
		for (letters = 1; (arg[letters] >= 'a' && arg[letters] <= 'z') ||
				  (arg[letters] >= 'A' && arg[letters] <= 'Z');
		     letters++)
			;
	for (size_t i = 0; arg[i]; i++) {
		if (!(i == 0 || arg[i - 1] == '=' || (i >= 2 && i <= letters && arg[i - 1] == 'H')))
			continue;
		size_t n = name_len(arg + i);
		if (n && redact_header_name(r, arg + i, n))
			return redacted(arg, i, arg + i, n, out, cap);
	}
	return arg;
}

const char *redact_value(const struct redact *r, const char *v, char *out, size_t cap)
{
	if (r && r->off)
		return v;
	char fp[REDACT_FP_HEX + 1];
	redact_fingerprint(v, strlen(v), fp);
	if (!cap)
		return "";
	snprintf(out, cap, "[redacted fingerprint %s]", fp);
	return out;
}
