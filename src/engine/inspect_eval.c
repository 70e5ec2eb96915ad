/* pacer — inspection at run time: a plan's rules (plan/inspect.h) judged
 * on each completed response and counted into the phase's stats. Runs on
 * the hot path: no allocation, no locks, no formatting. */
#include "engine/inspect_eval.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ph->outcome[] is indexed like in->outcome[] */
_Static_assert(INSPECT_MAX_OUTCOMES <= RESULT_MAX_OUTCOMES,
	       "every --outcome rule needs a counter in struct phase_stats");

/* ---- a tiny JSON scanner: enough to find one number by path ---- */

struct jscan {
	const char *p, *end;
	int depth;
};

static void js_ws(struct jscan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* Skip a string starting at '"'; on success k and kn give its raw content. */
static int js_string(struct jscan *s, const char **k, size_t *kn)
{
	if (s->p >= s->end || *s->p != '"')
		return -1;
	const char *start = ++s->p;
	while (s->p < s->end && *s->p != '"') {
		if ((unsigned char)*s->p < 0x20)
			return -1;
		if (*s->p == '\\') {
			s->p++;
			if (s->p >= s->end)
				return -1;
		}
		s->p++;
	}
	if (s->p >= s->end)
		return -1;
	if (k) {
		*k = start;
		*kn = (size_t)(s->p - start);
	}
	s->p++;
	return 0;
}

static int js_skip(struct jscan *s);

static int js_skip_container(struct jscan *s, char close, bool object)
{
	if (++s->depth > 64)
		return -1;
	s->p++;
	js_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		s->depth--;
		return 0;
	}
	for (;;) {
		if (object) {
			if (js_string(s, NULL, NULL))
				return -1;
			js_ws(s);
			if (s->p >= s->end || *s->p != ':')
				return -1;
			s->p++;
		}
		if (js_skip(s))
			return -1;
		js_ws(s);
		if (s->p >= s->end)
			return -1;
		if (*s->p == ',') {
			s->p++;
			continue;
		}
		if (*s->p == close) {
			s->p++;
			s->depth--;
			return 0;
		}
		return -1;
	}
}

/* Skip one value. */
static int js_skip(struct jscan *s)
{
	js_ws(s);
	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '{':
		return js_skip_container(s, '}', true);
	case '[':
		return js_skip_container(s, ']', false);
	case '"':
		return js_string(s, NULL, NULL);
	default: {
		const char *start = s->p;
		while (s->p < s->end && (strchr("+-.eE", *s->p) || (*s->p >= '0' && *s->p <= '9') ||
					 (*s->p >= 'a' && *s->p <= 'z')))
			s->p++;
		return s->p > start ? 0 : -1;
	}
	}
}

int inspect_json_number(const char *json, size_t len, const char *path, double *out)
{
	struct jscan s = {json, json + len, 0};
	const char *el = path;
	for (;;) {
		const char *dot = strchr(el, '.');
		size_t el_len = dot ? (size_t)(dot - el) : strlen(el);
		js_ws(&s);
		if (s.p >= s.end)
			return -1;
		if (*s.p == '{') {
			s.p++;
			bool found = false;
			js_ws(&s);
			if (s.p < s.end && *s.p == '}')
				return -1;
			while (!found) {
				const char *k;
				size_t kn;
				js_ws(&s);
				if (js_string(&s, &k, &kn))
					return -1;
				js_ws(&s);
				if (s.p >= s.end || *s.p != ':')
					return -1;
				s.p++;
				if (kn == el_len && !memcmp(k, el, kn)) {
					found = true;
					break;
				}
				if (js_skip(&s))
					return -1;
				js_ws(&s);
				if (s.p >= s.end || *s.p != ',')
					return -1; /* '}' or garbage: not found */
				s.p++;
			}
		} else if (*s.p == '[') {
			char *e;
			char idx_buf[24];
			if (el_len == 0 || el_len >= sizeof idx_buf)
				return -1;
			memcpy(idx_buf, el, el_len);
			idx_buf[el_len] = '\0';
			unsigned long idx = strtoul(idx_buf, &e, 10);
			if (*e || idx_buf[0] < '0' || idx_buf[0] > '9')
				return -1;
			s.p++;
			for (unsigned long i = 0; i < idx; i++) {
				if (js_skip(&s))
					return -1;
				js_ws(&s);
				if (s.p >= s.end || *s.p != ',')
					return -1;
				s.p++;
			}
		} else {
			return -1;
		}
		if (!dot)
			break;
		el = dot + 1;
	}
	js_ws(&s);
	/* the value: a JSON number */
	const char *start = s.p;
	while (s.p < s.end && (strchr("+-.eE", *s.p) || (*s.p >= '0' && *s.p <= '9')))
		s.p++;
	size_t n = (size_t)(s.p - start);
	if (n == 0 || n > 63)
		return -1;
	char num[64];
	memcpy(num, start, n);
	num[n] = '\0';
	char *e;
	double v = strtod(num, &e);
	if (*e || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* ---- Server-Timing ---- */

/* One metric of a Server-Timing value: name, and dur if present. */
static bool st_metric(const char *p, const char *end, const char **name, size_t *name_len,
		      double *dur, bool *has_dur)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	const char *n = p;
	while (p < end && *p != ';' && *p != ' ' && *p != '\t')
		p++;
	*name = n;
	*name_len = (size_t)(p - n);
	*has_dur = false;
	while (p < end) {
		while (p < end && *p != ';')
			p++;
		if (p >= end)
			break;
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p > 4 && !strncasecmp(p, "dur", 3) && (p[3] == '=' || p[3] == ' ')) {
			const char *v = p + 3;
			while (v < end && (*v == ' ' || *v == '='))
				v++;
			if (v < end && *v == '"')
				v++;
			char buf[48];
			size_t k = 0;
			while (v + k < end && k < sizeof buf - 1 &&
			       (strchr("+-.eE", v[k]) || (v[k] >= '0' && v[k] <= '9')))
				k++;
			memcpy(buf, v, k);
			buf[k] = '\0';
			char *e;
			double d = strtod(buf, &e);
			if (k && !*e && isfinite(d)) {
				*dur = d;
				*has_dur = true;
			}
		}
	}
	return *name_len > 0;
}

