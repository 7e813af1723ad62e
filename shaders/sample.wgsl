// Stage 2: sample and blend. For every joint of every instance, sample each clip of the instance's
// blend list at its time — keys found by binary search (random access, no cursor; with
// CLIP_TIMES once per instance and sample) and interpolated — and blend them; under an
// inertialized transition, apply its offset (shared/inertia). One workgroup per instance, its
// threads (CHARACTER_THREADS) striding over the joints; with THREAD_PER_CHARACTER one per eight
// instances, a thread each taking every joint (shared/math.wgsl). With MORPH (a library whose clips drive
// morph-target weights) its threads then stride over the instance's morph targets and blend their
// weights the same way. CPU mirror: cpu::sample (weights: cpu::blend_morph_weights). An
// animator without layers (AnimatorDesc::layers) compiles it with NO_LAYERS, one without
// inertialized transitions (AnimatorDesc::inertialization) with NO_INERTIA: the code a character
// of that animator never runs is left out, which costs a GPU nothing when it branches around it
// and a CPU adapter (lavapipe), which runs every side of a branch masked, about as much as the
// code itself.

#define_import_path wgpu_anim::sample

#import wgpu_anim::types::{
    BlendSample, ClipInfo, INERTIA_DEAD_BLEND, INERTIA_LAST_POSE, INERTIA_OFFSET, INERTIA_PREVIOUS, INTERP_PACKED,
    INERTIA_KEEP_POSE, INERTIA_SWITCH, INERTIA_VELOCITY, PREVIOUS_TAG,
    LAYER_ADDITIVE_LOCAL, LAYER_OFF, LAYER_OVERRIDE, LayerApply, LocalPose, MAX_BLEND_CLIPS,
    MAX_LAYERS, MIN_BLEND_WEIGHT, NO_MASK, SNAPSHOT_CLIP, SkeletonInfo, Track,
}
#import wgpu_anim::math::{CHARACTER_THREADS, JOINT_STRIDE, first_joint, quat_mul, workgroup_character}
#ifdef RETARGET
#import wgpu_anim::math::quat_rotate
#import wgpu_anim::library::{joint_parent, retarget_head, retarget_unit}
#import wgpu_anim::types::{
    RETARGET_UNMAPPED, RETARGET_WORD_LINKS_SHIFT, RETARGET_WORD_ROOT, RETARGET_WORD_SCALED, RETARGET_WORD_SOURCE,
}
#endif
#import wgpu_anim::culling::{evaluated_count, evaluated_instance}
#import wgpu_anim::bindings::{frame, instances, local_poses, pose_history}
#import wgpu_anim::state::{blend_list_layer, blend_list_sample, blend_list_unit}
#import wgpu_anim::library::{KeySpan, clip_info, clip_joint_tracks, clip_key_track, clip_track_offset, joint_tracks, key_span, key_value, sample_channel, skeleton_info, track_at, value_at}
#ifdef PACKED_ONLY
#import wgpu_anim::library::clip_packed_joints
#import wgpu_anim::bindings::{heap, library}
#import wgpu_anim::types::INTERP_LINEAR
#endif
#import wgpu_anim::inertia::{
    PoseDelta, VELOCITY_MIN_DT, dead_blend, decay_from_slots, decay_offset, decay_start,
    decay_to_slots, delta_from_slot, delta_scaled, delta_to_slot, pose_add, pose_advance, pose_sub,
    pose_velocity,
}
#ifdef MORPH
#import wgpu_anim::inertia::inertia_morph_weight
#endif
#ifdef MORPH
#import wgpu_anim::state::{load_morph_weight, store_morph_weight}
#import wgpu_anim::library::sample_track
#import wgpu_anim::types::{CLIP_CURVE_SHIFT, CLIP_MORPH_SHIFT}
#endif

// A blend-list sample's key times, found once per character: the times of its clip's key track
// (its first raw track of more than one key) and their span at the sample's time; `times`
// (offset, key count) 0 for a snapshot or a compressed clip. With CLIP_TIMES every raw joint
// track of more than one key is keyed at those times (the library keeps one copy of each
// distinct time array: the same offset and count), as a take exported at one rate is
// (AnimationLibrary::clips_share_key_times), and the joints take the span rather than search.
struct SampleKeys {
    times: vec2<u32>,
    span: KeySpan,
    // The clip's first unit of joint track words (clip_joint_tracks).
    joints: u32,
}

#ifdef CLIP_TIMES
// The character's list samples as its joints read them (sample_joints writes them, thread k
// sample k), two units each: the keys (the clip's first joint track unit, the span's keys and
// `u`) and the sample (clip, time, weight, layer); with CUBIC_KEYS the span's `dt` beside them.
// Two 16-byte loads per joint and sample: a GPU that loads a thread's words one by one
// (lavapipe) pays for each load, so seven words read one by one cost it more. With
// THREAD_PER_CHARACTER the thread's own (it samples every joint of its character).
#ifdef THREAD_PER_CHARACTER
var<private> kept_units: array<vec4<u32>, 2u * MAX_BLEND_CLIPS>;
#ifdef CUBIC_KEYS
var<private> kept_dt: array<f32, MAX_BLEND_CLIPS>;
#endif
#else
var<workgroup> kept_units: array<vec4<u32>, 2u * MAX_BLEND_CLIPS>;
#ifdef CUBIC_KEYS
var<workgroup> kept_dt: array<f32, MAX_BLEND_CLIPS>;
#endif
#endif

