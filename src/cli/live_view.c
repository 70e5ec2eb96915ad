/* pacer — the live view on stderr (cli/live_view.h). */
#include "cli/live_view.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc/doc.h"
#include "util/clock.h"
#include "util/units.h"

#define MAX_COLS 250 /* a line is cut there however wide the terminal */

size_t cli_live_cols(const char *s)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xC0) != 0x80;
	return n;
}

/* ---- layout ------------------------------------------------------------ */

/* A line being built from segments: one that does not fit is left out, and
 * so are the ones after it (they come in order of importance). */
struct lb {
	char *s;
	size_t len, cols, max;
	bool full;
};

static void lb_init(struct lb *b, char *buf, size_t max_cols)
{
	b->s = buf;
	b->s[0] = 0;
	b->len = b->cols = 0;
	b->max = max_cols;
	b->full = false;
}

/* Append s cut to at most `cols` columns, on a character's boundary. */
static void lb_put_cut(struct lb *b, const char *s, size_t cols)
{
	size_t c = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p && b->len + 4 < CLI_LIVE_LINE_CAP) {
		bool lead = (*p & 0xC0) != 0x80;
		if (lead && c == cols)
			break;
		c += lead;
		/* a control character (a name from the command line) is shown,
		 * made harmless, never sent to the terminal as such */
		b->s[b->len++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
		p++;
	}
	b->s[b->len] = 0;
	b->cols += c;
}

