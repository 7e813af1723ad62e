//! Mirror of `shaders/sample.wgsl`. The stage's entry point [`sample`] checks what the page holds,
//! then runs [`kernel`].
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]

use super::PageBuffers;
use super::checks::{clip, instance_count, instance_error, joint_end, joints, pose_buffer};
use super::inertia::{Decay, PoseDelta, dead_blend, pose_add, pose_advance, pose_sub, pose_velocity};
use crate::clip::Interpolation;
use crate::error::Result;
use crate::layout::{
    BlendList, GpuClip, GpuFrame, GpuInstance, GpuSkeleton, GpuTrack, INTERP_PACKED, LocalPose, MAX_BLEND_CLIPS,
    MAX_LAYERS, MIN_BLEND_WEIGHT, NO_MASK, SNAPSHOT_CLIP, WORKGROUP_SIZE, inertia, layer_mode,
};
use crate::library::AnimationLibrary;
use crate::math::{CUBIC_ROTATION_MIN_LENGTH2, fast_slerp, hermite_basis};
use glam::{Vec3, Vec4};

const INTERP_STEP: u32 = Interpolation::Step.gpu_code();
const INTERP_CUBIC: u32 = Interpolation::CubicSpline.gpu_code();

fn key_value(values: &[Vec4], track: &GpuTrack, k: u32) -> Vec4 {
    if track.interpolation == INTERP_CUBIC {
        return values[(track.value_offset + 3 * k + 1) as usize];
    }
    values[(track.value_offset + k) as usize]
}

/// Where time `t` falls among the key times `keys` (at least one), clamped to them: the key
/// before `t` (or the first), the key after it (or the same one), `u` between them (0 at a
/// clamped end) and the keys' distance `dt`. Tracks keyed at the same times share the library's
/// one copy of them, and so one span ([`list_keys`]). WGSL `KeySpan`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct KeySpan {
    lo: u32,
    hi: u32,
    u: f32,
    dt: f32,
}

/// The span of `t` among `track`'s key times (a single key: key 0, `u` 0). WGSL `key_span`.
#[must_use]
pub(crate) fn key_span(times: &[f32], track: &GpuTrack, t: f32) -> KeySpan {
    let n = track.key_count.max(1) as usize;
    let base = track.time_offset as usize;
    let keys = &times[base..base + n];
    let lo = key_before(keys, t);
    let hi = (lo + 1).min(n - 1);
    let t0 = keys[lo];
    let dt = keys[hi] - t0;
    let u = if dt > 0.0 { ((t - t0) / dt).clamp(0.0, 1.0) } else { 0.0 };
    KeySpan {
        lo: lo as u32,
        hi: hi as u32,
        u,
        dt,
    }
}

/// A track at time `t`, clamped to its keys. WGSL `sample_track`.
#[must_use]
pub(crate) fn sample_track(times: &[f32], values: &[Vec4], track: &GpuTrack, t: f32, rotation: bool) -> Vec4 {
    if track.key_count <= 1 {
        // The shader's path with one key: the search never steps, `u` is 0.
        return key_value(values, track, 0);
    }
    track_at_span(values, track, &key_span(times, track, t), rotation)
}

/// A track between the keys of `span`, its times' span at the time sampled: the key before (or
/// the first), the key after it (or the same one) and `u` between them, 0 at a clamped end or a
/// step, where the value is the key before. WGSL `track_at_span`, which takes this one path for
/// every case (its `select` of that key where `u` is 0 is the early return here).
#[must_use]
pub(crate) fn track_at_span(values: &[Vec4], track: &GpuTrack, span: &KeySpan, rotation: bool) -> Vec4 {
    let KeySpan { lo, hi, mut u, dt } = *span;
    if track.interpolation == INTERP_STEP {
        u = 0.0;
    }
    let a = key_value(values, track, lo);
    if u <= 0.0 {
        return a;
    }
    let b = key_value(values, track, hi);
    if track.interpolation == INTERP_CUBIC {
        let vo = track.value_offset;
        let h = hermite_basis(u);
        let m0 = values[(vo + 3 * lo + 2) as usize] * dt;
        let m1 = values[(vo + 3 * hi) as usize] * dt;
        let v = a * h.x + m0 * h.y + b * h.z + m1 * h.w;
        if rotation {
            // Tangents may cancel the keys and the spline pass through zero, which has no
            // direction: there, the keys' own interpolation.
            if !(v.dot(v) > CUBIC_ROTATION_MIN_LENGTH2) {
                return fast_slerp(a, b, u);
            }
            return v.normalize();
        }
        return v;
    }
    if rotation {
        return fast_slerp(a, b, u);
    }
    a * (1.0 - u) + b * u
}

