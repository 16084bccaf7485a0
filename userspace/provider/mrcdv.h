/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * soft-MetaRoCE direct verbs: what plain verbs cannot say, in the habits
 * of rdma-core's efadv.h and mlx5dv.h. Programs that use them link with
 * the provider, libmetaroce-rdmav34.so; programs that do not see no
 * change. Each call has a man page (mrcdv(7) lists them).
 */
#ifndef MRCDV_H
#define MRCDV_H

#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mrcdv_device_attr {
    uint64_t comp_mask;   /* 0: no optional field is known yet */
    uint32_t max_streams; /* streams an RC QP may carry */
    uint32_t reserved;
};

/* 0, or an errno: EOPNOTSUPP when @context is not a MetaRoCE device. */
int mrcdv_query_device(struct ibv_context *context, struct mrcdv_device_attr *attr, uint32_t inlen);

struct mrcdv_qp_init_attr {
    uint64_t comp_mask; /* 0 */
    uint32_t streams;   /* 0 or 1: one stream; up to max_streams */
    uint32_t reserved;  /* 0 */
};

/*
 * ibv_create_qp_ex() with streams: an RC QP whose messages complete in
 * order within each stream only. NULL with errno set on failure.
 */
struct ibv_qp *mrcdv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
                               struct mrcdv_qp_init_attr *mrc_attr, uint32_t inlen);

/* The streams @qp was created with; 1 for any other QP. */
uint32_t mrcdv_qp_streams(struct ibv_qp *qp);

/*
 * The stream of the request the last ibv_wr_*() call started, between
 * ibv_wr_start() and ibv_wr_complete(); stream 0 unless set. A stream
 * beyond the QP's fails the batch at ibv_wr_complete() with EINVAL.
 */
void mrcdv_wr_set_stream(struct ibv_qp_ex *qpx, uint16_t stream);

/* The stream of the completion being polled (ibv_start_poll() on). */
uint16_t mrcdv_wc_read_stream(struct ibv_cq_ex *cq);

/* The stream of a completion that ibv_poll_cq() returned. */
static inline uint16_t mrcdv_wc_stream(const struct ibv_wc *wc) {
    return (uint16_t)wc->slid;
}

#ifdef __cplusplus
}
#endif

#endif /* MRCDV_H */
