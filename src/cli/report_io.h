/* pacer — the file and folder I/O of reports: report/ reads a result from a
 * buffer and writes to a stream it is handed (report/result_read.h,
 * report/render.h); reading the result file and creating the report folder
 * and its files happen here. */
#ifndef PACER_CLI_REPORT_IO_H
#define PACER_CLI_REPORT_IO_H

#include <stddef.h>

#include "report/result_read.h"

/* Read the result file at path (a regular file of at most RESULT_READ_CAP
 * bytes, refused by its size before any of it is read) and check it with
 * result_read_mem. 0 and *r (release with result_free); else *r zeroed, a
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

/* The same with a trend chart (NULL: none; report/render.h). */
struct report_trend;
int cli_report_folder_write_trend(const struct loaded_result *r, const struct report_trend *trend,
				  const char *dir, char *err, size_t errlen);

/* cli_result_load of result_path, then cli_report_folder_write. */
int cli_report_folder_write_from(const char *result_path, const char *dir, char *err,
				 size_t errlen);

/* --report-dir DIR: create DIR now (so a bad path fails before the load)
 * and, when there is no --out, point *out_path at DIR/result.json (in
 * buf[cap]). dir NULL: nothing. cmd names the subcommand in the message.
 * 0, or EXIT_USAGE after printing one line. */
int cli_report_dir_prepare(const char *cmd, const char *dir, const char **out_path, char *buf,
			   size_t cap);

/* After the JSON result is written to json_path: write the reports
 * (docs/report.md) into dir (NULL: nothing). 0, or EXIT_RUNTIME after
 * printing one line. */
int cli_report_dir_write(const char *cmd, const char *dir, const char *json_path);

#endif