/// The largest key of `keys` (sorted) at or before `t`, or 0 when there is none: a binary search
/// that keeps the answer in `[lo, lo + len)`. WGSL `sample_track`'s search.
pub(crate) fn key_before(keys: &[f32], t: f32) -> usize {
    let mut lo = 0usize;
    let mut len = keys.len();
    while len > 1 {
        let half = len / 2;
        if keys[lo + half] <= t {
            lo += half;
        }
        len -= half;
    }
    lo
}

/// A joint track, raw or packed, at time `t`. WGSL `sample_channel`.
pub(crate) fn sample_channel(lib: &AnimationLibrary, track: &GpuTrack, t: f32, rotation: bool) -> Vec4 {
    if track.interpolation == INTERP_PACKED {
        return sample_packed(lib.packed(), track, t, rotation);
    }
    sample_track(lib.times(), lib.values(), track, t, rotation)
}

/// A blend-list sample's key times, found once per character: the times of its clip's key track
/// ([`AnimationLibrary::clip_key_tracks`]; offset and key count, (0, 0) for a snapshot or a
/// compressed clip) and their span at the sample's time. WGSL `SampleKeys`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SampleKeys {
    times: (u32, u32),
    span: KeySpan,
}

/// A blend list with its samples' keys ([`list_keys`]): what a workgroup's threads sample from.
pub(crate) struct KeyedList<'a> {
    pub list: &'a BlendList,
    pub keys: [SampleKeys; MAX_BLEND_CLIPS as usize],
    /// Its layers, read once per character.
    heads: LayerHeads,
}

impl<'a> KeyedList<'a> {
    /// `list` and its samples' keys.
    #[must_use]
    pub fn new(lib: &AnimationLibrary, list: &'a BlendList) -> Self {
        KeyedList {
            list,
            keys: list_keys(lib, list),
            heads: layer_heads(list),
        }
    }
}

/// The keys of `list`'s samples, as the threads of a workgroup find them before its joints'
/// (one sample each). WGSL `list_sample_keys`, in `sample_joints`.
#[must_use]
pub(crate) fn list_keys(lib: &AnimationLibrary, list: &BlendList) -> [SampleKeys; MAX_BLEND_CLIPS as usize] {
    let mut keys = [SampleKeys::default(); MAX_BLEND_CLIPS as usize];
    for (k, e) in list.samples[..list.count.min(MAX_BLEND_CLIPS) as usize]
        .iter()
        .enumerate()
    {
        if e.clip == SNAPSHOT_CLIP {
            continue;
        }
        let clip = &lib.clips()[e.clip as usize];
        let track = &lib.tracks()[lib.clip_key_tracks()[e.clip as usize] as usize];
        if clip.joint_count > 0 && track.interpolation != INTERP_PACKED {
            keys[k] = SampleKeys {
                times: (track.time_offset, track.key_count.max(1)),
                span: key_span(lib.times(), track, e.time),
            };
        }
    }
    keys
}

