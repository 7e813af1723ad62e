//! Cross-fades against inertialized transitions ([`compare_transitions`]): three crowds of the
//! `locomotion-2d` workload (the blend space, three clips per pose), in one of which a quarter of
//! the characters always cross-fade from one velocity to the next, in another always
//! inertialize, and in the third cut to the same states at the same frames (no transition). Each
//! transitioning character starts a new transition as soon as its last one ends, the starts
//! spread evenly over the frames, so that every frame carries its share of the frames that keep
//! a velocity (before an inertialization) and that start one. The `sample` pass of the three is
//! timed with timestamp queries, crowd after crowd frame by frame, so that a slow spell of a
//! shared machine falls on all three.
//!
//! A transitioning character's share of the pass is its share of the quiet crowd's (every
//! character's sampling) plus the crowd's extra time over the quiet one, spread over the
//! transitioning characters: a cross-fade samples the source and the target, an inertialization
//! the target and its kept offset. The same shares are taken of the CPU mirror's `sample` stage
//! (one thread), run on each crowd's last frame as the GPU left it (its blend lists, kept poses,
//! offsets and velocities): the mirror computes what the shader does the same way, and its time
//! is not lavapipe's, whose cost per character in this pass barely depends on the samples.

use super::gpu::sample_pass_ms;
use super::{Config, DT, PathKind, median};
use crate::error::{Error, Result};
use crate::gpu::{PassTimer, Transition};
use crate::offline::compress::ClipFormat;
use crate::{Animator, AnimatorDesc, InstanceDesc, mannequin};
use serde::{Deserialize, Serialize};

/// One crowd size, cross-fading against inertializing a quarter of the characters (module docs).
/// Times are medians over the measured frames, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransitionComparison {
    /// Characters in each crowd (the `locomotion-2d` workload, compressed clips).
    pub characters: u32,
    /// Characters that transition, a quarter: each is transitioning 28 frames out of 30.
    pub transitioning: u32,
    /// Length of each transition, seconds (frames of [`DT`]).
    pub duration: f32,
    /// Frames measured of each crowd.
    pub frames: u32,
    /// The `sample` pass with no character transitioning (the quarter cuts to the same states).
    pub quiet_sample_ms: f64,
    /// The `sample` pass with a quarter cross-fading.
    pub cross_fade_sample_ms: f64,
    /// The `sample` pass with a quarter inertializing (Bollo's offset decay).
    pub inertialized_sample_ms: f64,
    /// A cross-fading character's share of the pass, µs (module docs).
    pub cross_fade_us: f64,
    /// An inertializing character's share of the pass, µs.
    pub inertialized_us: f64,
    /// `inertialized_us ÷ cross_fade_us`: the goal is 0.6 or less.
    pub ratio: f64,
    /// The CPU mirror's `sample` stage on the three crowds' last frames, one thread, ms
    /// (quiet, cross-fading, inertializing; medians of five runs).
    pub mirror_sample_ms: [f64; 3],
    /// The mirror's shares per cross-fading and inertializing character, µs.
    pub mirror_us: [f64; 2],
    /// `mirror_us[1] ÷ mirror_us[0]`.
    pub mirror_ratio: f64,
}

/// Runs of the CPU mirror's `sample` stage per crowd.
pub const MIRROR_RUNS: usize = 5;

