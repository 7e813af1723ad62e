//! The CPU's sampling of one clip timed, as `wgpu-anim time-sampling` reports it: a crowd playing
//! the clip, each character at its own phase and rate, sampled frame after frame by the mirror's
//! `sample` stage (one thread) and by [`ClipSampler`] (one per character), in nanoseconds per
//! joint-sample. This is the work ozz-animation's `SamplingJob` does, so the two compare on the
//! same take.

use super::median;
use crate::cpu::{self, ClipSampler};
use crate::error::{Error, Result};
use crate::layout::{BlendList, GpuFrame, GpuInstance, LocalPose};
use crate::library::{AnimationLibrary, ClipId};
use std::time::Instant;

/// Frames run before the measured ones.
const WARM_UP: usize = 3;

/// Most joints a crowd may have (characters × the clip's joints): the mirror's pose buffer then
/// takes 2.4 GB.
pub const MAX_SAMPLING_JOINTS: u32 = 1 << 24;

/// The frame step: 60 frames per second.
const FRAME_DT: f32 = 1.0 / 60.0;

/// What [`time_sampling`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplingConfig {
    /// Characters playing the clip.
    pub characters: u32,
    /// Measured frames (the medians are reported), after 3 warm-up frames.
    pub frames: usize,
    /// Scales every character's playback rate (each between 0.8 and 1.2 of the clip's): 1 is
    /// playback, 25 seeks far at every frame.
    pub rate: f32,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        Self {
            characters: 1000,
            frames: 30,
            rate: 1.0,
        }
    }
}

/// One clip's sampling cost on the CPU, one thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplingTimes {
    /// Joints the clip animates.
    pub joints: u32,
    /// The mirror's `sample` stage (each character a blend list of the one clip): nanoseconds per
    /// joint-sample, median frame.
    pub mirror_ns: f64,
    /// [`ClipSampler`]: nanoseconds per joint-sample, median frame.
    pub sampler_ns: f64,
    /// The largest difference between the two paths' poses, over every element of the last frame,
    /// a rotation against the nearer of the other and its negation (the stage normalizes and
    /// sign-aligns the blend of its one rotation: a rounding apart).
    pub max_difference: f32,
}

/// The largest difference of two poses' elements, a rotation's against the nearer of the other
/// and its negation (the same rotation: the stage may store either).
fn pose_difference(a: &LocalPose, b: &LocalPose) -> f32 {
    let rotation = (a.rotation - b.rotation)
        .abs()
        .max_element()
        .min((a.rotation + b.rotation).abs().max_element());
    (a.translation - b.translation)
        .abs()
        .max((a.scale - b.scale).abs())
        .max_element()
        .max(rotation)
}

/// Character `i`'s start time and rate: the golden-ratio phases of the frame benchmark's crowds.
fn phase_and_rate(i: u32, duration: f32, rate: f32) -> (f32, f32) {
    let (u, v) = ((i as f32 * 0.618).fract(), (i as f32 * 0.377).fract());
    (u * duration, (0.8 + 0.4 * v) * rate)
}

/// Times the CPU's sampling of `clip` of `lib` over a crowd (see the module's docs).
///
/// # Errors
///
/// [`Error::ForeignId`] when `clip` is of another library; [`Error::Limit`] for a crowd of more
/// than [`MAX_SAMPLING_JOINTS`] joints, or a configuration with no character or no frame.
pub fn time_sampling(lib: &AnimationLibrary, clip: ClipId, config: &SamplingConfig) -> Result<SamplingTimes> {
    let header = *lib.clip_header(clip)?;
    let (n, joints) = (config.characters, header.joint_count);
    let total = n
        .checked_mul(joints)
        .filter(|&t| n > 0 && config.frames > 0 && t <= MAX_SAMPLING_JOINTS)
        .ok_or_else(|| Error::Limit {
            what: format!(
                "{n} characters of {joints} joints over {} frames: nothing to time, or more than {MAX_SAMPLING_JOINTS} joints",
                config.frames
            ),
        })?;
    let duration = header.duration;
    let (mut times, rates): (Vec<f32>, Vec<f32>) = (0..n).map(|i| phase_and_rate(i, duration, config.rate)).unzip();
    let mut instances = (0..n)
        .map(|i| cpu::clip_instance(lib, clip, i * joints))
        .collect::<Result<Vec<GpuInstance>>>()?;
    let frame = GpuFrame {
        instance_count: n,
        snapshot_offset: total,
        ..Default::default()
    };
    let mut lists = vec![BlendList::default(); n as usize];
    let mut local = vec![LocalPose::default(); total as usize];
    let mut samplers = vec![ClipSampler::new(lib, clip)?; n as usize];
    let mut poses = vec![LocalPose::default(); total as usize];
    let (mut mirror_ms, mut sampler_ms) = (Vec::new(), Vec::new());
    for f in 0..WARM_UP + config.frames {
        for ((t, rate), list) in times.iter_mut().zip(&rates).zip(&mut lists) {
            *t = if duration > 0.0 {
                (*t + rate * FRAME_DT).rem_euclid(duration)
            } else {
                0.0
            };
            *list = BlendList::default();
            cpu::add_sample(list, clip.index(), *t, 1.0, 0);
        }
        let start = Instant::now();
        {
            let mut page = cpu::PageBuffers::new(&frame, &mut instances)
                .blend_lists(&mut lists)
                .local_poses(&mut local);
            cpu::sample::kernel(lib, &mut page);
        }
        let mirror = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        for ((sampler, &t), out) in samplers
            .iter_mut()
            .zip(&times)
            .zip(poses.chunks_exact_mut(joints as usize))
        {
            sampler.sample(lib, t, out)?;
        }
        let sampler = start.elapsed().as_secs_f64() * 1e3;
        if f >= WARM_UP {
            mirror_ms.push(mirror);
            sampler_ms.push(sampler);
        }
    }
    let max_difference = local[..total as usize]
        .iter()
        .zip(&poses)
        .map(|(a, b)| pose_difference(a, b))
        .fold(0.0, f32::max);
    let per_joint_sample = |ms: Vec<f64>| median(ms) * 1e6 / f64::from(total);
    Ok(SamplingTimes {
        joints,
        mirror_ns: per_joint_sample(mirror_ms),
        sampler_ns: per_joint_sample(sampler_ms),
        max_difference,
    })
}
