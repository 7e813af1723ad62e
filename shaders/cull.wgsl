// Culling's lists: one workgroup per page gathers, in page order, the characters the clock (or
// fused) stage marked (Output.evaluate, shaders/shared/culling.wgsl) into the page's lists — the
// evaluated ones, then the drawn ones, and from the drawn list's room's end backwards those drawn
// with their VAT — copies every character's marks after them (for a renderer's vertex stage), and
// sizes the indirect dispatches of the stages after it (a workgroup per CHARACTERS_PER_WORKGROUP
// evaluated instances, or a thread per instance) and the count a culled draw reads. A scan over WORKGROUP_SIZE characters at
// a time. CPU mirror: cpu::cull::cull.

#import wgpu_anim::types::{CULL_MAX_WORKGROUPS, MARK_DRAWN, MARK_EVALUATE, MARK_VAT, WORKGROUP_SIZE}
#import wgpu_anim::bindings::{character_state, frame, visible}
#import wgpu_anim::math::CHARACTERS_PER_WORKGROUP

var<workgroup> scan: array<u32, WORKGROUP_SIZE>;

// Workgroups (x, y, 1) for `n`, split over y past CULL_MAX_WORKGROUPS (gpu::split_dispatch).
fn groups_for(n: u32) -> vec4<u32> {
    if (n <= CULL_MAX_WORKGROUPS) {
        return vec4<u32>(n, 1u, 1u, 0u);
    }
    let y = (n + CULL_MAX_WORKGROUPS - 1u) / CULL_MAX_WORKGROUPS;
    return vec4<u32>((n + y - 1u) / y, y, 1u, 0u);
}

// The three counts packed in a scan entry.
fn unpack_counts(packed: u32) -> vec3<u32> {
    return vec3<u32>(packed & 0x3ffu, (packed >> 10u) & 0x3ffu, packed >> 20u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn cull(@builtin(local_invocation_index) lid: u32) {
    let n = frame.instance_count;
    // Three sections of the page's capacity each: the evaluated list, the drawn list (and the
    // VAT list backwards from its last entry: a character is drawn one way or the other), and
    // the marks. The buffer holds at least three times the capacity (Resource::instance_sections;
    // an empty page's buffer is rounded up, which leaves the capacity it rounds to).
    let drawn_offset = arrayLength(&visible.list) / 3u;
    let room = 2u * drawn_offset;
    // Evaluated, drawn and VAT in bits 0, 10 and 20 (a workgroup's count fits 10 bits): one
    // scan counts all three.
    var listed = vec3<u32>(0u);
    for (var first = 0u; first < n; first += WORKGROUP_SIZE) {
        let i = first + lid;
        var marks = 0u;
        if (i < n) {
            marks = character_state[frame.output_base + 8u * i + 3u].z;
            visible.list[room + i] = marks;
        }
        let packed = select(0u, 1u, (marks & MARK_EVALUATE) != 0u) | select(0u, 1u << 10u, (marks & MARK_DRAWN) != 0u)
            | select(0u, 1u << 20u, (marks & MARK_VAT) != 0u);
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
        let sums = unpack_counts(scan[lid]);
        if ((marks & MARK_EVALUATE) != 0u) {
            visible.list[listed.x + sums.x - 1u] = i;
        }
        if ((marks & MARK_DRAWN) != 0u) {
            visible.list[drawn_offset + listed.y + sums.y - 1u] = i;
        }
        if ((marks & MARK_VAT) != 0u) {
            visible.list[room - listed.z - sums.z] = i;
        }
        listed += unpack_counts(scan[WORKGROUP_SIZE - 1u]);
        workgroupBarrier();
    }
    if (lid == 0u) {
        visible.count = listed.x;
        visible.drawn_count = listed.y;
        visible.drawn_offset = drawn_offset;
        visible.vat_count = listed.z;
        // The passes that run workgroups of characters: CHARACTERS_PER_WORKGROUP to one.
        visible.instance_groups = groups_for((listed.x + CHARACTERS_PER_WORKGROUP - 1u) / CHARACTERS_PER_WORKGROUP);
        visible.thread_groups = groups_for((listed.x + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE);
        visible.drawn_groups = groups_for((listed.y + CHARACTERS_PER_WORKGROUP - 1u) / CHARACTERS_PER_WORKGROUP);
    }
}
