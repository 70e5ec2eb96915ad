/* pacer — engine: the state of a QUIC connection (struct eng_quic), shared
 * by the transport (xport_quic.c) and its stream interface for the
 * protocol (xport_quic_streams.c). Private to those two files.
 *
 * The stream interface is a file of its own so that a harness can stand in
 * for it: tests/fuzz/fuzz_h3.c drives HTTP/3 (proto_h3.c) over streams it
 * makes up, without packets or a handshake. */
#ifndef PACER_ENGINE_XPORT_QUIC_INT_H
#define PACER_ENGINE_XPORT_QUIC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "net/quic.h"
#include "net/udp.h"

struct worker;
struct conn;

struct eng_quic {
	struct quic_client q;
	struct worker *w;
	struct conn *c;
	struct net_addr local;
	struct udp_caps caps;
	uint64_t rx_rt;       /* the stamp of the datagram being fed */
	uint64_t recovery_ts; /* the last congestion recovery start seen */
	size_t pto_seen;
	bool got_pkt; /* something came from the server */
	bool hs_done;
	bool reset;        /* a stateless reset came */
	bool stalled;      /* the last write stopped on the congestion window */
	bool failed;       /* eng_quic_fail: end after the packets being processed */
	bool ended;        /* its end is counted */
	bool silent;       /* ended so that nothing more may be sent (draining, idle) */
	int end_err;       /* the ngtcp2 error it ended on (a CONNECTION_CLOSE to send) */
	uint64_t app_code; /* eng_quic_fail's code */
};

#endif
