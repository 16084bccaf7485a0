// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The kernel's pure protocol units (kernel/proto/), compiled as C and linked
// into the scale model unchanged: the model runs the code metaroce.ko runs.
#pragma once

extern "C" {
#include "cc.h"
#include "coalesce.h"
#include "hello.h"
#include "path.h"
#include "plane.h"
#include "receiver.h"
#include "requester.h"
#include "requeue.h"
#include "responder.h"
#include "rto.h"
#include "sack.h"
#include "sender.h"
#include "share.h"
#include "window.h"
#include "wire.h"
}
