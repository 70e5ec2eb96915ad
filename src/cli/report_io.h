/* pacer — the file and folder I/O of reports: report/ reads a result from a
 * buffer and writes to a stream it is handed (doc/read.h,
 * report/render.h); reading the result file and creating the report folder
 * and its files happen here. */
#ifndef PACER_CLI_REPORT_IO_H
#define PACER_CLI_REPORT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "doc/read.h"

/* Read the result file at path (a regular file of at most RESULT_READ_CAP
 * bytes, refused by its size before any of it is read) and check it with
 * result_read_mem. A file holding one framed result (--framed, a pod's
 * log: dist/frame.h) is read through its frame; several are refused
 * (PACER_EUNSUPPORTED: pacer merge takes them). 0 and *r (release with result_free); else *r zeroed, a
 * one-line message naming the file in err, and -errno (cannot read;
 * -EISDIR for a folder), PACER_ETOOBIG, or a code of result_read_mem. */
int cli_result_load(struct loaded_result *r, const char *path, char *err, size_t errlen);

/* The report folder of r (report/render.h: report_dir_*) written into dir,
 * created with its missing parents (mode 0777 & ~umask). Each file is
 * written atomically (temporary file + rename), so a reader never sees
 * half a file; files already there are replaced. 0, or a negative code
 * (-errno from mkdir/create/write, or a code of report_dir_write) with a
 * one-line message naming the folder or the file in err. */
int cli_report_folder_write(const struct loaded_result *r, const char *dir, char *err,
			    size_t errlen);

/* The terminal summary of a finished command: the len bytes of its JSON
 * result (the bytes --out gets) read back and rendered to out as `pacer
 * report RESULT --format text` renders that file, so the two print the
 * same text (report/txt.c is the one terminal renderer); when out is a
 * terminal, a run's or ramp's summary fits its rows (report_options
 * screen_rows: 24 when it does not say), the full text being the
 * report's. cmd names the subcommand in the message. 0, or EXIT_RUNTIME
 * after printing one line. */
int cli_summary_print(const char *cmd, const char *json, size_t len, FILE *out);
/* After the summary, once the files are written, one line: where the full
 * report is (every table, the conditions with their figures and advice,
 * the charts). With --report-dir, the folder's report.html and the result;
 * with --out FILE, the command that renders FILE's report; with neither,
 * how to keep them. Nothing when the JSON went to stdout ("-"). The
 * summary itself stays `pacer report --format text`'s. */
void cli_summary_next(FILE *out, const char *out_path, const char *report_dir);
/* The same with a trend chart (NULL: none; report/render.h). */
struct report_trend;
int cli_report_folder_write_trend(const struct loaded_result *r, const struct report_trend *trend,
				  const char *dir, char *err, size_t errlen);

/* cli_result_load of result_path, then cli_report_folder_write. */
int cli_report_folder_write_from(const char *result_path, const char *dir, char *err,
				 size_t errlen);

/* Whether --report-dir names "-" (stdout cannot take a folder): then one
 * line naming cmd is printed. */
bool cli_report_dir_refused(const char *cmd, const char *dir);

/* --report-dir DIR ("-" refused): create DIR now (so a bad path fails before the load)
 * and, when there is no --out, point *out_path at DIR/result.json (in
 * buf[cap]). dir NULL: nothing. cmd names the subcommand in the message.
 * 0, or EXIT_USAGE after printing one line. */
int cli_report_dir_prepare(const char *cmd, const char *dir, const char **out_path, char *buf,
			   size_t cap);

/* Why an output cannot be written, from afile's -errno: err_name's words,
 * or for -ENXIO "a FIFO that no process reads (...)". */
const char *cli_output_why(int rc);

/* Every output path of a measuring command, checked before the load
 * (util/afile.h afile_check: a folder that can be written, a device or FIFO
 * with write permission, an open /dev/fd/N); NULL paths are skipped. opt[i]
 * names the option of path[i] in the message. 0, or EXIT_USAGE after
 * printing one line naming the option, the path and why. */
int cli_outputs_check(const char *cmd, const char *const *opt, const char *const *path,
		      size_t n);

/* The JSON result a writer produces, rendered into memory once: 0 and
 * *buf[*len] (the caller frees *buf), so that --out, --report-dir, the
 * history and the terminal summary (cli_summary_print) all get the same
 * bytes; else EXIT_RUNTIME after printing one line, *buf NULL. */
int cli_result_render(const char *cmd, int (*write)(FILE *f, const void *arg), const void *arg,
		      char **buf, size_t *len);
/* A JSON result already rendered (buf[len], borrowed; cli_result_render)
 * written to out_path (NULL: nowhere; atomically over a regular file or a
 * new name, in place to a device, FIFO or /dev/fd/N, stdout for "-") and,
 * when dir, into the report folder (cli_report_folder_write), so
 * --report-dir works when --out is a pipe. 0, or EXIT_RUNTIME after printing
 * one line. */
int cli_result_emit_buf(const char *cmd, const char *buf, size_t len, const char *out_path,
			const char *dir);

#endif
