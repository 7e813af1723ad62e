//! A fast CPU path beside the mirror: one clip sampled at successive times, as a CPU-side
//! character, a server or a tool plays it.
//!
//! [`ClipSampler`] keeps, for every animated track, the pair of keys it last interpolated and the
//! times it holds for: the next time inside them costs a comparison and the interpolation, one a
//! few keys on a short step forward, any other the mirror's binary search. The key pairs sit four
//! tracks of a kind side by side (rotations apart from translations and scales; tracks keyed at
//! the same times together, so that one search finds the keys of a group's four lanes, as a take
//! exported at one rate has it) and are interpolated four at a time, each lane with the mirror's operations in the mirror's order: the
//! key pair is the one the mirror's search finds, and the fraction, the sign alignment, the angle,
//! the weights and the normalization are those of the mirror's `sample_track` and `fast_slerp`.
//! So the values are the mirror's `sample_joint`, bit for bit where glam's `Vec4` uses SSE2
//! (x86-64), and to within a rounding elsewhere (`tests/clip_sampler.rs`).

use super::sample::{key_before, sample_channel};
use crate::clip::Interpolation;
use crate::error::{Error, Result};
use crate::layout::{GpuClip, GpuTrack, LocalPose};
use crate::library::{AnimationLibrary, ClipId};
use crate::math::{ACOS_P, sin_over_x4};
use glam::{BVec4A, Mat4, Vec4};
use std::sync::Arc;

const INTERP_LINEAR: u32 = Interpolation::Linear.gpu_code();
const INTERP_STEP: u32 = Interpolation::Step.gpu_code();
const INTERP_CUBIC: u32 = Interpolation::CubicSpline.gpu_code();

/// Keys stepped over one by one before a binary search takes over: playback at 60 Hz of a take
/// keyed at up to 240 Hz moves at most four keys a frame.
const FORWARD_STEPS: usize = 4;

/// A lane of a [`Group`] that holds no track.
const NO_TRACK: u32 = u32::MAX;

/// Four animated raw tracks of one kind (rotations, or translations and scales), lane by lane:
/// each lane's key pair, valid for times in `[t0, until)`, the keys `a` at `t0` and `b` at
/// `t0 + dt` (`dt` 0 past the last key or for a step, where the value is `a`), as four lanes per
/// component. A time before a track's first key misses each time and finds the first pair again,
/// as the mirror does. An empty lane holds every time and is never written. Lanes are plain arrays
/// (one lane is written at a time), read as `Vec4`s.
#[derive(Clone, Copy, Debug)]
struct Group {
    t0: Lanes,
    until: Lanes,
    dt: Lanes,
    /// `a` and `b` by component: x, y, z, w lanes. A rotation's `b` is already on `a`'s side.
    a: [Lanes; 4],
    b: [Lanes; 4],
    /// A rotation lane's angle between `a` and `b`.
    theta: Lanes,
    /// Each lane's key before (the mirror's `lo`), where a search forward starts.
    lo: [u32; 4],
}

/// One value per lane.
type Lanes = [f32; 4];

/// Four lanes of components as `Vec4`s.
fn vec4s(lanes: &[Lanes; 4]) -> [Vec4; 4] {
    [
        Vec4::from_array(lanes[0]),
        Vec4::from_array(lanes[1]),
        Vec4::from_array(lanes[2]),
        Vec4::from_array(lanes[3]),
    ]
}

impl Group {
    const EMPTY: Self = Self {
        t0: [f32::NEG_INFINITY; 4],
        until: [f32::INFINITY; 4],
        dt: [0.0; 4],
        a: [[0.0; 4], [0.0; 4], [0.0; 4], [1.0; 4]],
        b: [[0.0; 4], [0.0; 4], [0.0; 4], [1.0; 4]],
        theta: [0.0; 4],
        lo: [0; 4],
    };

    /// Sets lane `k` to the key pair of `track` (raw linear or step, two keys or more) holding
    /// `t`: the key before `t` (or the first) and the next (or the same), found forward from the
    /// lane's key when `t` lies a few keys on, else by the mirror's binary search. A rotation
    /// group then needs [`Self::align`].
    fn find(&mut self, k: usize, times: &[f32], values: &[Vec4], track: &GpuTrack, t: f32) {
        let keys = &times[track.time_offset as usize..][..track.key_count as usize];
        let lo = key_after_steps(keys, t, self.lo[k] as usize).unwrap_or_else(|| key_before(keys, t));
        let hi = (lo + 1).min(keys.len() - 1);
        let a = values[track.value_offset as usize + lo].to_array();
        let b = values[track.value_offset as usize + hi].to_array();
        self.t0[k] = keys[lo];
        self.until[k] = if hi == lo { f32::INFINITY } else { keys[hi] };
        // The mirror's fraction is 0 for a step: the value is the key before.
        self.dt[k] = if track.interpolation == INTERP_STEP {
            0.0
        } else {
            keys[hi] - keys[lo]
        };
        self.lo[k] = lo as u32;
        for c in 0..4 {
            self.a[c][k] = a[c];
            self.b[c][k] = b[c];
        }
    }

