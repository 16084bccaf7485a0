// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A host's planes as kernel/plane.c keeps them (the functions each comment
// names are the kernel's), over the kernel's proto/plane.c.
#include "planes.h"

#include "endpoint.h"

#include <algorithm>

using namespace ns3;

namespace mrscale {

NS_OBJECT_ENSURE_REGISTERED(PlaneTag);
NS_OBJECT_ENSURE_REGISTERED(ArrivedTag);

TypeId PlaneTag::GetTypeId() {
    static TypeId tid = TypeId("mrscale::PlaneTag")
                            .SetParent<Tag>()
                            .SetGroupName("MetaRoCE")
                            .AddConstructor<PlaneTag>();
    return tid;
}

TypeId ArrivedTag::GetTypeId() {
    static TypeId tid = TypeId("mrscale::ArrivedTag")
                            .SetParent<Tag>()
                            .SetGroupName("MetaRoCE")
                            .AddConstructor<ArrivedTag>();
    return tid;
}

// mr_plane_add(): every plane has carrier from the start.
HostPlanes::HostPlanes(uint32_t count, uint32_t time_scale)
    : count_(std::min<uint32_t>(count, MR_PLANES_MAX)), scale_(time_scale ? time_scale : 1) {
    for (uint32_t i = 0; i < count_; i++)
        mr_plane_init(&st_[i], true, Now());
    UpdateMask(Now());
}

// mr_xport_now() of a kernel whose clock runs --time-scale times slower.
uint64_t HostPlanes::Now() const {
    return NowNs() * scale_;
}

// mr_plane_update_mask().
void HostPlanes::UpdateMask(uint64_t now) {
    mr_plane_masks m;
    mr_plane_masks_init(&m);
    for (uint32_t i = 0; i < count_; i++)
        mr_plane_masks_add(&m, &st_[i], i, now);
    mr_plane_masks before{usable_, probing_, retry_};
    if (mr_plane_masks_lost(&before, &m))
        gen_++;
    usable_ = m.usable;
    probing_ = m.probing;
    retry_ = m.retry;
}

// mr_plane_usable_mask().
uint32_t HostPlanes::UsableMask(uint64_t now, uint32_t *probing) {
    if (now >= retry_)
        UpdateMask(now);
    *probing = probing_;
    return usable_;
}

uint32_t HostPlanes::Route(int arrived, uint32_t path) {
    uint32_t probing;
    const uint32_t usable = UsableMask(Now(), &probing);
    if (arrived >= 0 && static_cast<uint32_t>(arrived) < count_ && (usable >> arrived & 1))
        return static_cast<uint32_t>(arrived);
    return mr_plane_pick(path, count_, usable, probing);
}

void HostPlanes::Arrived(uint32_t plane) {
    if (plane >= count_ || st_[plane].state != MR_PLANE_TIMED_OUT)
        return;
    const uint64_t now = Now();
    const mr_plane_change change = mr_plane_rx(&st_[plane], now);
    UpdateMask(now);

    stats.ups += change == MR_PLANE_CAME_UP;
}

void HostPlanes::PathTimeout(const mr_paths *ps, const u8 *sent_on, uint32_t id) {
    if (count_ < 2)
        return;
    const uint64_t now = Now();
    uint32_t probing;
    const uint32_t usable = UsableMask(now, &probing);
    const uint32_t plane = mr_plane_pick(id, count_, usable, probing);
    if (!mr_plane_paths_timed_out(ps, sent_on, id, count_, usable, probing))
        return;
    const mr_plane_change change = mr_plane_timed_out(&st_[plane], now);
    UpdateMask(now);

    if (change == MR_PLANE_WENT_DOWN)
        stats.downs.push_back({static_cast<int64_t>(NowNs()), plane});
}

} // namespace mrscale
