/* pacer — phrases several sections of the report's content share: the
 * machine, the way to the target, a median with its range (see
 * content_int.h). */
#include <stdio.h>
#include <string.h>

#include "report/content_int.h"

const char *content_machine(struct content_ctx *c, char *out, size_t cap)
{
	double cores;
	const char *model = rr_str(c->env, "cpu_model");
	if (rr_num(c->env, "cores", &cores) && cores >= 1) {
		if (model && *model)
			snprintf(out, cap, "a %s-core %s machine", fmt_int(&c->f, cores), model);
		else
			snprintf(out, cap, "a %s-core machine", fmt_int(&c->f, cores));
	} else if (model && *model) {
		snprintf(out, cap, "a %s machine", model);
	} else {
		snprintf(out, cap, "a machine not recorded in the result");
	}
	return out;
}

const char *content_target(struct content_ctx *c, char *out, size_t cap)
{
	size_t hl = strlen(c->host);
	const char *a = c->address;
	bool same = hl && ((!strncmp(a, c->host, hl) && a[hl] == ':') ||
			   (a[0] == '[' && !strncmp(a + 1, c->host, hl) && a[hl + 1] == ']'));
	if (!a[0] || same)
		snprintf(out, cap, "%s", a[0] ? a : c->host);
	else if (!hl)
		snprintf(out, cap, "%s", a);
	else
		snprintf(out, cap, "%s, connected at %s", c->host, a);
	return out;
}

const char *content_where(struct content_ctx *c, char *out, size_t cap)
{
	if (c->loopback)
		snprintf(out, cap, "over loopback HTTP");
	else if (c->host[0])
		snprintf(out, cap, "over HTTP to %s", c->host);
	else
		snprintf(out, cap, "over HTTP");
	return out;
}

const char *content_med_range(struct content_ctx *c, char *out, size_t cap,
			      const json_t *summary, const char *key, bool us)
{
	const json_t *s = rr_obj(summary, key);
	double med, lo, hi;
	if (!s || !rr_num(s, "median", &med)) {
		snprintf(out, cap, "–");
		return out;
	}
	bool range = rr_num(s, "min", &lo) && rr_num(s, "max", &hi);
	if (us) {
		if (range)
			snprintf(out, cap, "%s (%s–%s)", fmt_us(&c->f, med), fmt_us(&c->f, lo),
				 fmt_us(&c->f, hi));
		else
			snprintf(out, cap, "%s", fmt_us(&c->f, med));
	} else {
		if (range)
			snprintf(out, cap, "%s (%s–%s)", fmt_rate(&c->f, med), fmt_rate(&c->f, lo),
				 fmt_rate(&c->f, hi));
		else
			snprintf(out, cap, "%s", fmt_rate(&c->f, med));
	}
	return out;
}
