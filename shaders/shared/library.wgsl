// The animation library as the stages read it: two heaps of 16-byte units, `headers` (clips,
// tracks, skeletons, blend nodes, children and triangles) and `payload` (key times, key values,
// rest poses and masks, parents, inverse binds), and `library`, the uniform saying where each
// section starts. Rust: gpu::LibraryHeaps packs them; layout::GpuLibraryLayout.

#define_import_path wgpu_anim::library

#import wgpu_anim::types::{Affine, BlendChild, BlendNode, ClipEvent, ClipInfo, SkeletonInfo, Socket, Track}
#import wgpu_anim::bindings::{headers, library, payload}

fn clip_info(c: u32) -> ClipInfo {
    let a = headers[library.clips + 2u * c];
    let b = headers[library.clips + 2u * c + 1u];
    return ClipInfo(a.x, a.y, a.z, a.w, bitcast<f32>(b.x), b.y, b.z, b.w);
}

// Event `k` of the library's event array.
fn clip_event(k: u32) -> ClipEvent {
    let a = headers[library.events + k];
    return ClipEvent(bitcast<f32>(a.x), a.y, bitcast<f32>(a.z), a.w);
}

fn clip_duration(c: u32) -> f32 {
    return bitcast<f32>(headers[library.clips + 2u * c + 1u].x);
}

fn track_at(k: u32) -> Track {
    let a = headers[library.tracks + k];
    return Track(a.x, a.y, a.z, a.w);
}

fn skeleton_info(s: u32) -> SkeletonInfo {
    let a = headers[library.skeletons + s];
    return SkeletonInfo(a.x, a.y, a.z, a.w);
}

fn blend_node(k: u32) -> BlendNode {
    let a = headers[library.blend_nodes + 2u * k];
    let b = headers[library.blend_nodes + 2u * k + 1u];
    return BlendNode(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

fn blend_child(k: u32) -> BlendChild {
    let a = headers[library.blend_children + k];
    return BlendChild(bitcast<vec2<f32>>(a.xy), a.z, a.w);
}

fn blend_triangle(k: u32) -> vec4<u32> {
    return headers[library.blend_triangles + k];
}

// Key time `k` of the library's time array (four to a unit).
fn key_time(k: u32) -> f32 {
    return bitcast<f32>(payload[library.times + k / 4u][k % 4u]);
}

// Value `k` of the library's value array: a key, a rest-pose component or a mask weight (x).
fn value_at(k: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>(payload[library.values + k]);
}

// Parent of joint `k` of the library's joint arrays (relative to its skeleton; -1 for a root).
fn joint_parent(k: u32) -> i32 {
    return bitcast<i32>(payload[library.parents + k / 4u][k % 4u]);
}

fn inverse_bind(k: u32) -> Affine {
    let b = library.inverse_binds + 3u * k;
    return Affine(bitcast<vec4<f32>>(payload[b]), bitcast<vec4<f32>>(payload[b + 1u]), bitcast<vec4<f32>>(payload[b + 2u]));
}

// Socket `k` of the library's socket array (MAX_SOCKETS per skeleton).
fn socket_at(k: u32) -> Socket {
    let b = library.sockets + 4u * k;
    let offset = Affine(bitcast<vec4<f32>>(payload[b + 1u]), bitcast<vec4<f32>>(payload[b + 2u]), bitcast<vec4<f32>>(payload[b + 3u]));
    return Socket(payload[b].x, offset);
}
