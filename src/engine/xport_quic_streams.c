/* pacer — engine: QUIC's streams for the protocol over it (HTTP/3,
 * proto_h3.c): opening, credit, consumption, shutdown, losses, and the
 * protocol's failure of its connection (engine_int.h declares them; the
 * transport itself is xport_quic.c). A file of its own so that the HTTP/3
 * fuzz harness (tests/fuzz/fuzz_h3.c) can stand in for it. */
#include <errno.h>

#include <ngtcp2/ngtcp2.h>

#include "engine/engine_int.h"
#include "engine/xport_quic_int.h"

void eng_quic_fail(struct worker *w, struct conn *c, uint64_t code, const char *reason)
{
	struct eng_quic *q = c->quic;
	if (!q || q->failed || q->ended)
		return;
	q->failed = true;
	q->app_code = code;
	phase_stats_tls_reason(eng_conn_error(w, c->host, ERRK_PROTOCOL, clock_now_ns()), reason);
}

int eng_quic_open_bidi(struct conn *c, int64_t *sid, void *ud)
{
	int rv = ngtcp2_conn_open_bidi_stream(c->quic->q.conn, sid, ud);
	return rv == 0 ? 0 : rv == NGTCP2_ERR_STREAM_ID_BLOCKED ? -EAGAIN : -EIO;
}

int eng_quic_open_uni(struct conn *c, int64_t *sid)
{
	int rv = ngtcp2_conn_open_uni_stream(c->quic->q.conn, sid, NULL);
	return rv == 0 ? 0 : rv == NGTCP2_ERR_STREAM_ID_BLOCKED ? -EAGAIN : -EIO;
}

uint64_t eng_quic_streams_left(const struct conn *c)
{
	return ngtcp2_conn_get_streams_bidi_left(c->quic->q.conn);
}

uint64_t eng_quic_uni_left(const struct conn *c)
{
	return ngtcp2_conn_get_streams_uni_left(c->quic->q.conn);
}

void eng_quic_consumed(struct conn *c, int64_t sid, size_t n)
{
	ngtcp2_conn_extend_max_stream_offset(c->quic->q.conn, sid, n);
	ngtcp2_conn_extend_max_offset(c->quic->q.conn, n);
}

void eng_quic_shutdown_stream(struct conn *c, int64_t sid, uint64_t code)
{
	(void)ngtcp2_conn_shutdown_stream(c->quic->q.conn, sid, code);
}

void eng_quic_shutdown_read(struct conn *c, int64_t sid, uint64_t code)
{
	(void)ngtcp2_conn_shutdown_stream_read(c->quic->q.conn, sid, code);
}

void eng_quic_shutdown_write(struct conn *c, int64_t sid, uint64_t code)
{
	(void)ngtcp2_conn_shutdown_stream_write(c->quic->q.conn, sid, code);
}

uint64_t eng_quic_stream_lost(const struct conn *c, int64_t sid)
{
	return ngtcp2_conn_get_stream_loss_count(c->quic->q.conn, sid);
}

uint64_t eng_quic_rx_rt(const struct conn *c)
{
	return c->quic ? c->quic->rx_rt : 0;
}
