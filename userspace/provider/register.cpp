// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Registration with libibverbs. libibverbs dlopen()s
// libmetaroce-rdmav34.so (named by /etc/libibverbs.d/metaroce.driver) and
// this constructor hands it our device ops. Kept out of metaroce.cpp so that
// unit tests can link the provider without registering it.
//
// rdma-core's PROVIDER_DRIVER() macro also defines an alias for static
// builds; a dlopen()ed provider needs only the constructor.
#include "metaroce.h"

namespace {

__attribute__((constructor)) void metaroce_register_driver() noexcept {
    metaroce::debug("provider loaded, registering driver \"%s\" (uverbs ABI %u..%u)",
                    metaroce::kDeviceOps.name, metaroce::kDeviceOps.match_min_abi_version,
                    metaroce::kDeviceOps.match_max_abi_version);
    verbs_register_driver_34(&metaroce::kDeviceOps);
}

} // namespace
