// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The trace points of trace.h, defined once for the whole module. */
#define CREATE_TRACE_POINTS
#include "trace.h"
