/* pacer — a check before an --h2c run that the target speaks HTTP/2 over
 * cleartext with prior knowledge (blocking; not for the hot path). */
#ifndef PACER_NET_H2PROBE_H
#define PACER_NET_H2PROBE_H

#include <stddef.h>
#include <stdint.h>

struct net_addr;

/* Connect to a, send the HTTP/2 connection preface and an empty SETTINGS
 * frame, and read the server's first frame header, at most timeout_ns in
 * all. 0 when it is a SETTINGS frame; -EPROTO with a one-line reason in
 * reason[cap] ("the server answered in HTTP/1.x ..."); -ETIMEDOUT,
 * -ECONNREFUSED or another negative errno. */
int net_h2c_probe(const struct net_addr *a, uint64_t timeout_ns, char *reason, size_t cap);

#endif
