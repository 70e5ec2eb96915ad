/* pacer — internals of the embedded target's HTTP/3, shared by quic.c (the
 * UDP socket, QUIC connections by ngtcp2, their timers) and h3.c (an
 * nghttp3 server session per connection, its request streams answered as
 * the plan says). Everything here runs on the thread that owns the
 * connection. Not for use outside src/target. */
#ifndef PACER_TARGET_H3_INT_H
#define PACER_TARGET_H3_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "target/server_int.h"

#define H3_CID_LEN 18   /* the connection IDs the server issues: a key, then random bytes */
#define H3_KEY_LEN 8    /* every CID of one connection begins with its key */
#define H3_HT_SIZE 4096 /* hash buckets per thread (chained) */

/* One QUIC connection, with its HTTP/3 session once the handshake lets
 * the server open its control and QPACK streams. */
struct h3c {
	struct theap_node tn; /* first: its timer on w->qheap */
	struct worker *w;
	struct h3c *prev, *next; /* w->h3->live */
	struct h3c *chain[2];    /* hash chains: [0] by key, [1] by the client's first DCID */
	uint8_t key[H3_KEY_LEN];
	ngtcp2_cid odcid; /* the DCID of the client's first Initial */
	ngtcp2_conn *q;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	nghttp3_conn *h3; /* NULL until the session is made */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	struct tstream_set s;      /* its request streams (tstream.h) */
	uint64_t nreq;             /* requests answered */
	uint64_t last_act_ns;      /* a request's bytes went either way (idleness) */
	bool dirty;                /* on w->h3->dirty: to be flushed */
	bool established;          /* the handshake completed (counted) */
	bool goaway_due;           /* close_after reached: GOAWAY at the next flush */
	bool goaway;               /* close_after: GOAWAY sent */
	bool failed;               /* a callback failed: close it after the packet */
	uint64_t fail_code;        /* ... with this HTTP/3 error code */
	struct h3c *dirty_next;
};

struct h3_worker {
	struct h3c **ht; /* H3_HT_SIZE chains */
	struct h3c *live;
	struct h3c *dirty;
	struct tstream_pool pool; /* its request streams (tstream.h) */
	struct net_addr local; /* the socket's own address (the paths' local end) */
	/* datagram buffers, made once */
	uint8_t *rx;
	struct mmsghdr *rmsgs;
	struct iovec *riov;
	struct sockaddr_storage *from;
	uint8_t *tx;
	size_t tx_len[64];
	struct mmsghdr *tmsgs;
	struct iovec *tiov;
};

/* c has packets to send: on its thread's dirty list, flushed by quic.c
 * after this round (an ended connection, c->q NULL, is not put there). */
static inline void h3_dirty(struct h3c *c)
{
	if (c->dirty || !c->q)
		return;
	c->dirty = true;
	c->dirty_next = c->w->h3->dirty;
	c->w->h3->dirty = c;
}

/* h3.c: the HTTP/3 session of c (its control and QPACK streams opened and
 * bound). 0 or an ngtcp2 / nghttp3 error. */
int h3_session_new(struct h3c *c);
/* Release c's streams (their timers too) and its session. */
void h3_session_free(struct h3c *c);
/* Run w's expired stream timers (their connections marked dirty). */
void h3_stream_timers(struct worker *w);
/* Free w's kept stream records. */
void h3_worker_free_streams(struct worker *w);

#endif
