/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control's settings: the module parameters a new device
 * takes; the sender engine (proto/sender.c) runs the windows and pacing.
 */
#ifndef METAROCE_CONGESTION_H
#define METAROCE_CONGESTION_H

#include "metaroce.h"

u32 mr_congestion_cc_stamp(void);
bool mr_congestion_dev_enabled(const struct mr_dev_settings *set);
void mr_congestion_defaults(struct mr_cc_params *prm);

#endif /* METAROCE_CONGESTION_H */
