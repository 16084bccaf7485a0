/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `rdma link add/delete` and the netdev events that drive a device.
 */
#ifndef METAROCE_LINK_H
#define METAROCE_LINK_H

#include "metaroce.h"

int mr_link_init(void);
void mr_link_exit(void);

#endif /* METAROCE_LINK_H */
