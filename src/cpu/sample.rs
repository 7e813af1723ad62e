//! Mirror of `shaders/sample.wgsl`.

use crate::clip::Interpolation;
use crate::layout::{GpuClip, GpuClock, GpuFrame, GpuInstance, GpuTrack, LocalPose, WORKGROUP_SIZE};
use crate::library::AnimationLibrary;
use crate::math::{hermite_basis, quat_interp};
use glam::Vec4;

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

/// Stage `sample`: one workgroup per instance, its threads striding over the joints.
pub fn sample(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    clocks: &[GpuClock],
    local: &mut [LocalPose],
) {
    for i in 0..frame.instance_count as usize {
        let inst = &instances[i];
        let clip = &lib.clips[inst.clip as usize];
        let t = clocks[i].sample_time;
        for lid in 0..WORKGROUP_SIZE {
            let mut j = lid;
            while j < inst.joint_count {
                local[(inst.joint_offset + j) as usize] = sample_joint(lib, clip, j, t);
                j += WORKGROUP_SIZE;
            }
        }
    }
}
