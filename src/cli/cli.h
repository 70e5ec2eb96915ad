/* pacer — subcommands and exit codes. */
#ifndef PACER_CLI_CLI_H
#define PACER_CLI_CLI_H

enum {
	EXIT_OK = 0,
	EXIT_SLO_FAILED = 1,   /* ramp: the SLO failed before the required rate; run --slo:
	                        * the SLO failed; diff: a --fail-on rule fired */
	EXIT_USAGE = 2,        /* bad options, URL, unreachable target */
	EXIT_RUNTIME = 3,      /* pacer itself failed (memory, output file) */
	EXIT_GENERATOR_LIMITED = 4, /* results written, but the generator, not the target,
	                             * was the limit (gencheck); --limited-ok: 0 instead */
	EXIT_INTERRUPTED = 130 /* Ctrl-C: results were still written */
};

struct table;

int cmd_run(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_ramp(int argc, char **argv);
/* cmd_run / cmd_ramp with a request table built by the caller (pacer bench:
 * a scenario's inline mix), used unless the options name other requests
 * (measure.offered_table). table is borrowed: the caller frees it after. */
int cmd_run_offered(int argc, char **argv, struct table *table);
int cmd_ramp_offered(int argc, char **argv, struct table *table);
int cmd_compare(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* pacer table hash|show|generate (docs/tables.md); argv[0] is "table". */
int cmd_table(int argc, char **argv);
/* pacer import har FILE.har [--keep-cookies] [-o FILE]; argv[0] is "import". */
int cmd_import(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* pacer calibrate: the machine's floor, without load (docs/selfcheck.md). */
int cmd_calibrate(int argc, char **argv);
/* pacer bench: the scenario file being run (NULL otherwise), recorded in the
 * plan of the command it runs (cli_options_apply). */
extern const char *cli_bench_scenario;

/* pacer merge SEGMENT.json... -o FILE (docs/distributed.md); argv[0] is "merge". */
int cmd_merge(int argc, char **argv);
/* pacer k8s SCENARIO.yaml --segments N --image IMAGE (docs/distributed.md): prints the
 * manifests; argv[0] is "k8s". */
int cmd_k8s(int argc, char **argv);
/* pacer history FILE.db [show|export ID] (docs/history.md); argv[0] is "history". */
int cmd_history(int argc, char **argv);
/* pacer diff OLD NEW [--fail-on RULES] (docs/history.md); argv[0] is "diff". */
int cmd_diff(int argc, char **argv);

#endif