/// Joint `j` of `clip` at time `t`. WGSL `sample_joint`, the same steps: a channel of a single key
/// is its key 0, read in place (the value the sampler gives it), and only the animated channels
/// go through the sampler, in a loop over them. A raw channel keyed at the
/// times of `keys` (the sample's, [`list_keys`]) takes their span; any other searches its own.
/// The shader reads such a joint's three track headers as one unit of words
/// ([`crate::layout::joint_track_word`]), and a joint of a library of packed clips only as one
/// unit naming its packed tracks and single keys (WGSL `sample_packed_joint`): the same value
/// offsets, interpolations and blob tracks, read here from the tracks.
#[must_use]
pub(crate) fn sample_joint(lib: &AnimationLibrary, clip: &GpuClip, j: u32, t: f32, keys: &SampleKeys) -> LocalPose {
    let first = (clip.track_offset + 3 * j) as usize;
    let tracks = &lib.tracks()[first..first + 3];
    // A single key's value now, the animated channels (a packed track has at least two frames)
    // sampled after, through one call site.
    let mut channels = [Vec4::ZERO; 3];
    let mut animated = 0u32;
    for (c, track) in tracks.iter().enumerate() {
        if track.key_count > 1 {
            animated |= 1 << c;
        } else {
            channels[c] = key_value(lib.values(), track, 0);
        }
    }
    while animated != 0 {
        let c = animated.trailing_zeros() as usize;
        animated &= animated - 1;
        let track = &tracks[c];
        channels[c] = if track.interpolation == INTERP_PACKED {
            sample_packed(lib.packed(), track, t, c == 1)
        } else if (track.time_offset, track.key_count) == keys.times {
            track_at_span(lib.values(), track, &keys.span, c == 1)
        } else {
            track_at_span(lib.values(), track, &key_span(lib.times(), track, t), c == 1)
        };
    }
    LocalPose {
        translation: channels[0].truncate().extend(0.0),
        rotation: channels[1],
        scale: channels[2].truncate().extend(0.0),
    }
}

/// One layer's samples of a joint, summed by weight: translation, scale, rotation (each
/// sign-aligned to the layer's first sample, the heaviest), total weight, and how many samples.
/// WGSL `LayerSum`.
#[derive(Clone, Copy, Default)]
pub(crate) struct LayerSum {
    t: Vec3,
    s: Vec3,
    q: Vec4,
    q_ref: Vec4,
    total: f32,
    count: u32,
}

impl LayerSum {
    /// Adds pose `p` with `weight`. WGSL `add_to_sum`.
    fn add(&mut self, p: &LocalPose, weight: f32) {
        if self.count == 0 {
            self.q_ref = p.rotation;
        }
        let mut w = weight;
        self.t += p.translation.truncate() * w;
        self.s += p.scale.truncate() * w;
        if self.q_ref.dot(p.rotation) < 0.0 {
            w = -w;
        }
        self.q += p.rotation * w;
        self.total += weight;
        self.count += 1;
    }
}

/// A layer's blend from its sums, normalized and order-independent; a total weight below
/// [`MIN_BLEND_WEIGHT`] is filled with the layer's fill pose (`fill_pose`, [`fill_pose_of`]),
/// read only then. WGSL `blend_layer`, which takes `fill_pose_of`'s arguments instead.
#[must_use]
fn blend_layer(sum: &LayerSum, fill_pose: impl FnOnce() -> LocalPose) -> LocalPose {
    let (mut t, mut s, mut q) = (sum.t, sum.s, sum.q);
    let fill = (MIN_BLEND_WEIGHT - sum.total).max(0.0);
    if fill > 0.0 {
        let fill_pose = fill_pose();
        let q_ref = if sum.count > 0 { sum.q_ref } else { fill_pose.rotation };
        let mut wq = fill;
        if q_ref.dot(fill_pose.rotation) < 0.0 {
            wq = -fill;
        }
        t += fill_pose.translation.truncate() * fill;
        q += fill_pose.rotation * wq;
        s += fill_pose.scale.truncate() * fill;
    }
    let total = sum.total + fill;
    LocalPose {
        translation: (t / total).extend(0.0),
        rotation: q.normalize(),
        scale: (s / total).extend(0.0),
    }
}

/// What fills layer `k`'s missing weight: the rest pose for the base (`k` = 0), the pose so far
/// for an override layer, the identity for an additive one. WGSL `fill_pose_of`.
fn fill_pose_of(
    lib: &AnimationLibrary,
    k: usize,
    mode: u32,
    pose: &LocalPose,
    skel: &GpuSkeleton,
    j: u32,
) -> LocalPose {
    if k == 0 {
        return rest_pose(lib, skel, j);
    }
    if mode != layer_mode::OVERRIDE {
        return IDENTITY_POSE;
    }
    *pose
}