// Keeps instance `i`'s list sample `k` and its keys where the joints read them.
fn keep_list_sample(i: u32, k: u32) {
    let e = list_sample(i, k);
    let keys = list_sample_keys(i, k);
    kept_units[2u * k] = vec4<u32>(keys.joints, keys.span.lo, keys.span.hi, bitcast<u32>(keys.span.u));
    kept_units[2u * k + 1u] = vec4<u32>(e.clip, bitcast<u32>(e.time), bitcast<u32>(e.weight), e.layer);
#ifdef CUBIC_KEYS
    kept_dt[k] = keys.span.dt;
#endif
}

// List sample `k` as keep_list_sample kept it, and its keys.
struct KeptSample {
    e: BlendSample,
    keys: SampleKeys,
}

fn kept_sample(k: u32) -> KeptSample {
    let a = kept_units[2u * k];
    let b = kept_units[2u * k + 1u];
#ifdef CUBIC_KEYS
    let dt = kept_dt[k];
#else
    let dt = 0.0;
#endif
    return KeptSample(
        BlendSample(b.x, bitcast<f32>(b.y), bitcast<f32>(b.z), b.w),
        SampleKeys(vec2<u32>(0u), KeySpan(a.y, a.z, bitcast<f32>(a.w), dt), a.x),
    );
}

// The keys of instance `i`'s list sample `k`.
fn list_sample_keys(i: u32, k: u32) -> SampleKeys {
    var keys = SampleKeys(vec2<u32>(0u), KeySpan(0u, 0u, 0.0, 0.0), 0u);
    let e = list_sample(i, k);
    if (e.clip != SNAPSHOT_CLIP) {
        keys.joints = clip_joint_tracks(e.clip);
        let clip = clip_info(e.clip);
        let track = track_at(clip_key_track(e.clip));
        if (clip.joint_count > 0u && track.interpolation != INTERP_PACKED) {
            keys.times = vec2<u32>(track.time_offset, max(track.key_count, 1u));
            keys.span = key_span(keys.times.x, keys.times.y, e.time);
        }
    }
    return keys;
}
#endif

// Joint `j` of the clip whose first track is `track_offset` at time `t`: its translation,
// rotation and scale tracks. A channel of a single key is its key 0, read in place (the value the
// sampler gives it); then only the animated channels (more than one key) go through the sampler,
// one call site in a loop over them, so that a GPU that runs every side of a branch (lavapipe)
// runs the sampler, the compressed decoder above all, as often as the joints of a SIMD group
// have animated channels, not three times. With CLIP_TIMES a raw track takes the span of `keys`
// (the sample's, found once per character), and a library without compressed clips reads the
// joint's three headers in one load (joint_tracks); without, each raw track searches its own
// times. CPU mirror: cpu::sample::sample_joint, the same steps.
fn sample_joint(track_offset: u32, j: u32, t: f32, keys: SampleKeys) -> LocalPose {
#ifdef CLIP_TIMES
#ifndef COMPRESSED
    let tracks = joint_tracks(keys.joints, j);
#else
    let tracks = joint_headers(track_offset, j);
#endif
#else
    let tracks = joint_headers(track_offset, j);
#endif
    // Named, not an array indexed at run time: that costs lavapipe a gather per thread.
    return sample_tracks(tracks[0], tracks[1], tracks[2], t, keys);
}

// A joint's translation, rotation and scale tracks t0, t1, t2 at time `t` (sample_joint).
fn sample_tracks(t0: Track, t1: Track, t2: Track, t: f32, keys: SampleKeys) -> LocalPose {
    var c0 = vec4<f32>(0.0);
    var c1 = vec4<f32>(0.0);
    var c2 = vec4<f32>(0.0);
    if (t0.key_count <= 1u) {
        c0 = key_value(t0, 0u);
    }
    if (t1.key_count <= 1u) {
        c1 = key_value(t1, 0u);
    }
    if (t2.key_count <= 1u) {
        c2 = key_value(t2, 0u);
    }
    var animated = select(0u, 1u, t0.key_count > 1u) | select(0u, 2u, t1.key_count > 1u) | select(0u, 4u, t2.key_count > 1u);
    while (animated != 0u) {
        let c = firstTrailingBit(animated);
        animated &= animated - 1u;
        var track = t0;
        if (c == 1u) {
            track = t1;
        }
        if (c == 2u) {
            track = t2;
        }
#ifdef CLIP_TIMES
        let span = keys.span;
#else
        var span = KeySpan(0u, 0u, 0.0, 0.0);
#ifndef PACKED_ONLY
        if (track.interpolation != INTERP_PACKED) {
            span = key_span(track.time_offset, track.key_count, t);
        }
#endif
#endif
        let v = sample_channel(track, t, span, c == 1u);
        if (c == 0u) {
            c0 = v;
        } else if (c == 1u) {
            c1 = v;
        } else {
            c2 = v;
        }
    }
    return LocalPose(vec4<f32>(c0.xyz, 0.0), c1, vec4<f32>(c2.xyz, 0.0));
}