    /// Sets every lane in use to its track's key pair holding `inputs.time`, the tracks keyed at
    /// the same times: [`Self::find`]'s search once, from lane 0's key, for all of them.
    fn find_shared(&mut self, lanes: &[(u32, u32); 4], inputs: &Inputs<'_>) {
        let Some(first) = inputs.tracks.get(lanes[0].1 as usize) else {
            return;
        };
        let (times, values, t) = (inputs.times, inputs.values, inputs.time);
        let keys = &times[first.time_offset as usize..][..first.key_count as usize];
        let lo = key_after_steps(keys, t, self.lo[0] as usize).unwrap_or_else(|| key_before(keys, t));
        let hi = (lo + 1).min(keys.len() - 1);
        let until = if hi == lo { f32::INFINITY } else { keys[hi] };
        let dt = if first.interpolation == INTERP_STEP {
            0.0
        } else {
            keys[hi] - keys[lo]
        };
        for (k, &(_, track)) in lanes.iter().enumerate() {
            let Some(track) = inputs.tracks.get(track as usize) else {
                continue;
            };
            let a = values[track.value_offset as usize + lo].to_array();
            let b = values[track.value_offset as usize + hi].to_array();
            self.t0[k] = keys[lo];
            self.until[k] = until;
            self.dt[k] = dt;
            self.lo[k] = lo as u32;
            for c in 0..4 {
                self.a[c][k] = a[c];
                self.b[c][k] = b[c];
            }
        }
    }

    /// A rotation group's `b` on `a`'s side and the angle between them, in every lane:
    /// `fast_slerp_angle` four lanes at a time, the dot product summed as glam sums it,
    /// (x + z) + (y + w). Again on an aligned lane, the same (the dot product only changes sign).
    fn align(&mut self) {
        let [a, b] = [vec4s(&self.a), vec4s(&self.b)];
        let d = (a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3]);
        let flip = d.cmplt(Vec4::ZERO);
        for (lanes, b) in self.b.iter_mut().zip(b) {
            *lanes = Vec4::select(flip, -b, b).to_array();
        }
        let x = d.abs().min(Vec4::ONE);
        let p = ACOS_P.iter().rev().fold(Vec4::ZERO, |acc, &c| Vec4::splat(c) + x * acc);
        self.theta = ((Vec4::ONE - x).sqrt() * p).to_array();
    }

    /// The four lanes at `t` (each inside its pair's times, or before its first key), by
    /// component: `sample_track`'s value from the key pair, a rotation by `fast_slerp`.
    #[inline]
    fn values(&self, t: Vec4, rotation: bool) -> [Vec4; 4] {
        let (t0, dt) = (Vec4::from_array(self.t0), Vec4::from_array(self.dt));
        let u = Vec4::select(
            dt.cmpgt(Vec4::ZERO),
            ((t - t0) / dt).clamp(Vec4::ZERO, Vec4::ONE),
            Vec4::ZERO,
        );
        let at_a = u.cmple(Vec4::ZERO);
        let [a, b] = [vec4s(&self.a), vec4s(&self.b)];
        let mut v = [Vec4::ZERO; 4];
        if rotation {
            // `fast_slerp`'s weights, then its normalization: each component times the
            // reciprocal of the square root of the dot product, summed as glam sums it,
            // (x² + z²) + (y² + w²).
            let theta = Vec4::from_array(self.theta);
            let wa = (Vec4::ONE - u) * sin_over_x4((Vec4::ONE - u) * theta);
            let wb = u * sin_over_x4(u * theta);
            for c in 0..4 {
                v[c] = a[c] * wa + b[c] * wb;
            }
            let recip = Vec4::ONE / ((v[0] * v[0] + v[2] * v[2]) + (v[1] * v[1] + v[3] * v[3])).sqrt();
            for c in 0..4 {
                v[c] = Vec4::select(at_a, a[c], v[c] * recip);
            }
        } else {
            for c in 0..4 {
                v[c] = Vec4::select(at_a, a[c], a[c] * (Vec4::ONE - u) + b[c] * u);
            }
        }
        v
    }
}