/// The rest pose of joint `j`, from the library's values. WGSL `rest_pose`.
#[must_use]
pub(crate) fn rest_pose(lib: &AnimationLibrary, skel: &GpuSkeleton, j: u32) -> LocalPose {
    let r = (skel.rest_offset + 3 * j) as usize;
    LocalPose {
        translation: lib.values()[r],
        rotation: lib.values()[r + 1],
        scale: lib.values()[r + 2],
    }
}

/// No translation, no rotation, unit scale: the difference pose that changes nothing.
pub const IDENTITY_POSE: LocalPose = LocalPose {
    translation: Vec4::ZERO,
    rotation: Vec4::W,
    scale: Vec4::new(1.0, 1.0, 1.0, 0.0),
};

/// Joint `j`'s weight in the mask at `mask` (1 without one). WGSL `mask_weight`.
#[must_use]
pub(crate) fn mask_weight(lib: &AnimationLibrary, mask: u32, j: u32) -> f32 {
    if mask == NO_MASK {
        return 1.0;
    }
    lib.values()[(mask + j) as usize].x
}

/// A difference rotation applied with weight `b`: nlerp(identity, ±d, b). WGSL `weighted_delta`.
#[must_use]
pub fn weighted_delta(d: Vec4, b: f32) -> Vec4 {
    let mut dd = d;
    if dd.w < 0.0 {
        dd = -dd;
    }
    (Vec4::new(0.0, 0.0, 0.0, 1.0 - b) + dd * b).normalize()
}

pub use crate::math::quat_mul;

/// The base and the layers.
const LAYER_SLOTS: usize = MAX_LAYERS as usize + 1;

/// An instance's layers, read once per character (k = 0 the base, k > 0 layer k - 1): their
/// modes, weights now and at the previous frame's times (clamped; 0 for a layer that is off) and
/// masks. WGSL `LayerHeads`.
struct LayerHeads {
    modes: [u32; LAYER_SLOTS],
    now: [f32; LAYER_SLOTS],
    previous: [f32; LAYER_SLOTS],
    masks: [u32; LAYER_SLOTS],
}

/// WGSL `layer_heads`.
fn layer_heads(list: &BlendList) -> LayerHeads {
    let mut out = LayerHeads {
        modes: [layer_mode::OVERRIDE; LAYER_SLOTS],
        now: [1.0, 0.0, 0.0, 0.0],
        previous: [1.0, 0.0, 0.0, 0.0],
        masks: [NO_MASK; LAYER_SLOTS],
    };
    for (k, la) in list.layers.iter().enumerate() {
        out.modes[k + 1] = la.mode;
        out.masks[k + 1] = la.mask;
        if la.mode != layer_mode::OFF {
            out.now[k + 1] = la.weight.clamp(0.0, 1.0);
            out.previous[k + 1] = la.previous_weight.clamp(0.0, 1.0);
        }
    }
    out
}

/// Layer k's mode and weight for joint `j`, from the character's `heads`; `tag` as in
/// [`layered_joint`]. WGSL `layer_weights`.
fn layer_weights(lib: &AnimationLibrary, heads: &LayerHeads, j: u32, tag: u32) -> [f32; LAYER_SLOTS] {
    let mut weights = if tag != 0 { heads.previous } else { heads.now };
    for ((w, &mode), &mask) in weights.iter_mut().zip(&heads.modes).zip(&heads.masks).skip(1) {
        if mode != layer_mode::OFF {
            *w *= mask_weight(lib, mask, j);
        }
    }
    weights
}

