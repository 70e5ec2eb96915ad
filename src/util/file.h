/* pacer — reading whole files with a hard cap. */
#ifndef PACER_UTIL_FILE_H
#define PACER_UTIL_FILE_H

#include <stddef.h>

/* Read all of `path` into a malloc'd buffer (NUL-terminated, the NUL not
 * counted in *len); "-" is standard input (read to its end, left open).
 * 0, -errno (-EISDIR for a folder), or PACER_ETOOBIG when over cap bytes. */
int file_read_all(const char *path, size_t cap, char **out, size_t *len);

/* How messages name an input path: "stdin" for "-", else path. */
const char *file_shown(const char *path);

/* mkdir -p: create dir and any missing parents (mode 0777 before the
 * umask). 0, -ENOTDIR when a part is not a folder, or another -errno. */
int file_mkdir_p(const char *dir);

#endif