/// What every sampler of one clip shares: where each joint's channels come from.
#[derive(Debug)]
struct Plan {
    /// Every joint's pose with its tracks of a single key in place (the mirror's value of each),
    /// copied out first.
    template: Vec<LocalPose>,
    /// Per group, each lane's output slot and track (an index in the library's tracks), or
    /// [`NO_TRACK`]; the first `rotation_groups` groups hold rotations.
    lanes: Vec<[(u32, u32); 4]>,
    /// Per group, whether its tracks share their key times (and interpolation): one search
    /// finds the key pair of every lane.
    shared: Vec<bool>,
    rotation_groups: usize,
    /// Animated cubic-spline and compressed tracks, sampled as the mirror samples them: slot and
    /// track.
    mirrored: Vec<(u32, u32)>,
}

/// Samples one clip of a library on the CPU at successive times, faster than the mirror's
/// search per track, with the same values.
///
/// The sampler keeps the key pair each animated track last used (52 bytes per track; tracks of a
/// single key come from a pose of the clip's that every clone shares): keep one per playing
/// character, as ozz-animation keeps a sampling context; a clone shares the clip's layout and
/// copies the cache. Times may go
/// forward, backward or jump (a loop's wrap, a seek); forward by a few keys is cheapest.
/// Cubic-spline and compressed tracks are sampled as the mirror samples them, without the cache.
///
/// ```
/// use wgpu_anim::cpu::{self, ClipSampler};
/// let (lib, _, clips) = wgpu_anim::mannequin::library();
/// let mut sampler = ClipSampler::new(&lib, clips[0])?;
/// let mut pose = vec![Default::default(); sampler.joint_count()];
/// for frame in 0..120 {
///     sampler.sample(&lib, frame as f32 / 60.0, &mut pose)?;
/// }
/// let header = lib.clip_header(clips[0])?;
/// let mirror = cpu::sample_joint(&lib, header, 3, 119.0 / 60.0)?;
/// assert!((pose[3].rotation - mirror.rotation).abs().max_element() < 1e-6);
/// # Ok::<(), wgpu_anim::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClipSampler {
    clip: ClipId,
    header: GpuClip,
    plan: Arc<Plan>,
    groups: Vec<Group>,
}

impl ClipSampler {
    /// A sampler of `clip`, a clip of `lib`, its cache set for time 0.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `clip`.
    pub fn new(lib: &AnimationLibrary, clip: ClipId) -> Result<Self> {
        let header = *lib.clip_header(clip)?;
        let first = header.track_offset;
        let tracks = &lib.tracks()[first as usize..][..3 * header.joint_count as usize];
        let mut template = vec![LocalPose::default(); header.joint_count as usize];
        let constants: &mut [Vec4] = bytemuck::cast_slice_mut(&mut template);
        let mut mirrored = Vec::new();
        let (mut rotations, mut others) = (Vec::new(), Vec::new());
        for (slot, track) in (0u32..).zip(tracks) {
            let index = first + slot;
            if track.key_count <= 1 {
                // The mirror's single key: the value, or a cubic spline's value between its
                // tangents.
                let at = u32::from(track.interpolation == INTERP_CUBIC);
                let v = lib.values()[(track.value_offset + at) as usize];
                constants[slot as usize] = if slot % 3 == 1 { v } else { v.truncate().extend(0.0) };
            } else if track.interpolation == INTERP_LINEAR || track.interpolation == INTERP_STEP {
                if slot % 3 == 1 { &mut rotations } else { &mut others }.push((slot, index));
            } else {
                mirrored.push((slot, index));
            }
        }
        // Tracks keyed at the same times side by side (the library keeps one copy of each
        // distinct key-time array), so that a group's lanes mostly share one search.
        let keyed = |&(_, index): &(u32, u32)| {
            let t = &lib.tracks()[index as usize];
            (t.time_offset, t.key_count, t.interpolation)
        };
        let in_fours = |mut lanes: Vec<(u32, u32)>| -> Vec<[(u32, u32); 4]> {
            lanes.sort_by_key(keyed);
            lanes
                .chunks(4)
                .map(|c| std::array::from_fn(|k| c.get(k).copied().unwrap_or((NO_TRACK, NO_TRACK))))
                .collect()
        };
        let mut lanes = in_fours(rotations);
        let rotation_groups = lanes.len();
        lanes.extend(in_fours(others));
        let shared = lanes
            .iter()
            .map(|group| {
                let mut used = group.iter().filter(|l| l.1 != NO_TRACK).map(keyed);
                let first = used.next();
                used.all(|k| Some(k) == first)
            })
            .collect();
        let plan = Plan {
            template,
            lanes,
            shared,
            rotation_groups,
            mirrored,
        };
        let mut groups = vec![Group::EMPTY; plan.lanes.len()];
        for (g, (group, lanes)) in groups.iter_mut().zip(&plan.lanes).enumerate() {
            for (k, &(_, track)) in lanes.iter().enumerate().filter(|(_, l)| l.1 != NO_TRACK) {
                let track = &lib.tracks()[track as usize];
                group.find(k, lib.times(), lib.values(), track, 0.0);
            }
            if g < rotation_groups {
                group.align();
            }
        }
        Ok(Self {
            clip,
            header,
            plan: Arc::new(plan),
            groups,
        })
    }

