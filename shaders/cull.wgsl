// Culling's lists: one workgroup per page gathers, in page order, the characters the clock (or
// fused) stage marked (Output.evaluate, shaders/shared/culling.wgsl) into the page's lists — the
// evaluated ones, then the drawn ones — and sizes the indirect dispatches of the stages after it
// (one workgroup, or one thread, per evaluated instance) and the count a culled draw reads. A
// scan over WORKGROUP_SIZE characters at a time. CPU mirror: cpu::cull::cull.

#import wgpu_anim::types::{CULL_MAX_WORKGROUPS, MARK_DRAWN, MARK_EVALUATE, WORKGROUP_SIZE}
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
    // The drawn list after the evaluated one: half the lists' room (twice the page's capacity).
    let drawn_offset = arrayLength(&visible.list) / 2u;
    // Evaluated in the low 16 bits, drawn in the high: one scan counts both.
    var listed = vec2<u32>(0u, 0u);
    for (var first = 0u; first < n; first += WORKGROUP_SIZE) {
        let i = first + lid;
        var marks = 0u;
        if (i < n) {
            marks = character_state[frame.output_base + 8u * i + 3u].z;
        }
        let packed = (marks & MARK_EVALUATE) | ((marks & MARK_DRAWN) << 15u);
        // Inclusive prefix sums of the marks over the workgroup (Hillis and Steele).
        scan[lid] = packed;
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
        let sums = vec2<u32>(scan[lid] & 0xffffu, scan[lid] >> 16u);
        if ((marks & MARK_EVALUATE) != 0u) {
            visible.list[listed.x + sums.x - 1u] = i;
        }
        if ((marks & MARK_DRAWN) != 0u) {
            visible.list[drawn_offset + listed.y + sums.y - 1u] = i;
        }
        let total = scan[WORKGROUP_SIZE - 1u];
        listed += vec2<u32>(total & 0xffffu, total >> 16u);
        workgroupBarrier();
    }
    if (lid == 0u) {
        visible.count = listed.x;
        visible.drawn_count = listed.y;
        visible.drawn_offset = drawn_offset;
        visible.instance_groups = groups_for(listed.x);
        visible.thread_groups = groups_for((listed.x + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE);
        visible.drawn_groups = groups_for(listed.y);
    }
}