/// The CPU mirror's `sample` stage on page 0 of `a` as the GPU left it, one thread: the median of
/// [`MIRROR_RUNS`] runs, ms.
fn time_mirror_sample(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Result<f64> {
    let max = a.max_joints() as usize;
    // The buffers' sections as the page lays them out: the current poses and (with layers) the
    // mesh-space deltas; the snapshots and the velocities.
    let sections = |regions: &[u32]| -> Result<Vec<crate::layout::LocalPose>> {
        let mut out = vec![crate::layout::LocalPose::default(); regions.len() * max];
        for (k, &region) in regions.iter().enumerate() {
            let r = a.read_local_region_page(device, queue, 0, region)?;
            out[k * max..k * max + r.len()].copy_from_slice(&r);
        }
        Ok(out)
    };
    let local = sections(if a.controller().layers() { &[0, 2] } else { &[0] })?;
    let history = sections(if a.controller().inertialization() {
        &[1, 3]
    } else {
        &[1]
    })?;
    let lists = a.read_blend_lists_page(device, queue, 0)?;
    let instances = a.page_instances(0).to_vec();
    let frame = crate::layout::GpuFrame {
        dt: DT,
        instance_count: instances.len() as u32,
        snapshot_offset: a.page_max_joints(0),
        flags: a.frame_uniform(0).map_or(0, |f| f.flags),
        ..Default::default()
    };
    let mut runs = Vec::with_capacity(MIRROR_RUNS);
    for _ in 0..MIRROR_RUNS {
        // Each run from the same state: the first frame of an offset writes it.
        let (mut local, mut history) = (local.clone(), history.clone());
        let (mut lists, mut instances) = (lists.clone(), instances.clone());
        let mut page = crate::cpu::PageBuffers::new(&frame, &mut instances)
            .blend_lists(&mut lists)
            .local_poses(&mut local)
            .pose_history(&mut history);
        let start = std::time::Instant::now();
        crate::cpu::sample::kernel(a.library(), &mut page);
        runs.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(runs))
}

/// The three crowds: quiet, cross-fading, inertializing.
const CROWDS: usize = 3;

/// A crowd of `n` mannequins walking or running through the locomotion blend space each at its
/// own velocity, with room for inertialized transitions; and the states character `i` goes to,
/// in turn: the blend space at other velocities.
fn crowd(device: &wgpu::Device, n: u32) -> Result<(Animator, Vec<InstanceDesc>)> {
    let (lib, _, _) = mannequin::library_in(ClipFormat::Compressed);
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION).ok_or_else(|| Error::Limit {
        what: "the built-in library has no locomotion tree".into(),
    })?;
    let state = |k: u32| {
        let (u, v) = ((k as f32 * 0.618).fract(), (k as f32 * 0.377).fract());
        let velocity = glam::Vec2::from_angle(u * std::f32::consts::TAU) * (0.5 + v * 3.0);
        InstanceDesc {
            time: u,
            ..InstanceDesc::tree(tree, [velocity.x, velocity.y, 0.0, 0.0])
        }
    };
    let mut a = Animator::new(
        device,
        &lib,
        &AnimatorDesc {
            max_instances: n,
            inertialization: true,
            // No layers: passes without their code, as in the bench's other crowds without.
            layers: false,
            ..AnimatorDesc::default()
        },
    )?;
    for i in 0..n {
        a.add_instance(&state(i))?;
    }
    Ok((a, (0..7).map(|k| state(n + 101 * k)).collect()))
}

