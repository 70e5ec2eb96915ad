/* pacer — the Kubernetes manifests of `pacer k8s` (docs/distributed.md): a
 * pure function of the values the command gathered, so that it can be
 * fuzzed and its output parsed back. Every value the user or the scenario
 * gave is written through one function, k8s_yaml_str, as a YAML
 * double-quoted scalar that every YAML 1.1 and 1.2 reader (libyaml,
 * PyYAML, the Go reader kubectl uses) reads back as exactly that value: no
 * value can end its scalar, open a mapping or start a document, whatever
 * it holds (line and paragraph separators U+2028 and U+2029, NEL U+0085,
 * quotes, '#', control bytes). */
#ifndef PACER_DIST_K8S_H
#define PACER_DIST_K8S_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define K8S_NAME_MAX 63 /* bytes of k8s_spec.name (a DNS label) */

struct k8s_spec {
	const char *name;            /* the Job's, the Service's, the prefix of the others' */
	const char *ns;              /* the namespace */
	const char *image, *cpu, *memory;
	const char *scenario_file;   /* the scenario's file name, as given (the header comment) */
	const char *text;            /* the scenario file, len bytes */
	size_t len;
	bool scenario_secret;        /* it sets a secret header (http/redact.h): in a Secret
	                              * NAME-scenario instead of a ConfigMap */
	const char *start_at;        /* --start-at mode: the time; NULL: the barrier */
	const char *barrier_timeout; /* the barrier: how long pod 0 waits for the others */
	const char *token;           /* the barrier: the Secret NAME-token's token */
	uint32_t segments;
};

/* Write s[0..len) to f as a YAML double-quoted scalar: '"' and '\' escaped,
 * \n and \t as such, every other C0 control byte, DEL, NUL and C1
 * control (U+0080..U+009F, NEL among them), U+2028, U+2029 and U+FEFF as
 * \xXX or \uXXXX, other valid UTF-8 as it is. 0, or -EILSEQ when s is not
 * valid UTF-8 (nothing is written: a YAML string cannot hold those bytes
 * exactly). */
int k8s_yaml_str(FILE *f, const char *s, size_t len);

/* Whether s[0..len) is valid UTF-8 (no overlong form, surrogate or code
 * point above U+10FFFF). */
bool k8s_utf8_ok(const char *s, size_t len);

/* The manifests of k, as `kubectl apply -f -` reads them: a ConfigMap
 * NAME-scenario holding the scenario byte for byte (a Secret of that name
 * when k->scenario_secret), and without k->start_at a Secret NAME-token
 * and a headless Service NAME, then the Indexed Job NAME. 0, -EILSEQ when
 * a value other than the scenario is not valid UTF-8 or -ENAMETOOLONG for
 * a name over K8S_NAME_MAX bytes (nothing is written then), or -EIO when
 * f failed. */
int k8s_write(FILE *f, const struct k8s_spec *k);

#endif