/// `pose` and the mesh-space rotation delta with layer `k` applied: weight `b`, mode `mode`, its
/// samples' sums `sum` (k = 0: the base, filled with the rest pose). WGSL `apply_layer`.
#[expect(clippy::too_many_arguments, reason = "the shader's arguments, one for one")]
fn apply_layer(
    lib: &AnimationLibrary,
    (mut pose, mut delta): (LocalPose, Vec4),
    sum: &LayerSum,
    k: usize,
    mode: u32,
    b: f32,
    skel: &GpuSkeleton,
    j: u32,
) -> (LocalPose, Vec4) {
    if !(b > 0.0) {
        return (pose, delta);
    }
    let lp = blend_layer(sum, || fill_pose_of(lib, k, mode, &pose, skel, j));
    if mode == layer_mode::OVERRIDE {
        let mut lq = lp.rotation;
        if pose.rotation.dot(lq) < 0.0 {
            lq = -lq;
        }
        pose = LocalPose {
            translation: pose.translation * (1.0 - b) + lp.translation * b,
            rotation: (pose.rotation * (1.0 - b) + lq * b).normalize(),
            scale: pose.scale * (1.0 - b) + lp.scale * b,
        };
    } else {
        pose.translation += lp.translation * b;
        pose.scale *= Vec4::new(1.0, 1.0, 1.0, 0.0) * (1.0 - b) + lp.scale * b;
        let dq = weighted_delta(lp.rotation, b);
        if mode == layer_mode::ADDITIVE_LOCAL {
            pose.rotation = quat_mul(pose.rotation, dq).normalize();
        } else {
            delta = quat_mul(dq, delta).normalize();
        }
    }
    (pose, delta)
}

/// Joint `j` of an instance: the base blend, then each layer in order; returns the local pose
/// and the mesh-space rotation delta for `local_to_model`. `tag` 0: now;
/// [`inertia::PREVIOUS_TAG`]: at the previous frame's times and layer weights. Each sample of the
/// list is sampled once, into its layer's sums; with `retarget` (a character played through a
/// retarget), through it ([`retarget::played_joint`]). WGSL `layered_joint`.
#[must_use]
#[allow(clippy::too_many_arguments)]
pub(crate) fn layered_joint(
    lib: &AnimationLibrary,
    keyed: &KeyedList<'_>,
    skel: &GpuSkeleton,
    j: u32,
    snapshot_slot: u32,
    history: &[LocalPose],
    tag: u32,
    retarget: Option<&RetargetedJoint>,
) -> (LocalPose, Vec4) {
    let (list, keys) = (keyed.list, &keyed.keys);
    let (modes, weights) = (keyed.heads.modes, layer_weights(lib, &keyed.heads, j, tag));
    let mut sums = [LayerSum::default(); LAYER_SLOTS];
    for (e, keys) in list.samples[..list.count.min(MAX_BLEND_CLIPS) as usize]
        .iter()
        .zip(keys)
    {
        // Samples of the other time (`tag`) wrap past the layers.
        let k = e.layer.wrapping_sub(tag) as usize;
        if k >= LAYER_SLOTS || !(weights[k] > 0.0) {
            continue;
        }
        let p = if e.clip == SNAPSHOT_CLIP {
            history[snapshot_slot as usize]
        } else {
            played_joint(lib, &lib.clips()[e.clip as usize], j, e.time, keys, retarget)
        };
        sums[k].add(&p, e.weight);
    }
    let mut out = (IDENTITY_POSE, Vec4::W);
    for k in 0..LAYER_SLOTS {
        out = apply_layer(lib, out, &sums[k], k, modes[k], weights[k], skel, j);
    }
    out
}

/// Where `sample` stores a joint's pose. WGSL: the `virtual fn store_joint` of
/// `shaders/sample.wgsl` (the local pose buffer) that `shaders/fused.wgsl` overrides (workgroup
/// memory).
pub(crate) trait SampleStore {
    /// The pose history (snapshots, then velocities), which snapshot samples read.
    fn history(&self) -> &[LocalPose];
    /// The same, where inertialized transitions keep their state.
    fn history_mut(&mut self) -> &mut [LocalPose];
    /// The local pose buffer's slot `slot` before this frame stores it: the pose the frame
    /// before showed ([`inertia::LAST_POSE`]); `None` where none is kept (the fused stage), which
    /// stands for the pose now (no velocity). WGSL `last_pose_at`.
    fn last_pose(&self, slot: u32) -> Option<LocalPose>;
    /// Stores joint `j`'s pose and mesh-space delta. WGSL `store_joint`.
    fn store_joint(
        &mut self,
        joint_offset: u32,
        j: u32,
        pose: LocalPose,
        delta: Vec4,
        keep_pose: bool,
        mesh_additive: bool,
    );
}

/// The staged pass's store: the local pose buffer (`frame.snapshot_offset` current poses, then
/// as many mesh-space deltas) and the pose history (as many snapshots, then as many velocities).
pub(crate) struct LocalBuffer<'a> {
    /// The page's joint capacity: where the second section of each buffer starts.
    pub(crate) snapshot_offset: u32,
    /// The local pose buffer.
    pub(crate) local: &'a mut [LocalPose],
    /// The pose history.
    pub(crate) history: &'a mut [LocalPose],
}

