/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The transport's timer: the only place that arms one. The engines set
 * deadlines (a path's tail probe or RTO, the end of an RNR wait); the
 * entry points call mr_timers_sync() before they drop the lock.
 */
#ifndef METAROCE_TIMERS_H
#define METAROCE_TIMERS_H

#include "xport.h"

void mr_timers_init(struct mr_xport *x);
void mr_timers_stop(struct mr_xport *x);
void mr_timers_sync(struct mr_xport *x);

#endif /* METAROCE_TIMERS_H */
