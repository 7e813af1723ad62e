// Footprints where feet land, made on the GPU from the animator's event log: this compute pass,
// after the animator's, reads the frame's foot-down events and the landing foot's socket matrix
// (written by the palette pass) and writes a mark into a ring, which `footprint_marks.wgsl` draws
// on the ground, fading with age. No CPU work per event. Rust: gpu::Footprints.

#import wgpu_anim::types::{Affine, EventRecord, MAX_SOCKETS}

// The animator's event log, read-only here: types.wgsl's EventLog with a plain count (Rust:
// layout::GpuEventLogHead, then the records).
struct EventLogRead {
    count: u32,
    overflow: u32,
    pad_a: u32,
    pad_b: u32,
    records: array<EventRecord>,
}

// A mark: the sole's centre on the ground and the time it landed (w); the foot's forward
// direction (xz) and the side (z: 1 left, -1 right).
struct Mark {
    position: vec4<f32>,
    direction: vec4<f32>,
}

struct Marks {
    next: atomic<u32>,
    pad_a: u32,
    pad_b: u32,
    pad_c: u32,
    marks: array<Mark>,
}

// Per page of the animator: `Params` (Rust: footprints::Params, whose WGSL declaration is
// prepended to this file).
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> event_log: EventLogRead;
@group(0) @binding(2) var<storage, read> palettes: array<Affine>;
@group(0) @binding(3) var<storage, read_write> marks: Marks;
// The page's outputs (Rust: layout::GpuOutput, 8 units each): word z of unit 3 is `evaluate`.
@group(0) @binding(4) var<storage, read> outputs: array<vec4<u32>>;

// One thread per record of the log.
@compute @workgroup_size(64)
fn stamp(@builtin(global_invocation_id) id: vec3<u32>) {
    let n = min(event_log.count, arrayLength(&event_log.records));
    let k = id.x;
    if (k >= n) {
        return;
    }
    let record = event_log.records[k];
    let left = record.event == params.event_l;
    if (!left && record.event != params.event_r) {
        return;
    }
    if (record.character < params.first || record.character - params.first >= params.count) {
        return;
    }
    let character = record.character - params.first;
    if (params.culling != 0u && outputs[8u * character + 3u].z == 0u) {
        return;
    }
    let socket = select(params.socket_r, params.socket_l, left);
    let slot = params.socket_base + (record.character - params.first) * MAX_SOCKETS + socket;
    if (slot >= arrayLength(&palettes)) {
        return;
    }
    let m = palettes[slot];
    let position = vec3<f32>(m.x.w, m.y.w, m.z.w);
    let forward = vec2<f32>(m.x.z, m.z.z);
    let at = atomicAdd(&marks.next, 1u) % arrayLength(&marks.marks);
    marks.marks[at] = Mark(vec4<f32>(position, params.time), vec4<f32>(forward, select(-1.0, 1.0, left), 0.0));
}
