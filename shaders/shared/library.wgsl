// The animation library as the stages read it: one read-only heap of 16-byte units, `heap`,
// whose sections hold the headers every frame looks up (clips, tracks, skeletons, blend nodes,
// children and triangles, events) and the bulk data (key times, key values, rest poses and
// masks, parents, inverse binds, sockets, packed tracks), and `library`, the uniform saying where
// each section starts. Rust: gpu::LibraryHeap packs it; layout::GpuLibraryLayout.

#define_import_path wgpu_anim::library

#import wgpu_anim::types::{
    Affine, BlendChild, BlendNode, ClipEvent, ClipInfo, CUBIC_ROTATION_MIN_LENGTH2, IkChain, INTERP_CUBIC,
    INTERP_PACKED, INTERP_STEP, MAX_IK_CHAINS, SkeletonInfo, Socket, Track,
}
#import wgpu_anim::math::{fast_slerp, hermite_basis}
#import wgpu_anim::bindings::{heap, library}

fn clip_info(c: u32) -> ClipInfo {
    let a = heap[library.clips + 2u * c];
    let b = heap[library.clips + 2u * c + 1u];
    return ClipInfo(a.x, a.y, a.z, a.w, bitcast<f32>(b.x), b.y, b.z, b.w);
}

// Clip `c`'s first joint track (ClipInfo.track_offset), read alone.
fn clip_track_offset(c: u32) -> u32 {
    return heap[library.clips + 2u * c].z;
}

// Event `k` of the library's event array.
fn clip_event(k: u32) -> ClipEvent {
    let a = heap[library.events + k];
    return ClipEvent(bitcast<f32>(a.x), a.y, bitcast<f32>(a.z), a.w);
}

fn clip_duration(c: u32) -> f32 {
    return bitcast<f32>(heap[library.clips + 2u * c + 1u].x);
}

fn track_at(k: u32) -> Track {
    let a = heap[library.tracks + k];
    return Track(a.x, a.y, a.z, a.w);
}

fn skeleton_info(s: u32) -> SkeletonInfo {
    let a = heap[library.skeletons + s];
    return SkeletonInfo(a.x, a.y, a.z, a.w);
}