#ifdef PACKED_ONLY
// Joint `j` of a clip of a library of packed clips only at time `t`, the clip's unit `clip`
// (clip_packed_joints): as sample_joint, its three channels read in one load of words (Rust:
// gpu::library::packed_joint_word), each a single key's value index or, with bit 31, the track's
// number in the clip's blob, whose header the clip's unit holds. Two loads per joint and sample
// where sample_joint's headers take four: a GPU that loads a thread's words one load at a time
// (lavapipe) pays per load.
fn sample_packed_joint(clip: vec4<u32>, j: u32, t: f32) -> LocalPose {
    let words = heap[library.joint_tracks + clip.x + j];
    let none = SampleKeys(vec2<u32>(0u), KeySpan(0u, 0u, 0.0, 0.0), 0u);
    return sample_tracks(packed_joint_track(clip, words.x), packed_joint_track(clip, words.y), packed_joint_track(clip, words.z), t, none);
}

// The track a packed joint word names: a single key at its value index (whatever the key's
// interpolation, the index is its value's), or track `word & 0x3ff` of the clip's blob.
fn packed_joint_track(clip: vec4<u32>, word: u32) -> Track {
    if (word < PACKED_JOINT_BIT) {
        return Track(0u, 1u, word, INTERP_LINEAR);
    }
    return Track(clip.y, clip.z, clip.w | (word & 0x3ffu), INTERP_PACKED);
}

// Bit 31 of a packed joint word: a packed track (Rust: layout::PACKED_JOINT_BIT).
const PACKED_JOINT_BIT: u32 = 0x80000000u;
#endif

// Joint `j`'s translation, rotation and scale track headers, of the clip whose first track is
// `track_offset`.
fn joint_headers(track_offset: u32, j: u32) -> array<Track, 3> {
    let first = track_offset + 3u * j;
    return array<Track, 3>(track_at(first), track_at(first + 1u), track_at(first + 2u));
}

virtual fn list_count(i: u32) -> u32 {
    // Instance i's blend list, read in place where `clock` wrote it (copying it into every
    // invocation is slow; the threads of a workgroup read the same bytes, which a GPU's cache serves).
    // The fused stage overrides these with reads of workgroup memory.
    return blend_list_unit(i, 0u).x;
}

virtual fn list_sample(i: u32, k: u32) -> BlendSample {
    return blend_list_sample(i, k);
}

virtual fn list_layer(i: u32, k: u32) -> LayerApply {
    return blend_list_layer(i, k);
}

virtual fn list_mesh_additive(i: u32) -> bool {
    return blend_list_unit(i, 0u).y != 0u;
}

virtual fn list_inertia(i: u32) -> u32 {
    // The list's `inertia` bits (and below, its `inertia_time`).
    return blend_list_unit(i, 0u).z;
}

virtual fn list_inertia_time(i: u32) -> f32 {
    return bitcast<f32>(blend_list_unit(i, 0u).w);
}

// One layer's samples of a joint, summed by weight: translation, scale, rotation (each
// sign-aligned to the layer's first sample, the heaviest: the list is sorted heaviest first),
// total weight, and how many samples.
struct LayerSum {
    t: vec3<f32>,
    s: vec3<f32>,
    q: vec4<f32>,
    q_ref: vec4<f32>,
    total: f32,
    count: u32,
}

// The sums with pose `p` added by `weight` (by value: naga 30's SPIR-V writer fails on a pointer
// to an array element picked at run time).
fn add_to_sum(sum: LayerSum, p: LocalPose, weight: f32) -> LayerSum {
    var out = sum;
    if (sum.count == 0u) {
        out.q_ref = p.rotation;
    }
    var w = weight;
    out.t += p.translation.xyz * w;
    out.s += p.scale.xyz * w;
    if (dot(out.q_ref, p.rotation) < 0.0) {
        w = -w;
    }
    out.q += p.rotation * w;
    out.total += weight;
    out.count += 1u;
    return out;
}

// A layer's blend from its sums: normalized, order-independent; a total weight below
// MIN_BLEND_WEIGHT is filled with the layer's fill pose (fill_pose), read only then.
fn blend_layer(sum: LayerSum, k: u32, mode: u32, pose: LocalPose, skel: SkeletonInfo, j: u32) -> LocalPose {
    var t = sum.t;
    var s = sum.s;
    var q = sum.q;
    let fill = max(MIN_BLEND_WEIGHT - sum.total, 0.0);
    if (fill > 0.0) {
        let fill_pose = fill_pose_of(k, mode, pose, skel, j);
        let q_ref = select(fill_pose.rotation, sum.q_ref, sum.count > 0u);
        var wq = fill;
        if (dot(q_ref, fill_pose.rotation) < 0.0) {
            wq = -fill;
        }
        t += fill_pose.translation.xyz * fill;
        q += fill_pose.rotation * wq;
        s += fill_pose.scale.xyz * fill;
    }
    let total = sum.total + fill;
    return LocalPose(vec4<f32>(t / total, 0.0), normalize(q), vec4<f32>(s / total, 0.0));
}

// What fills layer k's missing weight: the rest pose for the base (k = 0), the pose so far for
// an override layer, the identity for an additive one.
fn fill_pose_of(k: u32, mode: u32, pose: LocalPose, skel: SkeletonInfo, j: u32) -> LocalPose {
    if (k == 0u) {
        return rest_pose(skel, j);
    }
    if (mode != LAYER_OVERRIDE) {
        return identity_pose();
    }
    return pose;
}