static bool lb_add(struct lb *b, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool lb_add(struct lb *b, const char *sep, const char *fmt, ...)
{
	if (b->full)
		return false;
	char seg[CLI_LIVE_LINE_CAP];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(seg, sizeof seg, fmt, ap);
	va_end(ap);
	if (!b->len)
		sep = "";
	size_t need = cli_live_cols(sep) + cli_live_cols(seg);
	if (b->cols + need > b->max) {
		if (!b->len) /* the first segment: cut, never left out */
			lb_put_cut(b, seg, b->max);
		b->full = true;
		return false;
	}
	lb_put_cut(b, sep, SIZE_MAX);
	lb_put_cut(b, seg, SIZE_MAX);
	return true;
}

static const char *dur(char *out, size_t cap, uint64_t ns)
{
	if (!ns)
		return "-";
	return units_fmt_duration(out, cap, (double)ns);
}

static const char *secs(char *out, size_t cap, uint64_t ns)
{
	snprintf(out, cap, "%.1fs", (double)ns / 1e9);
	return out;
}

/* The first line: what runs, its phase, a bar, elapsed and remaining. */
static void line_head(const struct cli_live_in *in, struct lb *b)
{
	const struct live_figs *f = in->cur;
	char head[160], tail[128], a[32], c[32], r[32];
	int n = snprintf(head, sizeof head, "pacer %s", in->cmd);
	if (in->n_variants > 1 && in->names)
		n += snprintf(head + n, sizeof head - (size_t)n, " %s", in->names[in->variant]);
	if (f->step) {
		if (f->step <= f->planned_steps)
			n += snprintf(head + n, sizeof head - (size_t)n, " step %u/%u", f->step,
				      f->planned_steps);
		else
			n += snprintf(head + n, sizeof head - (size_t)n, " step r%u", f->step);
	}
	snprintf(head + n, sizeof head - (size_t)n, "  %s", live_phase_name(f->phase));
	if (f->total_ns) {
		uint64_t left = f->total_ns > f->elapsed_ns ? f->total_ns - f->elapsed_ns : 0;
		snprintf(tail, sizeof tail, "%s / %s  %s left", secs(a, sizeof a, f->elapsed_ns),
			 secs(c, sizeof c, f->total_ns), secs(r, sizeof r, left));
	} else {
		snprintf(tail, sizeof tail, "%s", secs(a, sizeof a, f->elapsed_ns));
	}
	size_t used = cli_live_cols(head) + cli_live_cols(tail) + 6; /* two gaps and [] */
	size_t bar = b->max > used ? b->max - used : 0;
	if (bar > 40)
		bar = 40;
	lb_add(b, "", "%s", head);
	if (f->total_ns && bar >= 8) {
		char s[48];
		double frac = (double)f->elapsed_ns / (double)f->total_ns;
		if (frac > 1)
			frac = 1;
		size_t done = (size_t)(frac * (double)bar + 0.5);
		for (size_t i = 0; i < bar; i++)
			s[i] = i < done ? '#' : '.';
		s[bar] = 0;
		lb_add(b, "  ", "[%s]", s);
	}
	lb_add(b, "  ", "%s", tail);
}

static void line_rate(const struct live_figs *f, struct lb *b)
{
	char a[32], c[32], s[32];
	lb_add(b, "", "rate");
	if (f->offered_per_s > 0)
		lb_add(b, "     ", "offered %s/s", units_fmt_rate(a, sizeof a, f->offered_per_s));
	else
		lb_add(b, "     ", "closed loop");
	if (!f->elapsed_ns) { /* drawn as the step begins: nothing measured yet */
		lb_add(b, "  ", "achieved -");
		return;
	}
	lb_add(b, "  ", "achieved %s/s", units_fmt_rate(c, sizeof c, f->achieved_per_s));
	lb_add(b, "  ", "sent %s/s", units_fmt_rate(s, sizeof s, f->sent_per_s));
}

static void line_latency(struct lb *b, const char *label, uint64_t p50, uint64_t p99, uint64_t max,
			 uint64_t n)
{
	char a[32], c[32], d[32], e[32];
	lb_add(b, "", "%-12s", label);
	lb_add(b, " ", "p50 %-9s", dur(a, sizeof a, p50));
	lb_add(b, " ", "p99 %-9s", dur(c, sizeof c, p99));
	lb_add(b, " ", "max %-9s", dur(d, sizeof d, max));
	lb_add(b, " ", "(%s)", units_fmt_thousands(e, sizeof e, (double)n, 0));
}

static void line_status(const struct live_figs *f, struct lb *b)
{
	char a[32];
	lb_add(b, "", "status");
	lb_add(b, "   ", "2xx %s", units_fmt_thousands(a, sizeof a, (double)f->status_class[2], 0));
	static const char *const cls[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
	for (int k = 1; k <= 6; k++) {
		int c = k % 6; /* 1xx, 3xx..5xx, then other */
		if (c == 2 || !f->status_class[c])
			continue;
		lb_add(b, "  ", "%s %s", cls[c],
		       units_fmt_thousands(a, sizeof a, (double)f->status_class[c], 0));
	}
}

static void line_errors(const struct live_figs *f, struct lb *b)
{
	char a[32];
	lb_add(b, "", "errors");
	if (!f->errors_total) {
		lb_add(b, "   ", "none");
		return;
	}
	lb_add(b, "   ", "%s:", units_fmt_thousands(a, sizeof a, (double)f->errors_total, 0));
	for (int k = 0; k < ERRK_COUNT; k++)
		if (f->errors[k])
			lb_add(b, " ", "%s %s", err_kind_name((enum err_kind)k),
			       units_fmt_thousands(a, sizeof a, (double)f->errors[k], 0));
}

static void line_queue(const struct live_figs *f, struct lb *b)
{
	char a[32], c[32], d[32], e[32];
	lb_add(b, "", "backlog");
	lb_add(b, "  ", "%s", units_fmt_thousands(a, sizeof a, (double)f->backlog, 0));
	lb_add(b, "  ", "dropped %s", units_fmt_thousands(c, sizeof c, (double)f->dropped, 0));
	if (f->offered_per_s > 0)
		lb_add(b, "  ", "gen lag p99 %s", dur(d, sizeof d, f->lag_p99_ns));
	lb_add(b, "  ", "conns %s", units_fmt_thousands(e, sizeof e, (double)f->conns_open, 0));
}

static void line_step(const struct cli_live_step *s, uint32_t number, struct lb *b)
{
	char o[32], a[32], p[32], e[32];
	lb_add(b, "", "step %s%-3u", s->refine ? "r" : "", number);
	lb_add(b, " ", "%7s/s", units_fmt_thousands(o, sizeof o, s->offered_per_s, 0));
	lb_add(b, "  ", "achieved %s/s", units_fmt_rate(a, sizeof a, s->achieved_per_s));
	lb_add(b, "  ", "p99 %s", dur(p, sizeof p, s->p99_ns));
	lb_add(b, "  ", "errors %s", units_fmt_pct(e, sizeof e, s->error_pct));
	lb_add(b, "  ", "%s", s->verdict);
}

static void line_variant(const struct cli_live_in *in, size_t i, struct lb *b)
{
	const struct live_figs *f = i == in->variant ? in->cur : in->last ? in->last[i] : NULL;
	char a[32], c[32], d[32];
	lb_add(b, "", "%s %s", i == in->variant ? ">" : " ", in->names ? in->names[i] : "");
	if (!f || !f->elapsed_ns) {
		lb_add(b, "  ", "(not yet)");
		return;
	}
	lb_add(b, "  ", "%s/s", units_fmt_rate(a, sizeof a, f->achieved_per_s));
	lb_add(b, "  ", "p99 %s", dur(c, sizeof c, f->phase_p99_ns));
	lb_add(b, "  ", "errors %s", units_fmt_thousands(d, sizeof d, (double)f->errors_total, 0));
}

size_t cli_live_render(const struct cli_live_in *in, int cols, int rows,
		       char lines[][CLI_LIVE_LINE_CAP])
{
	if (cols < 2 || rows < 2)
		return 0;
	size_t width = (size_t)cols - 1 < MAX_COLS ? (size_t)cols - 1 : MAX_COLS;
	size_t avail = (size_t)rows - 1 < CLI_LIVE_MAX_LINES ? (size_t)rows - 1
							     : CLI_LIVE_MAX_LINES;
	const struct live_figs *f = in->cur;
	char core[8][CLI_LIVE_LINE_CAP];
	size_t nc = 0;
	struct lb b;
	char lbl[32];
	lb_init(&b, core[nc++], width);
	line_head(in, &b);
	lb_init(&b, core[nc++], width);
	line_rate(f, &b);
	lb_init(&b, core[nc++], width);
	line_latency(&b, "last second", f->sec_p50_ns, f->sec_p99_ns, f->sec_max_ns, f->sec_n);
	snprintf(lbl, sizeof lbl, "%s", f->phase == LIVE_WARMUP ? "warm-up" : "measured");
	lb_init(&b, core[nc++], width);
	line_latency(&b, lbl, f->phase_p50_ns, f->phase_p99_ns, f->phase_max_ns, f->phase_n);
	lb_init(&b, core[nc++], width);
	line_status(f, &b);
	lb_init(&b, core[nc++], width);
	line_errors(f, &b);
	lb_init(&b, core[nc++], width);
	line_queue(f, &b);
	size_t n_core = nc < avail ? nc : avail;
	size_t n = 0;
	size_t extra = avail - n_core;
	if (in->n_steps) { /* the ladder above, its latest steps */
		size_t k = in->n_steps < extra ? in->n_steps : extra;
		for (size_t i = in->n_steps - k; i < in->n_steps; i++) {
			lb_init(&b, lines[n++], width);
			line_step(&in->steps[i], in->first_step + (uint32_t)i, &b);
		}
	}
	for (size_t i = 0; i < n_core; i++)
		memcpy(lines[n++], core[i], CLI_LIVE_LINE_CAP);
	if (in->n_variants > 1) {
		size_t k = in->n_variants < extra ? in->n_variants : extra;
		for (size_t i = 0; i < k; i++) {
			lb_init(&b, lines[n++], width);
			line_variant(in, i, &b);
		}
	}
	return n;
}

void cli_live_render_line(const struct cli_live_in *in, int cols, char *out, size_t cap)
{
	const struct live_figs *f = in->cur;
	char buf[CLI_LIVE_LINE_CAP], a[32], c[32], d[32], e[32], g[32];
	size_t width = cols > 1 && (size_t)cols - 1 < MAX_COLS ? (size_t)cols - 1 : 79;
	struct lb b;
	lb_init(&b, buf, width);
	lb_add(&b, "", "[%s%s %s]", in->cmd, "", live_phase_name(f->phase));
	if (f->step)
		lb_add(&b, " ", "step %u", f->step);
	lb_add(&b, " ", "%s", secs(a, sizeof a, f->elapsed_ns));
	lb_add(&b, "  ", "%s/s", units_fmt_rate(c, sizeof c, f->achieved_per_s));
	if (f->offered_per_s > 0)
		lb_add(&b, " ", "of %s/s", units_fmt_rate(g, sizeof g, f->offered_per_s));
	lb_add(&b, "  ", "p99 %s", dur(d, sizeof d, f->sec_p99_ns));
	lb_add(&b, "  ", "errors %s", units_fmt_thousands(e, sizeof e, (double)f->errors_total, 0));
	lb_add(&b, "  ", "backlog %llu", (unsigned long long)f->backlog);
	snprintf(out, cap, "%s", buf);
}

/* ---- the terminal ---------------------------------------------------------- */

static volatile sig_atomic_t winch_seen;

static void on_winch(int sig)
{
	(void)sig;
	winch_seen = 1;
}

struct cli_live {
	enum cli_live_mode mode;
	const char *cmd;
	bool ladder;
	const char *const *names;
	size_t n_variants, variant;
	struct live_track tr;
	struct live_figs last[RUNNER_MAX_VARIANTS];
	const struct live_figs *last_p[RUNNER_MAX_VARIANTS];
	struct cli_live_step steps[CLI_LIVE_MAX_STEPS];
	size_t n_steps;      /* in steps[] */
	uint32_t steps_seen; /* landed in all */
	int cols, rows;
	size_t drawn; /* lines on the screen now */
	size_t drawn_cols[CLI_LIVE_MAX_LINES];
	uint64_t next_ns;
	bool active;
	bool winch_set;
	struct sigaction old_winch;
	char lines[CLI_LIVE_MAX_LINES][CLI_LIVE_LINE_CAP];
	char out[CLI_LIVE_MAX_LINES * (CLI_LIVE_LINE_CAP + 8) + 64];
};

enum cli_live_mode cli_live_mode(bool quiet)
{
	if (quiet || !isatty(STDERR_FILENO))
		return CLI_LIVE_NONE;
	const char *term = getenv("TERM");
	if (!term || !*term || !strcmp(term, "dumb"))
		return CLI_LIVE_LINE;
	return CLI_LIVE_TTY;
}

bool cli_live_rows_hidden(FILE *text)
{
	int fd = fileno(text);
	struct stat st;
	if (fd < 0 || isatty(fd) || fstat(fd, &st))
		return false;
	return !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode);
}

static void read_size(struct cli_live *v)
{
	struct winsize ws;
	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
		v->cols = ws.ws_col;
		v->rows = ws.ws_row;
	} else {
		v->cols = 80;
		v->rows = 24;
	}
}