fn blend_node(k: u32) -> BlendNode {
    let a = heap[library.blend_nodes + 2u * k];
    let b = heap[library.blend_nodes + 2u * k + 1u];
    return BlendNode(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

fn blend_child(k: u32) -> BlendChild {
    let a = heap[library.blend_children + k];
    return BlendChild(bitcast<vec2<f32>>(a.xy), a.z, a.w);
}

fn blend_triangle(k: u32) -> vec4<u32> {
    return heap[library.blend_triangles + k];
}

// Key time `k` of the library's time array (four to a unit).
fn key_time(k: u32) -> f32 {
    return bitcast<f32>(heap[library.times + k / 4u][k % 4u]);
}

// Value `k` of the library's value array: a key, a rest-pose component or a mask weight (x).
fn value_at(k: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>(heap[library.values + k]);
}

// Parent of joint `k` of the library's joint arrays (relative to its skeleton; -1 for a root).
fn joint_parent(k: u32) -> i32 {
    return bitcast<i32>(heap[library.parents + k / 4u][k % 4u]);
}

// Entry `k` of the library's hierarchy levels (indexed as the parents are), a byte each: the
// joint (bits 0..8) and depth (8..16) of a skeleton's k-th joint in depth order, and where level k
// starts in that order (16..24). Rust: AnimationLibrary::levels.
fn joint_level(k: u32) -> u32 {
    return heap[library.levels + k / 4u][k % 4u];
}

// The track whose key times clip `c`'s samples are searched at once per character (Rust:
// AnimationLibrary::clip_key_tracks).
fn clip_key_track(c: u32) -> u32 {
    return heap[library.clip_key_tracks + c / 4u][c % 4u];
}

// Skeleton `s`'s retarget head (Rust: gpu::library::retarget_units): 1 + the first unit of its
// table (0: it plays its own clips), its source's first entry in the parents, its retarget root
// and h_T / h_S (f32 bits).
fn retarget_head(s: u32) -> vec4<u32> {
    return heap[library.retargets + s];
}

// Unit `k` of the retarget tables: a table's root_from_source rows, then three units per joint
// (layout::GpuRetargetJoint).
fn retarget_unit(k: u32) -> vec4<u32> {
    return heap[library.retarget_joints + k];
}

// Clip `c`'s first unit of joint track words (Rust: GpuLibraryLayout::clip_joint_tracks).
fn clip_joint_tracks(c: u32) -> u32 {
    return heap[library.clip_joint_tracks + c / 4u][c % 4u];
}

// Clip `c`'s unit as a library of packed clips only keeps it (PACKED_ONLY): its first unit of
// joint track words, and its blob as its packed tracks name it (Track's time_offset, key_count and
// value_offset without the track's number). Rust: GpuLibraryLayout::clip_joint_tracks.
fn clip_packed_joints(c: u32) -> vec4<u32> {
    return heap[library.clip_joint_tracks + c];
}

// Joint `j` of the clip whose joint track words start at unit `first`: its translation,
// rotation and scale tracks as the sample stage reads them when their keys share the clip's
// times (CLIP_TIMES) — the value offset, the interpolation and, as the key count, 1 for a single
// key and 2 for more (the shared span's keys); three headers in one load. Rust:
// layout::joint_track_word.
fn joint_tracks(first: u32, j: u32) -> array<Track, 3> {
    let words = heap[library.joint_tracks + first + j];
    var out: array<Track, 3>;
    for (var c = 0u; c < 3u; c++) {
        let w = words[c];
        out[c] = Track(0u, 2u - (w >> 31u), w & ((1u << JOINT_TRACK_OFFSET_BITS) - 1u), (w >> JOINT_TRACK_OFFSET_BITS) & 3u);
    }
    return out;
}

// The bits of a joint track word that hold its value offset (Rust:
// layout::JOINT_TRACK_OFFSET_BITS).
const JOINT_TRACK_OFFSET_BITS: u32 = 29u;

fn inverse_bind(k: u32) -> Affine {
    let b = library.inverse_binds + 3u * k;
    return Affine(bitcast<vec4<f32>>(heap[b]), bitcast<vec4<f32>>(heap[b + 1u]), bitcast<vec4<f32>>(heap[b + 2u]));
}

// Socket `k` of the library's socket array (MAX_SOCKETS per skeleton).
fn socket_at(k: u32) -> Socket {
    let b = library.sockets + 4u * k;
    let offset = Affine(bitcast<vec4<f32>>(heap[b + 1u]), bitcast<vec4<f32>>(heap[b + 2u]), bitcast<vec4<f32>>(heap[b + 3u]));
    return Socket(heap[b].x, array<u32, 3>(), offset);
}

// IK chain `k` of skeleton `s` (MAX_IK_CHAINS per skeleton, six units each).
fn ik_chain(s: u32, k: u32) -> IkChain {
    let b = library.ik_chains + 6u * (s * MAX_IK_CHAINS + k);
    let h = heap[b];
    let axis = bitcast<vec4<f32>>(heap[b + 2u]);
    let pole = bitcast<vec4<f32>>(heap[b + 3u]);
    let offset = bitcast<vec4<f32>>(heap[b + 4u]);
    let up = bitcast<vec4<f32>>(heap[b + 5u]);
    return IkChain(h.x, h.y, h.z, 0u, heap[b + 1u], axis.xyz, axis.w, pole.xyz, pole.w, offset.xyz, 0.0, up.xyz, 0.0);
}

// Value of key `k` (the middle value of a cubic-spline key).
fn key_value(track: Track, k: u32) -> vec4<f32> {
#ifdef CUBIC_KEYS
    return value_at(track.value_offset + select(k, 3u * k + 1u, track.interpolation == INTERP_CUBIC));
#else
    return value_at(track.value_offset + k);
#endif
}

// Where time `t` falls among `n` key times from `base` (at least one), clamped to them: the key
// before `t` (or the first), the key after it (or the same one), `u` between them (0 at a clamped
// end) and the keys' distance `dt`. Tracks keyed at the same times share the library's one copy
// of them (the same `time_offset`), and so one span: the sample stage's CLIP_TIMES searches a
// clip's once per character and sample.
struct KeySpan {
    lo: u32,
    hi: u32,
    u: f32,
    dt: f32,
}

fn key_span(base: u32, n: u32, t: f32) -> KeySpan {
    // The largest key `lo` with time <= t, or 0: it stays in [lo, lo + len).
    var lo = 0u;
    var len = n;
    while (len > 1u) {
        let half = len / 2u;
        lo = select(lo, lo + half, key_time(base + lo + half) <= t);
        len -= half;
    }
    let hi = min(lo + 1u, n - 1u);
    let t0 = key_time(base + lo);
    let dt = key_time(base + hi) - t0;
    return KeySpan(lo, hi, select(0.0, clamp((t - t0) / dt, 0.0, 1.0), dt > 0.0), dt);
}

// A track at time `t`, clamped to its keys. Rotations are slerped (linear: `fast_slerp`) or
// normalized (cubic).
fn sample_track(track: Track, t: f32, rotation: bool) -> vec4<f32> {
    return track_at_span(track, key_span(track.time_offset, max(track.key_count, 1u), t), rotation);
}

// A track between the keys of `span` (its own times' span at the time sampled). One path for
// every case, a single key and a time before the first key or after the last included: `u` is 0
// at a clamped end or a step, where the value is the key before. A GPU that runs both sides of a
// branch (lavapipe) would otherwise load the keys of every early return.
fn track_at_span(track: Track, span: KeySpan, rotation: bool) -> vec4<f32> {
    let lo = span.lo;
    let hi = span.hi;
    var u = span.u;
    if (track.interpolation == INTERP_STEP) {
        u = 0.0;
    }
    let a = key_value(track, lo);
    let b = key_value(track, hi);
#ifdef CUBIC_KEYS
    if (track.interpolation == INTERP_CUBIC) {
        return select(cubic_segment(track, a, b, lo, hi, u, span.dt, rotation), a, u <= 0.0);
    }
#endif
    // Linear (a library without cubic-spline tracks carries no cubic code: shaders::library_defs;
    // a GPU that runs both sides of a branch, as lavapipe does, would pay for it on every track).
    if (rotation) {
        return select(fast_slerp(a, b, u), a, u <= 0.0);
    }
    return select(a * (1.0 - u) + b * u, a, u <= 0.0);
}

#ifdef CUBIC_KEYS
// A cubic-spline track between keys `lo` and `hi` (values p0 and p1), `u` of the way, the keys
// `dt` apart.
fn cubic_segment(track: Track, p0: vec4<f32>, p1: vec4<f32>, lo: u32, hi: u32, u: f32, dt: f32, rotation: bool) -> vec4<f32> {
    let h = hermite_basis(u);
    let m0 = value_at(track.value_offset + 3u * lo + 2u) * dt;
    let m1 = value_at(track.value_offset + 3u * hi) * dt;
    let v = p0 * h.x + m0 * h.y + p1 * h.z + m1 * h.w;
    if (rotation) {
        // Tangents may cancel the keys and the spline pass through zero, which has no
        // direction: there, the keys' own interpolation.
        if (!(dot(v, v) > CUBIC_ROTATION_MIN_LENGTH2)) {
            return fast_slerp(p0, p1, u);
        }
        return normalize(v);
    }
    return v;
}
#endif

// A joint track, raw or packed, at time `t`; a raw track between the keys of `span`, its times'
// span at `t` (key_span).
fn sample_channel(track: Track, t: f32, span: KeySpan, rotation: bool) -> vec4<f32> {
#ifdef PACKED_ONLY
    // Only animated tracks (more than one key) come here (the sample stage reads a single key in
    // place), and every one of a library of packed clips only is packed (shaders::library_defs):
    // no raw sampler, which a GPU that runs both sides of a branch (lavapipe) would pay for.
    return sample_packed(track, t, rotation);
#else
#ifdef COMPRESSED
    if (track.interpolation == INTERP_PACKED) {
        return sample_packed(track, t, rotation);
    }
#endif
    return track_at_span(track, span, rotation);
#endif
}

#ifdef COMPRESSED
// Compressed clips (src/codec/format.rs has the layout): word `k` of the packed section.
fn packed_word(k: u32) -> u32 {
    return heap[library.packed + k / 4u][k % 4u];
}

// A track's six-word clip range, from word `k` of the packed section, in two loads: a blob starts
// at a multiple of 4 words (Rust: library::PACKED_BLOB_ALIGN) and the range of its track j at
// word 8 + 6 j, so `k % 4` is 0 or 2 and the six words lie in units `k / 4` and the next. `a`
// holds words k to k + 3, `b.xy` words k + 4 and k + 5.
struct RangeWords {
    a: vec4<u32>,
    b: vec4<u32>,
}

fn packed_range_words(k: u32) -> RangeWords {
    let i = library.packed + k / 4u;
    let v0 = heap[i];
    let v1 = heap[i + 1u];
    let even = k % 4u == 0u;
    return RangeWords(select(vec4<u32>(v0.zw, v1.xy), v0, even), select(v1.zwxy, v1, even));
}

// Words of a segment record of a blob of `tracks` tracks (format.rs `record_words`).
fn packed_record_words(tracks: u32) -> u32 {
    return 2u + tracks + (6u * tracks + 3u) / 4u;
}

// Two rows of a track decoded together: a row's three stored values, the next row's, and the
// component a rotation drops in their segment.
struct PackedPair {
    a: vec3<f32>,
    b: vec3<f32>,
    dropped: u32,
}

// Byte `at / 8` of the two words `lo`, `hi` (`at` a multiple of 8 below 64).
fn range_byte(lo: u32, hi: u32, at: u32) -> u32 {
    return (select(hi >> (at - 32u), lo >> at, at < 32u)) & 0xffu;
}

// Track `k` of a blob of `tracks` tracks at rows `row` and `row + 1` of the segment whose record
// is at word `record`, of `rows` rows; `bits` is the bitstream's first word and `range` the
// track's clip range (min, extent per component). The row after a segment's last reads as 0. The
// two rows are adjacent in the track's column, so one window of at most six words holds both
// (2 × 72 bits from any bit of its first word), read word by word as far as the rows go.
fn packed_pair(record: u32, tracks: u32, k: u32, rows: u32, row: u32, bits: u32, range: mat2x3<f32>) -> PackedPair {
    let fields = packed_word(record + 2u + k);
    // The track's six range bytes: two words (6k is even, so they never take three).
    let bytes = record + 2u + tracks + (6u * k) / 4u;
    let shift = 8u * ((6u * k) % 4u);
    let lo_word = packed_word(bytes);
    let hi_word = packed_word(bytes + 1u);
    let field = (fields >> 16u) & 0x3fffu;
    let widths = vec3<u32>(field % 25u, field / 25u % 25u, field / 625u);
    let row_bits = widths.x + widths.y + widths.z;
    // The track's column: its rows one after another.
    let bit = packed_word(record) + rows * (fields & 0xffffu) + row * row_bits;
    // The words that hold the two rows (one where the segment has no next row).
    let w = bits + bit / 32u;
    let words = (bit % 32u + min(rows - row, 2u) * row_bits + 31u) / 32u;
    var lo = vec4<u32>(0u);
    var hi = vec2<u32>(0u);
    for (var i = 0u; i < words; i++) {
        let v = packed_word(w + i);
        lo = select(lo, vec4<u32>(v), vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(i));
        hi = select(hi, vec2<u32>(v), vec2<u32>(4u, 5u) == vec2<u32>(i));
    }
    // The two rows' six values in the order they are stored, read one after another (each
    // takes its bits from the reader's first two words, then moves it on): no value picks a word
    // at run time, which cost a GPU that runs every lane of a SIMD group through all of it
    // (lavapipe) nearly half the decode's instructions.
    var r = BitReader(lo, hi, bit % 32u);
    let ax = take_bits(&r, widths.x);
    let ay = take_bits(&r, widths.y);
    let az = take_bits(&r, widths.z);
    let bx = take_bits(&r, widths.x);
    let by = take_bits(&r, widths.y);
    let bz = take_bits(&r, widths.z);
    // The clip range's min + extent · (m + e · x) / 255, x = q / (2^width − 1) or ½.
    let m = vec3<f32>(vec3<u32>(range_byte(lo_word, hi_word, shift), range_byte(lo_word, hi_word, shift + 8u), range_byte(lo_word, hi_word, shift + 16u)));
    let e = vec3<f32>(vec3<u32>(range_byte(lo_word, hi_word, shift + 24u), range_byte(lo_word, hi_word, shift + 32u), range_byte(lo_word, hi_word, shift + 40u)));
    let unit = 1.0 / vec3<f32>(max((vec3<u32>(1u) << widths) - 1u, vec3<u32>(1u)));
    let stored = widths > vec3<u32>(0u);
    let scale = range[1] * (1.0 / 255.0);
    let xa = select(vec3<f32>(0.5), vec3<f32>(vec3<u32>(ax, ay, az)) * unit, stored);
    let xb = select(vec3<f32>(0.5), vec3<f32>(vec3<u32>(bx, by, bz)) * unit, stored);
    return PackedPair(range[0] + scale * (m + e * xa), range[0] + scale * (m + e * xb), fields >> 30u);
}

// A window's bits read in order, least significant first: its words from the next one read
// (`lo.x`), 0 past its end, and the bits of `lo.x` already read.
struct BitReader {
    lo: vec4<u32>,
    hi: vec2<u32>,
    at: u32,
}

// The next `width` bits (at most 24) of reader `r`, which moves past them.
fn take_bits(r: ptr<function, BitReader>, width: u32) -> u32 {
    let at = (*r).at;
    let lo = (*r).lo;
    let next = select(0u, lo.y << (32u - at), at != 0u);
    let value = ((lo.x >> at) | next) & ((1u << width) - 1u);
    let end = at + width;
    let advance = end >= 32u;
    (*r).lo = select(lo, vec4<u32>(lo.yzw, (*r).hi.x), advance);
    (*r).hi = select((*r).hi, vec2<u32>((*r).hi.y, 0u), advance);
    (*r).at = select(end, end - 32u, advance);
    return value;
}

// The unit quaternion of a packed rotation: the three stored values `v`, with the non-negative
// component `dropped` (0 to 3: x, y, z, w) restored.
fn packed_rotation(v: vec3<f32>, dropped: u32) -> vec4<f32> {
    let r = sqrt(max(1.0 - dot(v, v), 0.0));
    switch dropped {
        case 0u: { return vec4<f32>(r, v); }
        case 1u: { return vec4<f32>(v.x, r, v.yz); }
        case 2u: { return vec4<f32>(v.xy, r, v.z); }
        default: { return vec4<f32>(v, r); }
    }
}

// A packed track (a compressed clip's) at time `t`: its segment and frame computed from `t`
// (random access, no search), the two frames around it decoded and interpolated (rotations by
// `fast_slerp`, within 3e-7 rad of the exact slerp of the f64 decoder that the compressor
// measures its error with). The frame
// count is the track's key count; the record size and the bitstream's place follow from the
// blob's track count and segment size, which the track carries.
fn sample_packed(track: Track, t: f32, rotation: bool) -> vec4<f32> {
    let b = track.time_offset;
    let frame_count = track.key_count;
    // Track k of `tracks`, segments of 2^shift frames (layout::packed_track_ref).
    let k = track.value_offset & 0x3ffu;
    let tracks = (track.value_offset >> 10u) & 0x3ffu;
    let shift = track.value_offset >> 20u;
    let segment_frames = 1u << shift;
    let rate = bitcast<f32>(packed_word(b + 1u));
    let record_words = packed_record_words(tracks);
    let records = b + 8u + 6u * tracks;
    let bits = records + ((frame_count + segment_frames - 1u) >> shift) * record_words;
    let r = b + 8u + 6u * k;
    let w = packed_range_words(r);
    let range = mat2x3<f32>(bitcast<vec3<f32>>(w.a.xyz), bitcast<vec3<f32>>(vec3<u32>(w.a.w, w.b.xy)));
    let ft = clamp(t * rate, 0.0, f32(frame_count - 1u));
    let f0 = min(u32(ft), frame_count - 2u);
    let u = ft - f32(f0);
    // Frames f0 and f0 + 1 share a segment but where f0 ends one: decode the pair from f0's
    // segment, then, only there, the next segment's first row.
    let s0 = f0 >> shift;
    let s1 = (f0 + 1u) >> shift;
    var s = s0;
    var a = vec3<f32>(0.0);
    var c = vec3<f32>(0.0);
    var da = 3u;
    var dc = 3u;
    loop {
        let first = s << shift;
        let rows = min(segment_frames, frame_count - first);
        let pair = packed_pair(records + s * record_words, tracks, k, rows, select(0u, f0 - first, s == s0), bits, range);
        if (s == s0) {
            a = pair.a;
            da = pair.dropped;
        }
        c = select(pair.a, pair.b, s == s1 && s == s0);
        dc = pair.dropped;
        if (s == s1) {
            break;
        }
        s = s1;
    }
    if (rotation) {
        // Unit already (the restored component makes up the length): fast_slerp normalizes
        // its result.
        return fast_slerp(packed_rotation(a, da), packed_rotation(c, dc), u);
    }
    return vec4<f32>(a * (1.0 - u) + c * u, 0.0);
}
#endif