/// Times `n` characters, a quarter of them transitioning, `frames` frames of each crowd after
/// `warmup`; `None` without timestamp queries.
///
/// Errors: the device fails, or the animators cannot be made.
pub fn compare_transitions(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    frames: u32,
    warmup: u32,
) -> Result<Option<TransitionComparison>> {
    let mut crowds = Vec::with_capacity(CROWDS);
    for _ in 0..CROWDS {
        crowds.push(crowd(device, n)?);
    }
    let mut timers = Vec::with_capacity(CROWDS);
    for (a, _) in &crowds {
        match PassTimer::new(device, queue, a.dispatches_per_page()) {
            Some(t) => timers.push(t),
            None => return Ok(None),
        }
    }
    // A transition every `period` frames per transitioning character, the starts spread; each
    // ends two frames before the next starts, so that no cross-fade interrupts another (which
    // would blend from a kept pose instead of sampling the source).
    let period = 30u32;
    let duration = (period - 2) as f32 * DT;
    let transitions = [
        None,
        Some(Transition::linear(duration)),
        Some(Transition::inertialize(duration)),
    ];
    let mut sample_ms = vec![Vec::new(); CROWDS];
    // Warmed up until every transitioning character has started its first transition.
    let warmup = warmup.max(period);
    for frame in 0..warmup + frames {
        for (k, ((a, states), timer)) in crowds.iter_mut().zip(&timers).enumerate() {
            // The quiet crowd cuts to the same states at the same frames.
            for i in (0..n).step_by(4) {
                let slot = i / 4;
                if (frame + slot) % period == 0 {
                    let next = &states[(slot + frame / period) as usize % states.len()];
                    a.play(i as usize, next, transitions[k])?;
                }
            }
            let ms = sample_pass_ms(device, queue, a, timer)?;
            if frame >= warmup {
                sample_ms[k].push(ms);
            }
        }
    }
    let [quiet, cross_fade, inertialized] = [0, 1, 2].map(|k| median(sample_ms[k].clone()));
    let transitioning = n.div_ceil(4);
    let share = |quiet: f64, ms: f64, n: u32| (quiet / f64::from(n) + (ms - quiet) / f64::from(n.div_ceil(4))) * 1e3;
    let (cross_fade_us, inertialized_us) = (share(quiet, cross_fade, n), share(quiet, inertialized, n));
    let mut mirror_sample_ms = [0.0; CROWDS];
    for (k, (a, _)) in crowds.iter().enumerate() {
        mirror_sample_ms[k] = time_mirror_sample(device, queue, a)?;
    }
    let on_page = crowds[0].0.page_instances(0).len() as u32;
    let [mq, mc, mi] = mirror_sample_ms;
    let mirror_us = [share(mq, mc, on_page), share(mq, mi, on_page)];
    Ok(Some(TransitionComparison {
        characters: n,
        transitioning,
        duration,
        frames,
        quiet_sample_ms: quiet,
        cross_fade_sample_ms: cross_fade,
        inertialized_sample_ms: inertialized,
        cross_fade_us,
        inertialized_us,
        ratio: inertialized_us / cross_fade_us.max(1e-12),
        mirror_sample_ms,
        mirror_us,
        mirror_ratio: mirror_us[1] / mirror_us[0].max(1e-12),
    }))
}

/// The transition comparisons of `config` ([`compare_transitions`]): with the staged path, on a
/// device with timestamp queries; none otherwise.
pub(super) fn compare_all_transitions(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<TransitionComparison>> {
    let mut out = Vec::new();
    if config.transitions && config.paths.contains(&PathKind::GpuStaged) {
        for &n in &config.counts {
            progress(&format!(
                "cross-fades and inertialized transitions, {n} characters ({} frames each)",
                config.frames
            ));
            match compare_transitions(device, queue, n, config.frames, config.warmup.max(1)) {
                Ok(Some(c)) => out.push(c),
                Ok(None) => break,
                // A count the device cannot hold was noted with the rows.
                Err(Error::Limit { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(out)
}

/// The comparisons as a Markdown table.
#[must_use]
pub fn transitions_table(rows: &[TransitionComparison]) -> String {
    let mut s = String::from(
        "| characters | transitioning | quiet sample ms | cross-fading sample ms | inertializing sample ms | \
         µs per cross-fading character | µs per inertializing character | inertialized ÷ cross-fade | \
         mirror sample ms (quiet, cross-fading, inertializing) | mirror µs per character (cross-fading, \
         inertializing) | mirror inertialized ÷ cross-fade |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|\n",
    );
    for c in rows {
        s += &format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} | {:.3}, {:.3}, {:.3} | {:.3}, {:.3} | {:.2} |\n",
            c.characters,
            c.transitioning,
            c.quiet_sample_ms,
            c.cross_fade_sample_ms,
            c.inertialized_sample_ms,
            c.cross_fade_us,
            c.inertialized_us,
            c.ratio,
            c.mirror_sample_ms[0],
            c.mirror_sample_ms[1],
            c.mirror_sample_ms[2],
            c.mirror_us[0],
            c.mirror_us[1],
            c.mirror_ratio
        );
    }
    s
}
