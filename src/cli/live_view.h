/* pacer — the live view on stderr during a measurement (stdout stays for
 * data). On a terminal: several lines redrawn in place about once a second,
 * fitted to the terminal's width and height (re-read after SIGWINCH), and
 * cleared at the end of each step so that what follows starts clean. With
 * TERM=dumb: one plain line a second. Not a terminal, or --quiet: nothing.
 * The figures are metrics/live.h's (engine_live and engine_progress); the
 * layout is cli_live_render, a pure function of them. CLI layer. */
#ifndef PACER_CLI_LIVE_VIEW_H
#define PACER_CLI_LIVE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h"
#include "metrics/live.h"
#include "result/ramp.h"
#include "runner/runner.h"

#define CLI_LIVE_MAX_LINES 24 /* lines of a view at most */
#define CLI_LIVE_LINE_CAP 512 /* bytes of a line (the width is capped below it) */
#define CLI_LIVE_MAX_STEPS 64 /* ramp steps the ladder keeps (the latest) */

enum cli_live_mode { CLI_LIVE_NONE = 0, CLI_LIVE_LINE, CLI_LIVE_TTY };

/* A ramp step that landed: its row in the ladder. */
struct cli_live_step {
	double offered_per_s, achieved_per_s;
	uint64_t p99_ns;
	double error_pct;
	bool refine;
	char verdict[48]; /* "pass", "FAIL p99 ...", "inconclusive" */
};

/* What a view shows (the render's input). */
struct cli_live_in {
	const char *cmd;             /* "run", "ramp", "compare" */
	const struct live_figs *cur; /* the measurement under way */
	size_t variant, n_variants;  /* compare: which, of how many */
	const char *const *names;    /* n_variants names (compare) */
	const struct live_figs *const
		*last; /* compare: each variant's latest figures (NULL: none yet) */
	const struct cli_live_step *steps; /* ramp: the ladder so far */
	size_t n_steps;
	uint32_t first_step; /* the 1-based number of steps[0] */
};

/* The view's lines for a terminal cols wide and rows high: at most rows - 1
 * lines (and CLI_LIVE_MAX_LINES), each at most cols - 1 columns (a µ is one
 * column), none empty. Pure. Returns the number of lines. */
size_t cli_live_render(const struct cli_live_in *in, int cols, int rows,
		       char lines[][CLI_LIVE_LINE_CAP]);
/* The one line of TERM=dumb, at most cols - 1 columns. Pure. */
void cli_live_render_line(const struct cli_live_in *in, int cols, char *out, size_t cap);

/* Columns a UTF-8 string takes (one for each character). */
size_t cli_live_cols(const char *s);

struct cli_live;

/* Whether rows written to text are out of the person's sight, so that the
 * view should show a ramp's ladder itself: a file (or /dev/null), not a
 * terminal, and not a pipe or socket (`| tee` shows them). */
bool cli_live_rows_hidden(FILE *text);

/* Which view stderr gets: none with quiet or when stderr is no terminal,
 * one line a second with TERM=dumb, else the view. */
enum cli_live_mode cli_live_mode(bool quiet);

/* A view (NULL for CLI_LIVE_NONE, or out of memory: nothing is drawn).
 * ladder: a ramp's steps are shown in the view (their rows are not on the
 * terminal). names: n_variants names (borrowed), or NULL. Installs a
 * SIGWINCH handler on a terminal (restored by cli_live_close). */
struct cli_live *cli_live_open(enum cli_live_mode mode, const char *cmd, bool ladder,
			       const char *const *names, size_t n_variants);
/* A measurement starts on e. */
void cli_live_begin(struct cli_live *v, struct engine *e, const struct runner_at *at);
/* Called often (each tenth of a second): once a second the figures, and
 * their drawing; after a resize, a redraw at once. */
void cli_live_tick(struct cli_live *v, struct engine *e);
/* The measurement ended: the view's lines are cleared. */
void cli_live_end(struct cli_live *v);
/* A ramp step was judged: into the ladder. */
void cli_live_ramp_step(struct cli_live *v, const struct ramp_step *s);
/* Clear what is drawn and free; NULL is fine. */
void cli_live_close(struct cli_live *v);

#endif