    /// The clip this sampler samples.
    #[must_use]
    pub fn clip(&self) -> ClipId {
        self.clip
    }

    /// Joints the clip animates: the length `out` needs in [`Self::sample`].
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.header.joint_count as usize
    }

    /// Every joint's local pose at `time` seconds, clamped to each track's keys as the mirror
    /// clamps them (no looping: wrap `time` into the clip first to loop it), into
    /// `out[..joint_count]`.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when `lib` is not the library the sampler was made with;
    /// [`Error::Limit`] when `time` is NaN or `out` holds fewer poses than the clip has joints.
    /// Nothing is written.
    pub fn sample(&mut self, lib: &AnimationLibrary, time: f32, out: &mut [LocalPose]) -> Result<()> {
        if *lib.clip_header(self.clip)? != self.header {
            return Err(Error::Limit {
                what: format!(
                    "clip {} of this library is not the clip the sampler was made for",
                    self.clip.index()
                ),
            });
        }
        if time.is_nan() {
            return Err(Error::Limit {
                what: format!("clip {} sampled at a time that is not a number", self.clip.index()),
            });
        }
        let joints = self.joint_count();
        let Some(out) = out.get_mut(..joints) else {
            return Err(Error::Limit {
                what: format!(
                    "{} local poses given for clip {}, which animates {joints} joints",
                    out.len(),
                    self.clip.index()
                ),
            });
        };
        let plan = &*self.plan;
        out.copy_from_slice(&plan.template);
        let slots: &mut [Vec4] = bytemuck::cast_slice_mut(out);
        let (tracks, times, values) = (lib.tracks(), lib.times(), lib.values());
        let (rotations, others) = self.groups.split_at_mut(plan.rotation_groups);
        let (rotation_lanes, other_lanes) = plan.lanes.split_at(plan.rotation_groups);
        let (rotation_shared, other_shared) = plan.shared.split_at(plan.rotation_groups);
        let inputs = Inputs {
            tracks,
            times,
            values,
            time,
        };
        sample_groups::<true>(rotations, rotation_lanes, rotation_shared, &inputs, slots);
        sample_groups::<false>(others, other_lanes, other_shared, &inputs, slots);
        for &(slot, track) in &plan.mirrored {
            let v = sample_channel(lib, &tracks[track as usize], time, slot % 3 == 1);
            slots[slot as usize] = if slot % 3 == 1 { v } else { v.truncate().extend(0.0) };
        }
        Ok(())
    }
}

/// What a frame's groups read: the library's tracks, key times and values, and the time.
struct Inputs<'a> {
    tracks: &'a [GpuTrack],
    times: &'a [f32],
    values: &'a [Vec4],
    time: f32,
}

/// Groups of rotations (`ROTATION`) or of translations and scales at `inputs.time`: each lane's
/// key pair found again where the time has left it, the values written to the lanes' slots.
fn sample_groups<const ROTATION: bool>(
    groups: &mut [Group],
    lanes: &[[(u32, u32); 4]],
    shared: &[bool],
    inputs: &Inputs<'_>,
    slots: &mut [Vec4],
) {
    let t = Vec4::splat(inputs.time);
    // First every lane's key pair found again where the time has left it, then the values: the
    // second loop has no branch to wait on, so a CPU overlaps one group's long chain of
    // arithmetic (a division, two polynomials, a square root, divisions) with the next's.
    for ((group, lanes), &shared) in groups.iter_mut().zip(lanes).zip(shared) {
        let hit: BVec4A = t.cmpge(Vec4::from_array(group.t0)) & t.cmplt(Vec4::from_array(group.until));
        let mut missed = !hit.bitmask() & 0xf;
        if missed != 0 {
            if shared {
                // Every lane in use holds the same times: each missed, and one search serves all.
                group.find_shared(lanes, inputs);
                missed = 0;
            }
            while missed != 0 {
                let k = missed.trailing_zeros() as usize;
                missed &= missed - 1;
                // An empty lane misses only an infinite time.
                if let Some(track) = inputs.tracks.get(lanes[k].1 as usize) {
                    group.find(k, inputs.times, inputs.values, track, inputs.time);
                }
            }
            if ROTATION {
                group.align();
            }
        }
    }
    for (group, lanes) in groups.iter().zip(lanes) {
        let [x, y, z, w] = group.values(t, ROTATION);
        // Lanes to poses: the columns of the transpose.
        let w = if ROTATION { w } else { Vec4::ZERO };
        let poses = Mat4::from_cols(x, y, z, w).transpose();
        let columns = [poses.x_axis, poses.y_axis, poses.z_axis, poses.w_axis];
        for (&(slot, _), column) in lanes.iter().zip(columns) {
            if let Some(out) = slots.get_mut(slot as usize) {
                *out = column;
            }
        }
    }
}

