/* pacer — scenario files: one YAML file describing a whole benchmark, turned
 * into the command line of the subcommand it names (pure: no I/O here but
 * the parse of text given by the caller).
 *
 *   kind: ramp                      # run | ramp | compare
 *   target: http://127.0.0.1:8080/  # or self-contained[:PLAN], with path:
 *   steps: [500, 1000, 2000]        # any option of the subcommand, by its
 *   slo: p99<100ms,errors<1%        # long name; lists join with commas,
 *   header: {X-Env: bench}          # maps become repeated NAME=VALUE /
 *   variants: {A: http://..., B: "@plan.yaml"}   # "Name: value" options
 *
 * Every key is checked against the options of its kind; errors name
 * FILE:LINE and what was expected. */
#ifndef PACER_PLAN_SCENARIO_H
#define PACER_PLAN_SCENARIO_H

#include <stddef.h>

#define SCENARIO_MAX_ARGS 256
#define SCENARIO_FILE_CAP (1u << 20)

struct scenario {
	char kind[16];           /* "run", "ramp" or "compare" */
	char *args[SCENARIO_MAX_ARGS]; /* argv for the subcommand, args[0] = kind (owned) */
	int nargs;
	char name[128];          /* optional `name:` */
};

/* Parse scenario text (`source` names it in messages). 0, or a negative code
 * with one line "SOURCE:LINE: what was expected" in err. */
int scenario_parse(const char *text, size_t len, const char *source, struct scenario *out,
		   char *err, size_t errcap);
void scenario_free(struct scenario *s);

#endif