impl SampleStore for LocalBuffer<'_> {
    fn history(&self) -> &[LocalPose] {
        self.history
    }

    fn history_mut(&mut self) -> &mut [LocalPose] {
        self.history
    }

    fn last_pose(&self, slot: u32) -> Option<LocalPose> {
        Some(self.local[slot as usize])
    }

    fn store_joint(
        &mut self,
        joint_offset: u32,
        j: u32,
        pose: LocalPose,
        delta: Vec4,
        keep_pose: bool,
        mesh_additive: bool,
    ) {
        let slot = joint_offset + j;
        self.local[slot as usize] = pose;
        if keep_pose {
            // The pose shown this frame: the source of the transition that starts next frame.
            self.history[slot as usize] = pose;
        }
        if mesh_additive {
            self.local[(self.snapshot_offset + slot) as usize] = LocalPose {
                translation: Vec4::ZERO,
                rotation: delta,
                scale: Vec4::ZERO,
            };
        }
    }
}

/// Joint `slot`'s pose under the blend list's `inertia` bits, from its pose `now` and (with
/// [`inertia::PREVIOUS`]) `previous`, at the previous frame's times (with
/// [`inertia::LAST_POSE`], `last_pose`, the pose shown the frame before); `time`: seconds since the
/// source was last shown. `history`'s snapshot and velocity sections hold, per joint, the source's
/// last pose and velocity, which dead blending extrapolates and mixes into `now`; or, from the
/// first frame of an offset decay on ([`inertia::SWITCH`], which computes them), the decay of the
/// offset from the target to the source and of its velocity, which applies on top of `now`. Once
/// the transition is over (and the frame keeps no velocity) the pose is `now`, nothing read. WGSL
/// `inertia_joint`.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
fn inertia_joint(
    frame: &GpuFrame,
    inst: &GpuInstance,
    slot: u32,
    now: &LocalPose,
    previous: &LocalPose,
    last_pose: &LocalPose,
    bits: u32,
    time: f32,
    history: &mut [LocalPose],
) -> LocalPose {
    let dt = frame.dt;
    let duration = inst.transition_duration;
    // The pose history: snapshots, then (from the joint capacity) velocities.
    let snapshot_slot = slot as usize;
    let velocity_slot = (frame.snapshot_offset + slot) as usize;
    let mut out = *now;
    let mut before = *previous;
    let keep_velocity = bits & inertia::VELOCITY != 0;
    if !keep_velocity && !(time < duration) {
        return out;
    }
    let sampled_before = keep_velocity && bits & inertia::LAST_POSE == 0;
    if bits & inertia::LAST_POSE != 0 {
        before = *last_pose;
    }
    // The kept pose and velocity (or decay), read once.
    let (kept, kept_velocity) = (history[snapshot_slot], history[velocity_slot]);
    if bits & inertia::DEAD_BLEND != 0 {
        let source = kept;
        let velocity = PoseDelta::from_slot(&kept_velocity);
        out = dead_blend(&source, &velocity, now, time, duration, inst.halflife);
        if sampled_before {
            before = dead_blend(&source, &velocity, previous, time - dt, duration, inst.halflife);
        }
    } else if bits & inertia::OFFSET != 0 {
        let mut decay = Decay::from_slots(&kept, &kept_velocity);
        if bits & inertia::SWITCH != 0 {
            // The source's last pose and velocity against the target then (`previous`) and now:
            // the offset at the last source frame and its velocity over this one.
            let source = kept;
            let velocity = PoseDelta::from_slot(&kept_velocity);
            let x0 = pose_sub(&source, previous);
            let x1 = pose_sub(&pose_advance(&source, &velocity, dt), now);
            let mut v0 = PoseDelta::default();
            if dt >= super::inertia::VELOCITY_MIN_DT {
                v0 = PoseDelta {
                    t: x1.t - x0.t,
                    r: x1.r - x0.r,
                    s: x1.s - x0.s,
                }
                .scaled(1.0 / dt);
            }
            decay = Decay::start(&x0, &v0, duration);
            [history[snapshot_slot], history[velocity_slot]] = decay.to_slots();
        }
        out = pose_add(now, &decay.offset(time, duration));
        if sampled_before {
            before = pose_add(previous, &decay.offset(time - dt, duration));
        }
    }
    if keep_velocity {
        history[velocity_slot] = pose_velocity(&out, &before, dt).to_slot();
    }
    out
}

