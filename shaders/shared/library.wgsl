// The animation library as the stages read it: two heaps of 16-byte units, `headers` (clips,
// tracks, skeletons, blend nodes, children and triangles) and `payload` (key times, key values,
// rest poses and masks, parents, inverse binds), and `library`, the uniform saying where each
// section starts. Rust: gpu::LibraryHeaps packs them; layout::GpuLibraryLayout.

#define_import_path wgpu_anim::library

#import wgpu_anim::types::{
    Affine, BlendChild, BlendNode, ClipEvent, ClipInfo, INTERP_CUBIC, INTERP_LINEAR, INTERP_PACKED, INTERP_STEP,
    SkeletonInfo, Socket, Track,
}
#import wgpu_anim::math::{hermite_basis, quat_interp}
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

// Value of key `k` (the middle value of a cubic-spline key).
fn key_value(track: Track, k: u32) -> vec4<f32> {
    if (track.interpolation == INTERP_CUBIC) {
        return value_at(track.value_offset + 3u * k + 1u);
    }
    return value_at(track.value_offset + k);
}

// A track at time `t`, clamped to its keys. Rotations are slerped (linear) or normalized (cubic).
fn sample_track(track: Track, t: f32, rotation: bool) -> vec4<f32> {
    let n = track.key_count;
    let base = track.time_offset;
    if (n <= 1u || t <= key_time(base)) {
        return key_value(track, 0u);
    }
    if (t >= key_time(base + n - 1u)) {
        return key_value(track, n - 1u);
    }
    // Largest k with key time k <= t; key time hi > t.
    var lo = 0u;
    var hi = n - 1u;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (key_time(base + mid) <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t0 = key_time(base + lo);
    let dt = key_time(base + hi) - t0;
    let u = (t - t0) / dt;
    if (track.interpolation == INTERP_STEP) {
        return value_at(track.value_offset + lo);
    }
    if (track.interpolation == INTERP_LINEAR) {
        let a = value_at(track.value_offset + lo);
        let b = value_at(track.value_offset + hi);
        if (rotation) {
            return quat_interp(a, b, u);
        }
        return a * (1.0 - u) + b * u;
    }
    let h = hermite_basis(u);
    let p0 = value_at(track.value_offset + 3u * lo + 1u);
    let m0 = value_at(track.value_offset + 3u * lo + 2u) * dt;
    let p1 = value_at(track.value_offset + 3u * hi + 1u);
    let m1 = value_at(track.value_offset + 3u * hi) * dt;
    let v = p0 * h.x + m0 * h.y + p1 * h.z + m1 * h.w;
    if (rotation) {
        return normalize(v);
    }
    return v;
}

// A joint track, raw or packed, at time `t`.
fn sample_channel(track: Track, t: f32, rotation: bool) -> vec4<f32> {
#ifdef COMPRESSED
    if (track.interpolation == INTERP_PACKED) {
        return sample_packed(track, t, rotation);
    }
#endif
    return sample_track(track, t, rotation);
}

#ifdef COMPRESSED
// Compressed clips (src/codec/format.rs has the layout): word `k` of the packed section.
fn packed_word(k: u32) -> u32 {
    return payload[library.packed + k / 4u][k % 4u];
}

// `width` bits at bit `bit` of the words from `base`, least significant first.
fn packed_bits(base: u32, bit: u32, width: u32) -> u32 {
    if (width == 0u) {
        return 0u;
    }
    let w = base + bit / 32u;
    let shift = bit % 32u;
    var v = packed_word(w) >> shift;
    if (shift + width > 32u) {
        v |= packed_word(w + 1u) << (32u - shift);
    }
    return v & ((1u << width) - 1u);
}

// Words of a segment record of a blob of `tracks` tracks (format.rs `record_words`).
fn packed_record_words(tracks: u32) -> u32 {
    return 2u + tracks + (6u * tracks + 3u) / 4u;
}

// Track `k` at frame `f` of the blob at word `b` of `frame_count` frames and `tracks` tracks, whose segments are
// `segment_frames` frames, its bitstream at word `bits`; `range` is the track's clip range (min,
// extent per component). Returns its three stored values (xyz) and the component a rotation drops
// there (w).
fn packed_frame(
    b: u32,
    k: u32,
    f: u32,
    frame_count: u32,
    tracks: u32,
    segment_frames: u32,
    bits: u32,
    range: mat2x3<f32>,
) -> vec4<f32> {
    let s = f / segment_frames;
    let row = f % segment_frames;
    let record = b + 8u + 6u * tracks + s * packed_record_words(tracks);
    let fields = packed_word(record + 2u + k);
    // The track's six range bytes: two words (6k is even, so they never take three).
    let bytes = record + 2u + tracks + (6u * k) / 4u;
    let shift = 8u * ((6u * k) % 4u);
    let lo_word = packed_word(bytes);
    let hi_word = packed_word(bytes + 1u);
    let field = (fields >> 16u) & 0x3fffu;
    let widths = vec3<u32>(field % 25u, field / 25u % 25u, field / 625u);
    // The track's column: its frames one after another.
    let rows = min(segment_frames, frame_count - s * segment_frames);
    var bit = packed_word(record) + rows * (fields & 0xffffu) + row * (widths.x + widths.y + widths.z);
    var v = vec3<f32>(0.0);
    for (var c = 0u; c < 3u; c++) {
        let width = widths[c];
        let m = range_byte(lo_word, hi_word, shift + 8u * c);
        let e = range_byte(lo_word, hi_word, shift + 8u * (3u + c));
        let q = packed_bits(bits, bit, width);
        let lo = range[0][c] + range[1][c] * (f32(m) / 255.0);
        let ex = range[1][c] * (f32(e) / 255.0);
        var x = 0.5;
        if (width > 0u) {
            x = f32(q) / f32((1u << width) - 1u);
        }
        v[c] = lo + ex * x;
        bit += width;
    }
    return vec4<f32>(v, f32(fields >> 30u));
}

// Byte `at / 8` of the two words `lo`, `hi` (`at` a multiple of 8 below 64).
fn range_byte(lo: u32, hi: u32, at: u32) -> u32 {
    if (at < 32u) {
        return (lo >> at) & 0xffu;
    }
    return (hi >> (at - 32u)) & 0xffu;
}

// The unit quaternion of a packed rotation: the three stored values (`p.xyz`), with the
// non-negative component `p.w` (0 to 3: x, y, z, w) restored.
fn packed_rotation(p: vec4<f32>) -> vec4<f32> {
    let v = p.xyz;
    let r = sqrt(max(1.0 - dot(v, v), 0.0));
    switch u32(p.w) {
        case 0u: { return vec4<f32>(r, v); }
        case 1u: { return vec4<f32>(v.x, r, v.yz); }
        case 2u: { return vec4<f32>(v.xy, r, v.z); }
        default: { return vec4<f32>(v, r); }
    }
}

// A packed track (a compressed clip's) at time `t`: its segment and frame computed from `t`
// (random access, no search), the two frames around it decoded and interpolated (rotations as a
// raw track's: `quat_interp`). The frame count is the track's key count; the record size and the
// bitstream's place follow from the header's track count and segment size.
fn sample_packed(track: Track, t: f32, rotation: bool) -> vec4<f32> {
    let b = track.time_offset;
    let k = track.value_offset;
    let frame_count = track.key_count;
    let rate = bitcast<f32>(packed_word(b + 1u));
    let tracks = packed_word(b + 2u);
    let segment_frames = packed_word(b + 3u);
    let segments = (frame_count + segment_frames - 1u) / segment_frames;
    let bits = b + 8u + 6u * tracks + segments * packed_record_words(tracks);
    let r = b + 8u + 6u * k;
    let range = mat2x3<f32>(
        vec3<f32>(bitcast<f32>(packed_word(r)), bitcast<f32>(packed_word(r + 1u)), bitcast<f32>(packed_word(r + 2u))),
        vec3<f32>(bitcast<f32>(packed_word(r + 3u)), bitcast<f32>(packed_word(r + 4u)), bitcast<f32>(packed_word(r + 5u))),
    );
    let ft = clamp(t * rate, 0.0, f32(frame_count - 1u));
    let f0 = min(u32(ft), frame_count - 2u);
    let u = ft - f32(f0);
    let a = packed_frame(b, k, f0, frame_count, tracks, segment_frames, bits, range);
    let c = packed_frame(b, k, f0 + 1u, frame_count, tracks, segment_frames, bits, range);
    if (rotation) {
        return quat_interp(normalize(packed_rotation(a)), normalize(packed_rotation(c)), u);
    }
    return vec4<f32>(a.xyz * (1.0 - u) + c.xyz * u, 0.0);
}
#endif