static void put_all(const char *s, size_t len)
{
	while (len) {
		ssize_t k = write(STDERR_FILENO, s, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* a view that cannot be written is no reason to stop */
		s += k;
		len -= (size_t)k;
	}
}

/* The escapes that bring the cursor back to the first drawn line's start:
 * each drawn line takes as many rows as the terminal now wraps it into (a
 * terminal made narrower re-flows them). */
static size_t up_to_top(const struct cli_live *v, char *o, size_t cap)
{
	size_t up = 0;
	for (size_t i = 0; i < v->drawn; i++) {
		size_t c = v->drawn_cols[i];
		up += c && v->cols > 0 ? (c + (size_t)v->cols - 1) / (size_t)v->cols : 1;
	}
	if (!up)
		return (size_t)snprintf(o, cap, "\r");
	return (size_t)snprintf(o, cap, "\r\033[%zuA", up);
}

static void view_in(const struct cli_live *v, struct cli_live_in *in)
{
	*in = (struct cli_live_in){.cmd = v->cmd,
				   .cur = &v->tr.figs,
				   .variant = v->variant,
				   .n_variants = v->n_variants,
				   .names = v->names,
				   .last = v->last_p,
				   .steps = v->ladder ? v->steps : NULL,
				   .n_steps = v->ladder ? v->n_steps : 0,
				   .first_step = v->steps_seen - (uint32_t)v->n_steps + 1};
}

static void draw(struct cli_live *v)
{
	struct cli_live_in in;
	view_in(v, &in);
	if (v->mode == CLI_LIVE_LINE) {
		char line[CLI_LIVE_LINE_CAP + 2];
		cli_live_render_line(&in, v->cols, line, CLI_LIVE_LINE_CAP);
		size_t n = strlen(line);
		line[n++] = '\n';
		put_all(line, n);
		return;
	}
	size_t n = cli_live_render(&in, v->cols, v->rows, v->lines);
	size_t len = v->drawn ? up_to_top(v, v->out, sizeof v->out) : 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v->lines[i]);
		if (len + l + 8 > sizeof v->out)
			break;
		memcpy(v->out + len, v->lines[i], l);
		len += l;
		memcpy(v->out + len, "\033[K\n", 4);
		len += 4;
		v->drawn_cols[i] = cli_live_cols(v->lines[i]);
	}
	memcpy(v->out + len, "\033[J", 3); /* what an earlier, longer view left */
	len += 3;
	v->drawn = n;
	put_all(v->out, len);
}

