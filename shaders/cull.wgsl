// Culling's list: one workgroup per page gathers, in page order, the characters the clock (or
// fused) stage marked for evaluation (Output.evaluate, shaders/shared/culling.wgsl) into the
// page's list, and sizes the indirect dispatches of the stages after it (one workgroup per listed
// instance; one thread per listed instance) and the count a culled draw reads. A scan over
// WORKGROUP_SIZE characters at a time. CPU mirror: cpu::cull::cull.

#import wgpu_anim::types::{CULL_MAX_WORKGROUPS, WORKGROUP_SIZE}
#import wgpu_anim::bindings::{character_state, frame, visible}

var<workgroup> scan: array<u32, WORKGROUP_SIZE>;

// Workgroups (x, y, 1) for `n`, split over y past CULL_MAX_WORKGROUPS (gpu::split_dispatch).
fn groups_for(n: u32) -> vec4<u32> {
    if (n <= CULL_MAX_WORKGROUPS) {
        return vec4<u32>(n, 1u, 1u, 0u);
    }
    let y = (n + CULL_MAX_WORKGROUPS - 1u) / CULL_MAX_WORKGROUPS;
    return vec4<u32>((n + y - 1u) / y, y, 1u, 0u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn cull(@builtin(local_invocation_index) lid: u32) {
    let n = frame.instance_count;
    var listed = 0u;
    for (var first = 0u; first < n; first += WORKGROUP_SIZE) {
        let i = first + lid;
        var marked = 0u;
        if (i < n) {
            marked = character_state[frame.output_base + 8u * i + 3u].z;
        }
        // Inclusive prefix sum of the marks over the workgroup (Hillis and Steele).
        scan[lid] = marked;
        workgroupBarrier();
        for (var d = 1u; d < WORKGROUP_SIZE; d <<= 1u) {
            var below = 0u;
            if (lid >= d) {
                below = scan[lid - d];
            }
            workgroupBarrier();
            scan[lid] += below;
            workgroupBarrier();
        }
        if (marked != 0u) {
            visible.list[listed + scan[lid] - 1u] = i;
        }
        listed += scan[WORKGROUP_SIZE - 1u];
        workgroupBarrier();
    }
    if (lid == 0u) {
        visible.count = listed;
        visible.instance_groups = groups_for(listed);
        visible.thread_groups = groups_for((listed + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE);
    }
}
