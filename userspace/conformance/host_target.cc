// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The host target: being written.
#include "target.h"

namespace conform {
std::unique_ptr<Target> MakeHostTarget() { return nullptr; }
} // namespace conform