static void clear(struct cli_live *v)
{
	if (v->mode != CLI_LIVE_TTY || !v->drawn)
		return;
	size_t len = up_to_top(v, v->out, sizeof v->out);
	memcpy(v->out + len, "\033[J", 3);
	len += 3;
	put_all(v->out, len);
	v->drawn = 0;
}

struct cli_live *cli_live_open(enum cli_live_mode mode, const char *cmd, bool ladder,
			       const char *const *names, size_t n_variants)
{
	if (mode == CLI_LIVE_NONE)
		return NULL;
	struct cli_live *v = calloc(1, sizeof *v);
	if (!v)
		return NULL;
	v->mode = mode;
	v->cmd = cmd;
	v->ladder = ladder;
	v->names = names;
	v->n_variants = n_variants ? n_variants : 1;
	if (v->n_variants > RUNNER_MAX_VARIANTS)
		v->n_variants = RUNNER_MAX_VARIANTS;
	read_size(v);
	if (mode == CLI_LIVE_TTY) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_winch;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		winch_seen = 0;
		v->winch_set = !sigaction(SIGWINCH, &sa, &v->old_winch);
	}
	return v;
}

void cli_live_begin(struct cli_live *v, struct engine *e, const struct runner_at *at)
{
	if (!v)
		return;
	struct engine_live now;
	engine_live(e, &now);
	uint64_t t = clock_now_ns();
	v->variant = at && at->variant < v->n_variants ? at->variant : 0;
	live_track_begin(&v->tr, &now, t, at && at->in_ramp ? at->step : 0,
			 at && at->in_ramp ? at->planned_steps : 0, at ? at->offered_per_s : 0);
	struct engine_progress p;
	engine_progress(e, &p);
	if (!p.warmup_ns) /* no warm-up: the measured phase is the step */
		live_track_phase_start(&v->tr, &now);
	v->next_ns = t + NS_PER_S;
	v->active = true;
	if (v->mode == CLI_LIVE_TTY && v->ladder && v->n_steps)
		draw(v); /* at once: the ladder and the step under way */
}