/* Walk the metrics of one header value (comma-separated; commas inside
 * quoted strings do not split). Returns true when `want` (or, with want
 * NULL, `total` / the first with a dur) was found. */
static bool st_find(const char *v, const char *want, double *dur_ms, bool *have_first,
		    double *first)
{
	const char *p = v, *end = v + strlen(v);
	while (p < end) {
		const char *q = p;
		bool quoted = false;
		while (q < end && (quoted || *q != ',')) {
			if (*q == '"')
				quoted = !quoted;
			else if (*q == '\\' && quoted && q + 1 < end)
				q++;
			q++;
		}
		const char *name;
		size_t nl;
		double d = 0;
		bool has;
		if (st_metric(p, q, &name, &nl, &d, &has) && has) {
			const char *target = want ? want : "total";
			if (nl == strlen(target) && !strncasecmp(name, target, nl)) {
				*dur_ms = d;
				return true;
			}
			if (!*have_first) {
				*have_first = true;
				*first = d;
			}
		}
		p = q < end ? q + 1 : q;
	}
	return false;
}

int64_t srvtime_extract(const struct srvtime_spec *s, const struct h1_capture *cap)
{
	if (!cap)
		return -1;
	double v = 0;
	bool found = false;
	if (s->src == SRVTIME_JSON) {
		if (!cap->body_len || inspect_json_number(cap->body, cap->body_len, s->name, &v))
			return -1;
		found = true;
	} else {
		const char *want = s->src == SRVTIME_SERVER_TIMING ? "server-timing" : s->name;
		bool have_first = false;
		double first = 0;
		const char *p = cap->hbuf;
		for (uint32_t i = 0; i < cap->n_fields && !found; i++) {
			const char *name = p;
			const char *val = name + strlen(name) + 1;
			p = val + strlen(val) + 1;
			if (strcasecmp(name, want))
				continue;
			if (s->src == SRVTIME_HEADER) {
				char *e;
				v = strtod(val, &e);
				found = e != val && *e == '\0';
				if (!found)
					return -1;
			} else {
				found = st_find(val, s->name[0] ? s->name : NULL, &v, &have_first, &first);
			}
		}
		if (!found && s->src == SRVTIME_SERVER_TIMING && !s->name[0] && have_first) {
			v = first;
			found = true;
		}
	}
	if (!found || !isfinite(v) || v < 0)
		return -1;
	double ns = v * s->ns_per_unit;
	if (ns > 9e18)
		return -1;
	return (int64_t)(ns + 0.5);
}

bool inspect_response(const struct inspect *in, int status, const struct h1_capture *cap,
		      struct phase_stats *ph, _Atomic uint64_t *live_outcome)
{
	const char *names[H1_CAPTURE_MAX_FIELDS], *values[H1_CAPTURE_MAX_FIELDS];
	struct rule_input ri = {.status = status};
	if (cap) {
		ri.body = cap->body;
		ri.body_len = cap->body_len;
		const char *p = cap->hbuf;
		for (uint32_t i = 0; i < cap->n_fields && i < H1_CAPTURE_MAX_FIELDS; i++) {
			names[i] = p;
			values[i] = p + strlen(p) + 1;
			p = values[i] + strlen(values[i]) + 1;
			ri.n_headers++;
		}
		ri.header_names = names;
		ri.header_values = values;
	}
	bool ok = in->success ? rule_eval(in->success, &ri) : inspect_default_ok(status);
	for (size_t i = 0; i < in->n_outcomes; i++)
		if (rule_eval(in->outcome[i], &ri)) {
			ph->outcome[i]++;
			if (live_outcome) /* single writer: relaxed load and store */
				atomic_store_explicit(
					&live_outcome[i],
					atomic_load_explicit(&live_outcome[i], memory_order_relaxed) + 1,
					memory_order_relaxed);
		}
	if (in->srvtime.src != SRVTIME_NONE) {
		int64_t ns = srvtime_extract(&in->srvtime, cap);
		if (ns < 0)
			ph->server_time_missing++;
		else
			hist_record(&ph->timing[TIM_SERVER], (uint64_t)ns);
	}
	return ok;
}