fn rest_pose(skel: SkeletonInfo, j: u32) -> LocalPose {
    let r = skel.rest_offset + 3u * j;
    return LocalPose(value_at(r), value_at(r + 1u), value_at(r + 2u));
}

fn identity_pose() -> LocalPose {
    return LocalPose(vec4<f32>(0.0), vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(1.0, 1.0, 1.0, 0.0));
}

// The weight of joint `j` in a mask (1 without one).
fn mask_weight(mask: u32, j: u32) -> f32 {
    if (mask == NO_MASK) {
        return 1.0;
    }
    return value_at(mask + j).x;
}

// A mask's weight of morph target `t`: 1 without a mask or past its target weights (their
// count is entry 0's z; Rust: LibraryBuilder::add_mask_with_targets).
fn mask_target_weight(mask: u32, t: u32) -> f32 {
    if (mask == NO_MASK || f32(t) >= value_at(mask).z) {
        return 1.0;
    }
    return value_at(mask + t).y;
}

// A difference rotation applied with weight b: nlerp(identity, ±d, b) along the shorter arc.
fn weighted_delta(d: vec4<f32>, b: f32) -> vec4<f32> {
    var dd = d;
    if (dd.w < 0.0) {
        dd = -dd;
    }
    return normalize(vec4<f32>(0.0, 0.0, 0.0, 1.0 - b) + dd * b);
}

struct LayeredPose {
    pose: LocalPose,
    mesh_delta: vec4<f32>,
}

// Instance `i`'s layers, read once per character (k = 0 the base, k > 0 layer k - 1): their
// modes, weights now and at the previous frame's times (clamped; 0 for a layer that is off)
// and masks. As vectors: an index picked at run time into a function's array costs a GPU that
// keeps it in memory (lavapipe) a gather per thread.
struct LayerHeads {
    modes: vec4<u32>,
    now: vec4<f32>,
    previous: vec4<f32>,
    masks: vec4<u32>,
}

fn layer_heads(i: u32) -> LayerHeads {
    var out = LayerHeads(vec4<u32>(LAYER_OVERRIDE), vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<u32>(NO_MASK));
#ifndef NO_LAYERS
    for (var k = 1u; k <= MAX_LAYERS; k++) {
        let la = list_layer(i, k - 1u);
        out.modes[k] = la.mode;
        out.masks[k] = la.mask;
        if (la.mode != LAYER_OFF) {
            out.now[k] = clamp(la.weight, 0.0, 1.0);
            out.previous[k] = clamp(la.previous_weight, 0.0, 1.0);
        }
    }
#endif
    return out;
}

// Layer k's mode and weight for joint `j`, from the character's `heads`; `tag` as in
// layered_joint.
struct LayerWeights {
    modes: vec4<u32>,
    weights: vec4<f32>,
}

fn layer_weights(heads: LayerHeads, j: u32, tag: u32) -> LayerWeights {
    var out = LayerWeights(heads.modes, select(heads.now, heads.previous, tag != 0u));
#ifndef NO_LAYERS
    for (var k = 1u; k <= MAX_LAYERS; k++) {
        if (heads.modes[k] != LAYER_OFF) {
            out.weights[k] *= mask_weight(heads.masks[k], j);
        }
    }
#endif
    return out;
}

// `pose` (and the mesh-space rotation delta) with layer k applied: weight `b`, mode `mode`, its
// samples' sums `sum` (k = 0: the base, filled with the rest pose).
fn apply_layer(pose_in: LayeredPose, sum: LayerSum, k: u32, mode: u32, b: f32, skel: SkeletonInfo, j: u32) -> LayeredPose {
    if (!(b > 0.0)) {
        return pose_in;
    }
    var pose = pose_in.pose;
    var delta = pose_in.mesh_delta;
    let lp = blend_layer(sum, k, mode, pose, skel, j);
    if (mode == LAYER_OVERRIDE) {
        var lq = lp.rotation;
        if (dot(pose.rotation, lq) < 0.0) {
            lq = -lq;
        }
        pose = LocalPose(
            pose.translation * (1.0 - b) + lp.translation * b,
            normalize(pose.rotation * (1.0 - b) + lq * b),
            pose.scale * (1.0 - b) + lp.scale * b,
        );
    } else {
        pose.translation = pose.translation + lp.translation * b;
        pose.scale = pose.scale * (vec4<f32>(1.0, 1.0, 1.0, 0.0) * (1.0 - b) + lp.scale * b);
        let dq = weighted_delta(lp.rotation, b);
        if (mode == LAYER_ADDITIVE_LOCAL) {
            pose.rotation = normalize(quat_mul(pose.rotation, dq));
        } else {
            delta = normalize(quat_mul(dq, delta));
        }
    }
    return LayeredPose(pose, delta);
}

// Joint `j` of clip `clip` at `time` (`keys`: the sample's, with CLIP_TIMES): read by the
// clip's joint tracks as the library holds them (sample_joint, or sample_packed_joint for a
// library of packed clips only).
fn clip_joint(clip: u32, j: u32, time: f32, keys: SampleKeys) -> LocalPose {
#ifdef PACKED_ONLY
#ifndef CLIP_TIMES
    return sample_packed_joint(clip_packed_joints(clip), j, time);
#else
    return sample_joint(clip_track_offset(clip), j, time, keys);
#endif
#else
    return sample_joint(clip_track_offset(clip), j, time, keys);
#endif
}