void cli_live_tick(struct cli_live *v, struct engine *e)
{
	if (!v || !v->active)
		return;
	if (winch_seen) {
		winch_seen = 0;
		read_size(v);
		if (v->mode == CLI_LIVE_TTY && v->drawn)
			draw(v);
	}
	struct engine_live now;
	struct engine_progress p;
	if (v->tr.phase == LIVE_WARMUP) { /* the measured phase's start, to a slice */
		engine_progress(e, &p);
		if (!p.in_warmup) {
			engine_live(e, &now);
			live_track_phase_start(&v->tr, &now);
		}
	}
	uint64_t t = clock_now_ns();
	if (t < v->next_ns)
		return;
	engine_live(e, &now);
	engine_progress(e, &p);
	live_track_tick(&v->tr, &now, &p, t);
	v->next_ns += NS_PER_S;
	if (v->next_ns <= t)
		v->next_ns = t + NS_PER_S;
	draw(v);
}

void cli_live_end(struct cli_live *v)
{
	if (!v || !v->active)
		return;
	clear(v);
	v->active = false;
	if (v->variant < RUNNER_MAX_VARIANTS) {
		v->last[v->variant] = v->tr.figs;
		v->last_p[v->variant] = &v->last[v->variant];
	}
}

void cli_live_ramp_step(struct cli_live *v, const struct ramp_step *s)
{
	if (!v)
		return;
	if (v->n_steps == CLI_LIVE_MAX_STEPS) {
		memmove(v->steps, v->steps + 1, (CLI_LIVE_MAX_STEPS - 1) * sizeof v->steps[0]);
		v->n_steps--;
	}
	struct cli_live_step *c = &v->steps[v->n_steps++];
	v->steps_seen++;
	struct slo_measure m;
	double pct[RESULT_MAX_OUTCOMES];
	ramp_step_measure(&s->run, 0, pct, &m);
	c->offered_per_s = s->offered_per_s;
	c->achieved_per_s = report_achieved_rate(&s->run);
	c->p99_ns = m.p99_ns;
	c->error_pct = m.error_pct;
	c->refine = s->refine;
	const char *why = s->verdict.inconclusive ? "Inconclusive" : s->verdict.reason;
	size_t wl = strnlen(why, sizeof c->verdict - 1);
	memcpy(c->verdict, why, wl);
	c->verdict[wl] = 0;
}

void cli_live_close(struct cli_live *v)
{
	if (!v)
		return;
	clear(v);
	if (v->winch_set)
		sigaction(SIGWINCH, &v->old_winch, NULL);
	free(v);
}
