//! Mirror of `shaders/sample.wgsl`.

use crate::clip::Interpolation;
use crate::layout::{
    BlendList, GpuClip, GpuFrame, GpuInstance, GpuSkeleton, GpuTrack, LocalPose, MAX_BLEND_CLIPS, MIN_BLEND_WEIGHT,
    SNAPSHOT_CLIP, WORKGROUP_SIZE,
};
use crate::library::AnimationLibrary;
use crate::math::{hermite_basis, quat_interp};
use glam::{Vec3, Vec4};

const INTERP_STEP: u32 = Interpolation::Step.gpu_code();
const INTERP_LINEAR: u32 = Interpolation::Linear.gpu_code();
const INTERP_CUBIC: u32 = Interpolation::CubicSpline.gpu_code();

fn key_value(values: &[Vec4], track: &GpuTrack, k: u32) -> Vec4 {
    if track.interpolation == INTERP_CUBIC {
        return values[(track.value_offset + 3 * k + 1) as usize];
    }
    values[(track.value_offset + k) as usize]
}

/// A track at time `t`, clamped to its keys. WGSL `sample_track`.
#[must_use]
pub fn sample_track(times: &[f32], values: &[Vec4], track: &GpuTrack, t: f32, rotation: bool) -> Vec4 {
    let n = track.key_count;
    let base = track.time_offset as usize;
    if n <= 1 || t <= times[base] {
        return key_value(values, track, 0);
    }
    if t >= times[base + n as usize - 1] {
        return key_value(values, track, n - 1);
    }
    let mut lo = 0u32;
    let mut hi = n - 1;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if times[base + mid as usize] <= t {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t0 = times[base + lo as usize];
    let dt = times[base + hi as usize] - t0;
    let u = (t - t0) / dt;
    let vo = track.value_offset;
    if track.interpolation == INTERP_STEP {
        return values[(vo + lo) as usize];
    }
    if track.interpolation == INTERP_LINEAR {
        let a = values[(vo + lo) as usize];
        let b = values[(vo + hi) as usize];
        if rotation {
            return quat_interp(a, b, u);
        }
        return a * (1.0 - u) + b * u;
    }
    let h = hermite_basis(u);
    let p0 = values[(vo + 3 * lo + 1) as usize];
    let m0 = values[(vo + 3 * lo + 2) as usize] * dt;
    let p1 = values[(vo + 3 * hi + 1) as usize];
    let m1 = values[(vo + 3 * hi) as usize] * dt;
    let v = p0 * h.x + m0 * h.y + p1 * h.z + m1 * h.w;
    if rotation {
        return v.normalize();
    }
    v
}

/// Joint `j` of `clip` at time `t`. WGSL `sample_joint`.
#[must_use]
pub fn sample_joint(lib: &AnimationLibrary, clip: &GpuClip, j: u32, t: f32) -> LocalPose {
    let first = (clip.track_offset + 3 * j) as usize;
    let translation = sample_track(&lib.times, &lib.values, &lib.tracks[first], t, false);
    let rotation = sample_track(&lib.times, &lib.values, &lib.tracks[first + 1], t, true);
    let scale = sample_track(&lib.times, &lib.values, &lib.tracks[first + 2], t, false);
    LocalPose {
        translation: translation.truncate().extend(0.0),
        rotation,
        scale: scale.truncate().extend(0.0),
    }
}

/// Joint `j` of an instance: the weighted, order-independent blend of its list's samples, with
/// rest-pose fill below [`MIN_BLEND_WEIGHT`]. `local` is the whole local pose buffer (the snapshot
/// half included). WGSL `blend_joint`.
#[must_use]
pub fn blend_joint(
    lib: &AnimationLibrary,
    list: &BlendList,
    skel: &GpuSkeleton,
    j: u32,
    snapshot_slot: u32,
    local: &[LocalPose],
) -> LocalPose {
    let mut t = Vec3::ZERO;
    let mut s = Vec3::ZERO;
    let mut q = Vec4::ZERO;
    let mut q_ref = Vec4::W;
    let mut total = 0.0;
    for k in 0..list.count.min(MAX_BLEND_CLIPS) as usize {
        let e = &list.samples[k];
        let p = if e.clip == SNAPSHOT_CLIP {
            local[snapshot_slot as usize]
        } else {
            sample_joint(lib, &lib.clips[e.clip as usize], j, e.time)
        };
        if k == 0 {
            q_ref = p.rotation;
        }
        let mut w = e.weight;
        t += p.translation.truncate() * w;
        s += p.scale.truncate() * w;
        if q_ref.dot(p.rotation) < 0.0 {
            w = -w;
        }
        q += p.rotation * w;
        total += e.weight;
    }
    let fill = (MIN_BLEND_WEIGHT - total).max(0.0);
    if fill > 0.0 {
        let r = (skel.rest_offset + 3 * j) as usize;
        let rest_q = lib.values[r + 1];
        let mut wq = fill;
        if q_ref.dot(rest_q) < 0.0 {
            wq = -fill;
        }
        t += lib.values[r].truncate() * fill;
        q += rest_q * wq;
        s += lib.values[r + 2].truncate() * fill;
    }
    let sum = total + fill;
    LocalPose {
        translation: (t / sum).extend(0.0),
        rotation: q.normalize(),
        scale: (s / sum).extend(0.0),
    }
}

/// Stage `sample`: one workgroup per instance, its threads striding over the joints; each joint
/// blends the samples of the instance's list. `local` holds `frame.snapshot_offset` current poses
/// followed by the snapshots.
pub fn sample(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    lists: &[BlendList],
    local: &mut [LocalPose],
) {
    for i in 0..frame.instance_count as usize {
        let inst = &instances[i];
        let list = &lists[i];
        let skel = &lib.gpu_skeletons[inst.skeleton as usize];
        for lid in 0..WORKGROUP_SIZE {
            let mut j = lid;
            while j < inst.joint_count {
                let slot = inst.joint_offset + j;
                let snapshot_slot = frame.snapshot_offset + slot;
                if list.take_snapshot != 0 {
                    local[snapshot_slot as usize] = local[slot as usize];
                }
                local[slot as usize] = blend_joint(lib, list, skel, j, snapshot_slot, local);
                j += WORKGROUP_SIZE;
            }
        }
    }
}