#ifdef RETARGET
// The joint being sampled of a character played through a retarget, its constants read from
// the heap (Rust: layout::GpuRetargetJoint; mirror: cpu::sample::retarget::RetargetedJoint),
// set for each joint by retarget_joint_at: its two constant
// rotations `a` and `b`, its source joint and how many source joints its chain multiplies
// (`source`, `links`), whether it is the retarget root (then `root_*`, the rows of what takes
// the source root's model-space position to its local translation), its rest translation and
// scale (the translation and a word of the rest in the constants' third unit; the scale read
// only where it is not 1), and the source's first entry in the parents.
struct RetargetedJoint {
    a: vec4<f32>,
    b: vec4<f32>,
    source: u32,
    links: u32,
    root: bool,
    parents: u32,
    translation: vec4<f32>,
    scale: vec4<f32>,
    root_x: vec4<f32>,
    root_y: vec4<f32>,
    root_z: vec4<f32>,
}

// Whether this character is played through a retarget, and its joint's constants (private: set
// once per joint, read by every sample of it).
var<private> retargeting: bool;
var<private> retarget_joint: RetargetedJoint;

// Sets joint `j`'s constants for a character of skeleton `skel` whose retarget head is `head`
// (retarget_head; x = 0: it plays its own skeleton's clips). Rust: cpu::sample::retarget.
fn retarget_joint_at(head: vec4<u32>, skel: SkeletonInfo, j: u32) {
    retargeting = head.x != 0u;
    if (!retargeting) {
        return;
    }
    let table = head.x - 1u;
    let k = table + 3u + 3u * j;
    let w = retarget_unit(k + 2u);
    var r: RetargetedJoint;
    r.a = bitcast<vec4<f32>>(retarget_unit(k));
    r.b = bitcast<vec4<f32>>(retarget_unit(k + 1u));
    let source = w.w & RETARGET_WORD_SOURCE;
    r.source = select(source, RETARGET_UNMAPPED, source == RETARGET_WORD_SOURCE);
    r.links = (w.w >> RETARGET_WORD_LINKS_SHIFT) & 0xffu;
    r.root = (w.w & RETARGET_WORD_ROOT) != 0u;
    r.parents = head.y;
    r.translation = vec4<f32>(bitcast<vec3<f32>>(w.xyz), 0.0);
    r.scale = vec4<f32>(1.0, 1.0, 1.0, 0.0);
    if ((w.w & RETARGET_WORD_SCALED) != 0u) {
        r.scale = value_at(skel.rest_offset + 3u * j + 2u);
    }
    if (r.root) {
        r.root_x = bitcast<vec4<f32>>(retarget_unit(table));
        r.root_y = bitcast<vec4<f32>>(retarget_unit(table + 1u));
        r.root_z = bitcast<vec4<f32>>(retarget_unit(table + 2u));
    }
    retarget_joint = r;
}
#endif

// Joint `j` of a character playing clip `clip` at `time`: the clip's joint `j`; for a character
// played through a retarget (RETARGET, retarget_joint), the reference's step 2 on the clip's
// source joints: the local rotations of its chain's `links` joints, from its source joint up its
// parents, multiplied (L) and turned by the joint's constants (a ⊗ L ⊗ b, not normalized again:
// the blend normalizes), its rest translation and scale, and for the retarget root the chain's
// position (the source root's in model space) through root_from_source; an unmapped joint keeps
// its rest with rotation `a`. One call site of the sampler, in the chain's loop; what only the
// root or a longer chain needs is behind a branch every character's joint `j` takes alike. CPU
// mirror: cpu::sample::retarget::played_joint.
fn played_joint(clip: u32, j: u32, time: f32, keys: SampleKeys) -> LocalPose {
#ifdef RETARGET
    let r = retarget_joint;
    if (retargeting && r.source == RETARGET_UNMAPPED) {
        return LocalPose(r.translation, r.a, r.scale);
    }
    var k = select(j, r.source, retargeting);
    let links = select(1u, r.links, retargeting);
    var q = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    var position = vec3<f32>(0.0);
    for (var n = 0u; n < links; n++) {
        let s = clip_joint(clip, k, time, keys);
        if (!retargeting) {
            return s;
        }
        position = s.translation.xyz + quat_rotate(s.rotation, s.scale.xyz * position);
        q = quat_mul(s.rotation, q);
        k = u32(max(joint_parent(r.parents + k), 0));
    }
    let p = vec4<f32>(position, 1.0);
    let moved = vec4<f32>(dot(r.root_x, p), dot(r.root_y, p), dot(r.root_z, p), 0.0);
    return LocalPose(select(r.translation, moved, r.root), quat_mul(quat_mul(r.a, q), r.b), r.scale);
#else
    return clip_joint(clip, j, time, keys);
#endif
}

// The base and three layers: one sum each, named (see LayerWeights).
const_assert MAX_LAYERS == 3u;