/// The largest key of `keys` (sorted) at or before `t`, found by up to [`FORWARD_STEPS`] steps
/// forward from `from_key` (at or before `t`, which is not NaN); `None` when `t` lies before
/// `from_key` or further on, where the mirror's binary search answers.
fn key_after_steps(keys: &[f32], t: f32, from_key: usize) -> Option<usize> {
    let mut k = from_key;
    if k >= keys.len() || keys[k] > t {
        return None;
    }
    for _ in 0..FORWARD_STEPS {
        match keys.get(k + 1) {
            Some(&next) if next <= t => k += 1,
            _ => return Some(k),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::{Clip, JointTrack, Track};
    use crate::{JointDesc, LibraryBuilder, Skeleton, Transform};
    use glam::{Quat, Vec3};

    /// Groups of tracks keyed at the same times search once for every lane, the others lane by
    /// lane; both give the mirror's values.
    #[test]
    fn groups_that_share_key_times_search_once_and_match_the_mirror() {
        let joints = (0..6usize)
            .map(|k| JointDesc {
                name: format!("j{k}"),
                parent: k.checked_sub(1),
                rest: Transform::IDENTITY,
                inverse_bind: Mat4::IDENTITY,
            })
            .collect();
        let skeleton = Skeleton::new("chain", joints).unwrap();
        // Joints 0 to 3 keyed at `a` (joint 3 stepped), 4 and 5 at `b`.
        let (a, b) = (vec![0.0, 0.5, 1.0], vec![0.0, 0.3, 0.7, 1.0]);
        let tracks = (0..6)
            .map(|k| {
                let times = if k < 4 { a.clone() } else { b.clone() };
                let values = (0..times.len())
                    .map(|n| Quat::from_axis_angle(Vec3::new(1.0, k as f32, 0.5).normalize(), 0.7 * (n + k) as f32))
                    .collect();
                let interpolation = if k == 3 {
                    Interpolation::Step
                } else {
                    Interpolation::Linear
                };
                JointTrack {
                    joint: format!("j{k}"),
                    translation: None,
                    rotation: Some(Track {
                        interpolation,
                        times,
                        values,
                    }),
                    scale: None,
                }
            })
            .collect();
        let clip = Clip {
            name: "c".into(),
            duration: 1.0,
            looping: true,
            tracks,
            events: Vec::new(),
            curves: Vec::new(),
            morph_weights: Vec::new(),
        };
        let mut builder = LibraryBuilder::new();
        let s = builder.add_skeleton(skeleton);
        let id = builder.add_clip(s, &clip).unwrap();
        let lib = builder.build();
        let mut sampler = ClipSampler::new(&lib, id).unwrap();
        // Four tracks at `a` (three linear, one stepped): not shared; two at `b`: shared.
        assert_eq!(sampler.plan.rotation_groups, 2);
        assert_eq!(sampler.plan.shared[..2], [false, true]);
        let header = *lib.clip_header(id).unwrap();
        let mut pose = vec![LocalPose::default(); 6];
        for t in [0.0, 0.1, 0.3, 0.31, 0.5, 0.69, 0.7, 0.95, 1.0, 1.5, 0.2, -0.5, 0.8] {
            sampler.sample(&lib, t, &mut pose).unwrap();
            for (j, got) in (0u32..).zip(&pose) {
                let want = crate::cpu::sample_joint(&lib, &header, j, t).unwrap();
                let near = (got.rotation - want.rotation).abs().max_element() <= 1e-6;
                assert!(near, "joint {j} at {t}: {got:?} against {want:?}");
            }
        }
    }
}
