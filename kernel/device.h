/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ib_device and its port, and the verbs that describe them.
 */
#ifndef METAROCE_DEVICE_H
#define METAROCE_DEVICE_H

#include "metaroce.h"

int mr_device_add(const char *ibdev_name, struct net_device *ndev);
void mr_device_port_update(struct mr_dev *dev, struct net_device *ndev);
enum ib_port_state mr_device_port_state(struct mr_dev *dev);

#endif /* METAROCE_DEVICE_H */