// Joint `j` of an instance: its base blend, then each layer in order — override layers replace
// it by weight × mask, additive layers add their difference pose (local space: q·Δq, t + βΔt,
// s ⊙ lerp(1, Δs, β); mesh space: the same for t and s, the rotation delta collected for
// `local_to_model`, later layers on top of earlier ones). `tag` 0: now; PREVIOUS_TAG: at the
// previous frame's times and layer weights. Each sample of the list is sampled once, into its
// layer's sums (one call site: the sampler is compiled once, and a GPU that runs both sides of a
// branch, as lavapipe does, samples as often as the list has samples, not that times the layers).
fn layered_joint(i: u32, heads: LayerHeads, skel: SkeletonInfo, j: u32, snapshot_slot: u32, tag: u32) -> LayeredPose {
    let lw = layer_weights(heads, j, tag);
    var s0: LayerSum;
    var s1: LayerSum;
    var s2: LayerSum;
    var s3: LayerSum;
    let count = min(list_count(i), MAX_BLEND_CLIPS);
    for (var n = 0u; n < count; n++) {
#ifdef CLIP_TIMES
        let kept = kept_sample(n);
        let e = kept.e;
#else
        let e = list_sample(i, n);
#endif
        // Samples of the other time (`tag`) wrap past the layers.
        let k = e.layer - tag;
        if (k > MAX_LAYERS) {
            continue;
        }
        if (!(lw.weights[k] > 0.0)) {
            continue;
        }
        var p: LocalPose;
        if (e.clip == SNAPSHOT_CLIP) {
            p = pose_history[snapshot_slot];
        } else {
#ifdef CLIP_TIMES
            p = played_joint(e.clip, j, e.time, kept.keys);
#else
            p = played_joint(e.clip, j, e.time, SampleKeys(vec2<u32>(0u), KeySpan(0u, 0u, 0.0, 0.0), 0u));
#endif
        }
        if (k == 0u) {
            s0 = add_to_sum(s0, p, e.weight);
        } else if (k == 1u) {
            s1 = add_to_sum(s1, p, e.weight);
        } else if (k == 2u) {
            s2 = add_to_sum(s2, p, e.weight);
        } else {
            s3 = add_to_sum(s3, p, e.weight);
        }
    }
    var out = LayeredPose(identity_pose(), vec4<f32>(0.0, 0.0, 0.0, 1.0));
    out = apply_layer(out, s0, 0u, lw.modes[0], lw.weights[0], skel, j);
#ifndef NO_LAYERS
    out = apply_layer(out, s1, 1u, lw.modes[1], lw.weights[1], skel, j);
    out = apply_layer(out, s2, 2u, lw.modes[2], lw.weights[2], skel, j);
    out = apply_layer(out, s3, 3u, lw.modes[3], lw.weights[3], skel, j);
#endif
    return out;
}

virtual fn last_pose_at(slot: u32, now: LocalPose) -> LocalPose {
    // The pose joint slot `slot` showed the frame before (INERTIA_LAST_POSE): in the local pose
    // buffer until this frame's store_joint. The fused stage, which keeps no local pose (and
    // binds no local pose buffer for it), overrides it with `now`, no velocity: the controller
    // sets the bit only after a staged frame, so a fused frame meets it only when the path
    // changes between the animator's prepare and its encode.
    return local_poses[slot];
}

virtual fn store_joint(joint_offset: u32, j: u32, lp: LayeredPose, keep_pose: bool, mesh_additive: bool) {
    // Stores joint `j`'s pose: the local pose, the snapshot when the instance keeps its pose, and
    // the mesh-space rotation delta when a layer adds in mesh space. The fused stage overrides it
    // to keep the pose and delta in workgroup memory.
    let slot = joint_offset + j;
    local_poses[slot] = lp.pose;
    if (keep_pose) {
        // The pose shown this frame, kept as the source of the transition that starts next
        // frame (one that interrupts another). Written after this joint's own read of the
        // snapshot, by the same thread.
        pose_history[slot] = lp.pose;
    }
    if (mesh_additive) {
        local_poses[frame.snapshot_offset + slot] = LocalPose(vec4<f32>(0.0), lp.mesh_delta, vec4<f32>(0.0));
    }
}

