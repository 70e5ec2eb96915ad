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
 *   table: {size: 4096, seed: 1, mix: {...}}      # run/ramp: a mix spec inline
 *
 * Every key is checked against the options of its kind; errors name
 * FILE:LINE and what was expected. An inline `table:` is parsed and checked
 * here (its mix spec as table_mix_from_yaml reads it) and built into a
 * request table by scenario_table; it stands instead of `target:` (the
 * spec's base_url names the target). */
#ifndef PACER_PLAN_SCENARIO_H
#define PACER_PLAN_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

struct table;
struct table_limits;
struct table_mix;

#define SCENARIO_MAX_ARGS 256
#define SCENARIO_FILE_CAP (1u << 20)

struct scenario {
	char kind[16];           /* "run", "ramp" or "compare" */
	char *args[SCENARIO_MAX_ARGS]; /* argv for the subcommand, args[0] = kind (owned) */
	int nargs;
	char name[128];          /* optional `name:` */
	/* `table: {mix: SPEC, size: N, seed: S}` (run, ramp only): the parsed
	 * spec (owned), or NULL when the file has no table */
	struct table_mix *table_mix;
	uint64_t table_size;     /* 1 .. TABLE_DEFAULT_MAX_REQUESTS */
	uint64_t table_seed;     /* default 1, as pacer table generate */
	unsigned table_line;     /* line of the `table:` key, for messages */
	char *source;            /* the source given to scenario_parse (owned) */
};

/* Parse scenario text (`source` names it in messages). 0, or a negative code
 * with one line "SOURCE:LINE: what was expected" in err (-ENOMEM: the
 * message may be empty). A key given twice in any mapping (or one setting
 * under both spellings, requests_file and requests-file) is PACER_EPARSE
 * "SOURCE:LINE: duplicate key 'K' (first at line N...)"; flags take the YAML
 * 1.2 booleans (util/yaml_get.h). On error nothing is left to free. Parsing
 * is cheap and bounded: an inline table is checked but not built. */
int scenario_parse(const char *text, size_t len, const char *source, struct scenario *out,
		   char *err, size_t errcap);

/* Build the scenario's inline table (table_mix_generate with its size and
 * seed): the same requests, bytes and hash as `pacer table generate --spec`
 * given the same spec, size and seed. lim may be NULL (defaults). *out is
 * the new table (the caller owns it; table_free), or NULL with 0 returned
 * when the scenario has no table. A negative code with one line
 * "SOURCE:LINE: table: ..." in err. */
int scenario_table(const struct scenario *s, const struct table_limits *lim, struct table **out,
		   char *err, size_t errcap);

/* Free what scenario_parse allocated (args, the table spec). Idempotent. */
void scenario_free(struct scenario *s);

#endif