/// Instance `inst`'s joints `lid`, `lid + WORKGROUP_SIZE`, ... below `joint_count`: sampled,
/// blended, layered (and, with [`inertia::PREVIOUS`], again at the previous frame's times),
/// inertialized and stored. WGSL `sample_joints`.
pub(crate) fn sample_joints(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    inst: &GpuInstance,
    keyed: &KeyedList<'_>,
    lid: u32,
    joint_count: u32,
    store: &mut impl SampleStore,
) {
    let skel = &lib.gpu_skeletons()[inst.skeleton as usize];
    let list = keyed.list;
    let keep_pose = list.inertia & inertia::KEEP_POSE != 0;
    let mesh_additive = list.mesh_additive != 0;
    let bits = list.inertia;
    let passes = if bits & inertia::PREVIOUS != 0 { 2 } else { 1 };
    let mut j = lid;
    while j < joint_count {
        let snapshot_slot = inst.joint_offset + j;
        let retarget = retarget::retarget_joint_at(lib, inst.skeleton, skel, j);
        let rt = retarget.as_ref();
        let (mut pose, delta) = layered_joint(lib, keyed, skel, j, snapshot_slot, store.history(), 0, rt);
        let previous = if passes == 2 {
            layered_joint(
                lib,
                keyed,
                skel,
                j,
                snapshot_slot,
                store.history(),
                inertia::PREVIOUS_TAG,
                rt,
            )
            .0
        } else {
            LocalPose::default()
        };
        if bits != 0 {
            let slot = inst.joint_offset + j;
            let last_pose = if bits & inertia::LAST_POSE != 0 {
                store.last_pose(slot).unwrap_or(pose)
            } else {
                LocalPose::default()
            };
            pose = inertia_joint(
                frame,
                inst,
                slot,
                &pose,
                &previous,
                &last_pose,
                bits,
                list.inertia_time,
                store.history_mut(),
            );
        }
        store.store_joint(inst.joint_offset, j, pose, delta, keep_pose, mesh_additive);
        j += WORKGROUP_SIZE;
    }
}

/// What `sample` follows from instance `i`'s blend list: each sample's clip (with the instance's
/// joints; a snapshot reads the snapshot region, which the buffer check covers), and the mask of
/// each layer that is on (one of the library's masks, over at least the instance's joints).
pub(crate) fn check_list(
    lib: &AnimationLibrary,
    i: usize,
    skeleton: u32,
    joint_count: u32,
    list: &BlendList,
) -> Result<()> {
    let retarget = lib.retarget_at(skeleton);
    for (k, e) in list.samples[..list.count.min(MAX_BLEND_CLIPS) as usize]
        .iter()
        .enumerate()
    {
        if e.clip == SNAPSHOT_CLIP {
            continue;
        }
        let c = clip(lib, i, &format!("blend list sample {k}: "), e.clip)?;
        if let Some(r) = retarget {
            if c.skeleton != r.source {
                return Err(instance_error(
                    i,
                    format!(
                        "blend list sample {k}: clip {} animates skeleton {}, and skeleton {skeleton} plays skeleton {}'s clips through a retarget",
                        e.clip, c.skeleton, r.source
                    ),
                ));
            }
        } else if c.joint_count < joint_count {
            return Err(instance_error(
                i,
                format!(
                    "blend list sample {k}: clip {} animates {} joints, the instance {joint_count}",
                    e.clip, c.joint_count
                ),
            ));
        }
    }
    for (k, layer) in list.layers.iter().enumerate() {
        if layer.mode == layer_mode::OFF || layer.mask == NO_MASK {
            continue;
        }
        let fits = lib.masks().iter().any(|m| {
            m.offset == layer.mask
                && lib
                    .gpu_skeletons()
                    .get(m.skeleton as usize)
                    .is_some_and(|s| s.joint_count >= joint_count)
        });
        if !fits {
            return Err(instance_error(
                i,
                format!(
                    "blend list layer {k}: no mask of the library starts at {} with {joint_count} joints",
                    layer.mask
                ),
            ));
        }
    }
    Ok(())
}