// Joint `slot`'s pose under the blend list's `inertia` bits, from its pose `now` and (with
// INERTIA_PREVIOUS) `previous`, the pose at the previous frame's times (with INERTIA_LAST_POSE,
// the pose shown the frame before, read from the local pose buffer); `time`: seconds since the
// source was last shown. The pose history's snapshot and velocity sections hold, per joint,
// the source's last pose and velocity (kept the frame before the transition, by
// INERTIA_VELOCITY and KEEP_POSE), which dead blending extrapolates and mixes into `now`; or,
// from the first frame of an offset decay on (INERTIA_SWITCH, which computes them), the decay of
// the offset from the target to the source and of its velocity, which applies on top of `now`.
// Once the transition is over (and the frame keeps no velocity) the pose is `now`, nothing read.
fn inertia_joint(i: u32, slot: u32, now: LocalPose, previous: LocalPose, bits: u32, time: f32) -> LocalPose {
    let dt = frame.dt;
    let duration = instances[i].transition_duration;
    // The pose history: snapshots, then (from the joint capacity) velocities.
    let snapshot_slot = slot;
    let velocity_slot = frame.snapshot_offset + slot;
    var out = now;
    var before = previous;
    let keep_velocity = (bits & INERTIA_VELOCITY) != 0u;
    if (!keep_velocity && !(time < duration)) {
        return out;
    }
    // With INERTIA_LAST_POSE, the pose the frame before showed (still in the local pose buffer:
    // this thread stores the joint's pose after this call) stands for `before`.
    let last_pose = (bits & INERTIA_LAST_POSE) != 0u;
    let sampled_before = keep_velocity && !last_pose;
    if (last_pose) {
        before = last_pose_at(slot, now);
    }
    // The kept pose and velocity (or decay), read once: a GPU that runs both sides of a branch
    // (lavapipe) pays for every read in either.
    let kept = pose_history[snapshot_slot];
    let kept_velocity = pose_history[velocity_slot];
    if ((bits & INERTIA_DEAD_BLEND) != 0u) {
        let halflife = instances[i].halflife;
        let source = kept;
        let velocity = delta_from_slot(kept_velocity);
        out = dead_blend(source, velocity, now, time, duration, halflife);
        if (sampled_before) {
            before = dead_blend(source, velocity, previous, time - dt, duration, halflife);
        }
    } else if ((bits & INERTIA_OFFSET) != 0u) {
        var decay = decay_from_slots(kept, kept_velocity);
        if ((bits & INERTIA_SWITCH) != 0u) {
            // The source's last pose and velocity against the target then (`previous`) and now:
            // the offset at the last source frame and its velocity over this one.
            let source = kept;
            let velocity = delta_from_slot(kept_velocity);
            let x0 = pose_sub(source, previous);
            let x1 = pose_sub(pose_advance(source, velocity, dt), now);
            var v0 = PoseDelta(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
            if (dt >= VELOCITY_MIN_DT) {
                v0 = delta_scaled(PoseDelta(x1.t - x0.t, x1.r - x0.r, x1.s - x0.s), 1.0 / dt);
            }
            decay = decay_start(x0, v0, duration);
            let slots = decay_to_slots(decay);
            pose_history[snapshot_slot] = slots[0];
            pose_history[velocity_slot] = slots[1];
        }
        out = pose_add(now, decay_offset(decay, time, duration));
        if (sampled_before) {
            before = pose_add(previous, decay_offset(decay, time - dt, duration));
        }
    }
    if (keep_velocity) {
        pose_history[velocity_slot] = delta_to_slot(pose_velocity(out, before, dt));
    }
    return out;
}

// Instance `i`'s joints first_joint(lid), then every JOINT_STRIDE-th below `joint_count` (with
// THREAD_PER_CHARACTER all of them; else `lid`, `lid + CHARACTER_THREADS`, ...): sampled,
// blended, layered (and, with INERTIA_PREVIOUS, again at the previous frame's times),
// inertialized and stored; with MORPH, its morph weights too. With CLIP_TIMES, first thread `lid`
// finds the key times of list samples from first_joint(lid), JOINT_STRIDE apart, and keeps them
// with the samples for every joint's thread (keep_list_sample): called in uniform control flow,
// as that ends on a barrier (none with THREAD_PER_CHARACTER, whose thread keeps its own). What is the same for every joint (the list's layers, the
// kept samples) is read once per character or per sample, not per joint and track where it
// can be helped: a GPU that loads a thread's words one load at a time (lavapipe) pays per load.
fn sample_joints(i: u32, lid: u32, joint_count: u32) {
#ifdef CLIP_TIMES
    for (var n = first_joint(lid); n < min(list_count(i), MAX_BLEND_CLIPS); n += JOINT_STRIDE) {
        keep_list_sample(i, n);
    }
#ifndef THREAD_PER_CHARACTER
    workgroupBarrier();
#endif
#endif
    let joint_offset = instances[i].joint_offset;
    let skel = skeleton_info(instances[i].skeleton);
    let keep_pose = (list_inertia(i) & INERTIA_KEEP_POSE) != 0u;
#ifdef NO_LAYERS
    let mesh_additive = false;
#else
    let mesh_additive = list_mesh_additive(i);
#endif
#ifdef NO_INERTIA
    let bits = 0u;
    let passes = 1u;
#else
    let bits = list_inertia(i);
    let passes = select(1u, 2u, (bits & INERTIA_PREVIOUS) != 0u);
#endif
    // What every joint reads of the blend list, read once: a GPU that runs a thread per lane
    // (lavapipe) pays for each load in the joints' loop once per joint.
    let heads = layer_heads(i);
#ifdef RETARGET
    let retarget = retarget_head(instances[i].skeleton);
#endif
    for (var j = first_joint(lid); j < joint_count; j += JOINT_STRIDE) {
        let snapshot_slot = joint_offset + j;
#ifdef RETARGET
        retarget_joint_at(retarget, skel, j);
#endif
        // One call site of layered_joint, so the sampler is compiled once.
        var lp: LayeredPose;
        var previous: LocalPose;
        for (var e = 0u; e < passes; e++) {
            let p = layered_joint(i, heads, skel, j, snapshot_slot, e * PREVIOUS_TAG);
            if (e == 0u) {
                lp = p;
            } else {
                previous = p.pose;
            }
        }
#ifndef NO_INERTIA
        if (bits != 0u) {
            lp.pose = inertia_joint(i, joint_offset + j, lp.pose, previous, bits, list_inertia_time(i));
        }
#endif
        store_joint(joint_offset, j, lp, keep_pose, mesh_additive);
    }
#ifdef MORPH
    // Targets first_joint(lid), JOINT_STRIDE apart, of those in use: the instance's own weights
    // (after frame.morph_api_base) blended with its clips' weight tracks and its snapshot (after
    // twice that) into the weights the vertex stage reads (under an inertialized transition,
    // mixed in from the snapshot); kept as the snapshot on a frame that keeps the pose (written
    // after this thread's own read of it).
    let base = instances[i].morph_offset;
    let snapshot = 2u * frame.morph_api_base + base;
    let morph_time = list_inertia_time(i);
    for (var t = first_joint(lid); t < instances[i].morph_count; t += JOINT_STRIDE) {
        let kept = load_morph_weight(snapshot + t);
        let blended = blend_morph_weight(i, t, load_morph_weight(frame.morph_api_base + base + t), kept);
        let w = inertia_morph_weight(bits, morph_time, instances[i].transition_duration, kept, blended);
        store_morph_weight(base + t, w);
        if (keep_pose) {
            store_morph_weight(snapshot + t, w);
        }
    }
#endif
}

#ifdef MORPH
// Target `t`'s weight in clip `clip` at `time`; `present` says whether the clip drives it.
struct MorphValue {
    value: f32,
    present: bool,
}

fn morph_value(clip: u32, t: u32, time: f32) -> MorphValue {
    if (clip == SNAPSHOT_CLIP) {
        // Its weights are the instance's snapshot (blend_morph_weight).
        return MorphValue(0.0, false);
    }
    let info = clip_info(clip);
    if (t >= (info.flags >> CLIP_MORPH_SHIFT)) {
        return MorphValue(0.0, false);
    }
    let curves = countOneBits((info.flags >> CLIP_CURVE_SHIFT) & 0xffu);
    let track = track_at(info.track_offset + 3u * info.joint_count + curves + t);
    if (track.key_count == 0u) {
        return MorphValue(0.0, false);
    }
    return MorphValue(sample_track(track, time, false).x, true);
}

// Instance `i`'s weight of morph target `t`, blended as its pose: over the base samples, each
// weighted, the clip's track where it drives the target, the weight kept as the instance's
// snapshot (`snapshot`, what the frame before an interrupting cross-fade showed) for the
// snapshot, and the instance's own weight `own` where no track drives it, normalized; `own`
// alone when neither a base clip nor the snapshot drives it. Then
// each layer in order, the weighted mean of its samples' tracks (a clip without one counting 0),
// where one of them drives it: lerped in by the layer's weight times its mask's weight of the
// target (override) or added times it (additive).
fn blend_morph_weight(i: u32, t: u32, own: f32, snapshot: f32) -> f32 {
    let count = list_count(i);
    var sum = 0.0;
    var total = 0.0;
    var driven = false;
    for (var k = 0u; k < count; k++) {
        let s = list_sample(i, k);
        if (s.layer != 0u) {
            continue;
        }
        total += s.weight;
        var m = morph_value(s.clip, t, s.time);
        if (s.clip == SNAPSHOT_CLIP) {
            m = MorphValue(snapshot, true);
        }
        driven = driven || m.present;
        sum += s.weight * select(own, m.value, m.present);
    }
    var out = own;
    if (driven && total > 0.0) {
        out = sum / total;
    }
#ifndef NO_LAYERS
    for (var l = 0u; l < MAX_LAYERS; l++) {
        let apply = list_layer(i, l);
        if (apply.mode == LAYER_OFF) {
            continue;
        }
        var layer_sum = 0.0;
        var weight = 0.0;
        var present = false;
        for (var k = 0u; k < count; k++) {
            let s = list_sample(i, k);
            if (s.layer != l + 1u) {
                continue;
            }
            weight += s.weight;
            let m = morph_value(s.clip, t, s.time);
            present = present || m.present;
            layer_sum += s.weight * m.value;
        }
        if (!(weight > 0.0) || !present) {
            continue;
        }
        let v = layer_sum / weight;
        let b = apply.weight * mask_target_weight(apply.mask, t);
        if (apply.mode == LAYER_OVERRIDE) {
            out = mix(out, v, b);
        } else {
            out += b * v;
        }
    }
#endif
    return out;
}
#endif

// The number of characters evaluated this frame, as the entry point reads it: with CLIP_TIMES and
// a workgroup per character, one thread's read for all, so that the workgroup leaves together
// (sample_joints has a barrier).
#ifdef THREAD_PER_CHARACTER
fn evaluated_here(lid: u32) -> u32 {
    return evaluated_count();
}
#else
#ifdef CLIP_TIMES
var<workgroup> wg_evaluated: u32;

fn evaluated_here(lid: u32) -> u32 {
    if (lid == 0u) {
        wg_evaluated = evaluated_count();
    }
    return workgroupUniformLoad(&wg_evaluated);
}
#else
fn evaluated_here(lid: u32) -> u32 {
    return evaluated_count();
}
#endif
#endif

@compute @workgroup_size(CHARACTER_THREADS)
fn sample(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // With culling, the k-th listed instance (shaders/shared/culling.wgsl).
    let k = workgroup_character(wg, groups, lid);
    if (k >= evaluated_here(lid)) {
        return;
    }
    let i = evaluated_instance(k);
    sample_joints(i, lid, instances[i].joint_count);
}