/// The checks of [`sample`]: the instances and blend lists hold the frame's instances, whose
/// skeletons, joints and blend lists are valid; the local poses hold the current poses, the
/// snapshots, the mesh-space deltas (unless the frame has `FRAME_NO_DELTAS`, when no list may
/// apply a mesh-space layer) and with an inertialized transition the velocities, as far as the
/// joints reach.
fn check(lib: &AnimationLibrary, page: &PageBuffers<'_>) -> Result<()> {
    let frame = page.frame;
    let n = instance_count(
        frame,
        &[
            ("instances", page.instances.len()),
            ("blend lists", page.blend_lists.len()),
        ],
    )?;
    for (i, (inst, l)) in page.instances[..n].iter().zip(&*page.blend_lists).enumerate() {
        joints(lib, frame, i, inst)?;
        check_list(lib, i, inst.skeleton, inst.joint_count, l)?;
    }
    // The current poses, and the mesh-space deltas after them where a list applies such a
    // layer; the snapshots, and the velocities after them under an inertialized transition.
    let end = joint_end(&page.instances[..n]);
    let mesh = page.blend_lists[..n].iter().any(|l| l.mesh_additive != 0);
    let inertial = page.blend_lists[..n].iter().any(|l| l.inertia != 0);
    pose_buffer(
        frame,
        "the local pose buffer",
        page.local_poses.len(),
        u64::from(mesh),
        end,
    )?;
    pose_buffer(
        frame,
        "the pose history",
        page.pose_history.len(),
        u64::from(inertial),
        end,
    )?;
    morph_weights::check_morph_section(lib, frame, &page.instances[..n], &page.sections)
}

/// Stage `sample`: each of the frame's instances' joints, sampled, blended and layered from its
/// blend list. Binds the page's frame, instances, blend lists, local poses, which hold
/// `frame.snapshot_offset` current poses, then (for mesh-space additive layers) as many
/// mesh-space deltas, and the pose history, which holds as many snapshots, then (for
/// inertialized transitions) as many velocities (a second region only as far as the instances'
/// joints reach). With a library whose clips drive morph weights and the page's weights given
/// ([`PageBuffers::section`] of [`crate::shaders::Resource::MorphWeights`]), each instance's
/// weights in use too. WGSL `sample`.
///
/// Errors (nothing written): buffers too short for the frame; an instance whose skeleton does not
/// exist, whose joints lie beyond the frame's capacity, or whose blend list names a clip that does
/// not exist, has fewer joints, or a mask that is not one of the library's.
pub fn sample(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) -> Result<()> {
    check(lib, page)?;
    kernel(lib, page);
    Ok(())
}

/// Stage `sample`'s body, unchecked: one workgroup per instance, its threads striding over the
/// joints; each joint blends the samples of the instance's list and applies its layers.
pub(crate) fn kernel(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) {
    let frame = page.frame;
    let evaluated = page.evaluated();
    let mut store = LocalBuffer {
        snapshot_offset: frame.snapshot_offset,
        local: &mut *page.local_poses,
        history: &mut *page.pose_history,
    };
    let mut morph = lib
        .has_morph_weights()
        .then(|| morph_weights::morph_section(&mut page.sections))
        .flatten();
    for i in evaluated {
        let inst = &page.instances[i];
        let keyed = KeyedList::new(lib, &page.blend_lists[i]);
        for lid in 0..WORKGROUP_SIZE {
            sample_joints(lib, frame, inst, &keyed, lid, inst.joint_count, &mut store);
        }
        if let Some(weights) = morph.as_deref_mut() {
            morph_weights::sample_morph_weights(lib, frame, inst, keyed.list, weights);
        }
    }
}

pub(crate) mod checked;
pub(crate) mod morph_weights;
mod packed;
pub(crate) mod retarget;
pub(crate) use packed::sample_packed;
use retarget::{RetargetedJoint, played_joint};
