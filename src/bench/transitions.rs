//! Cross-fades against inertialized transitions ([`compare_transitions`]): three crowds of the
//! `single-clip` workload, in one of which a quarter of the characters always cross-fade from one
//! clip to the next, in another always inertialize, and in the third none transitions. Each
//! transitioning character starts a new transition as soon as its last one ends, the starts
//! spread evenly over the frames, so that every frame carries its share of the frames that keep
//! a velocity (before an inertialization) and that start one. The `sample` pass of the three is
//! timed with timestamp queries, crowd after crowd frame by frame, so that a slow spell of a
//! shared machine falls on all three.
//!
//! A transitioning character's share of the pass is its share of the quiet crowd's (every
//! character's sampling) plus the crowd's extra time over the quiet one, spread over the
//! transitioning characters: a cross-fade samples the source and the target, an inertialization
//! the target and its kept offset.

use super::{DT, median};
use crate::error::{Error, Result};
use crate::gpu::{PassTimer, Transition};
use crate::offline::compress::ClipFormat;
use crate::{Animator, AnimatorDesc, InstanceDesc, mannequin};
use serde::{Deserialize, Serialize};

/// One crowd size, cross-fading against inertializing a quarter of the characters (module docs).
/// Times are medians over the measured frames, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransitionComparison {
    /// Characters in each crowd (the `single-clip` workload, compressed clips).
    pub characters: u32,
    /// Characters that transition, a quarter: each is transitioning 28 frames out of 30.
    pub transitioning: u32,
    /// Length of each transition, seconds (frames of [`DT`]).
    pub duration: f32,
    /// Frames measured of each crowd.
    pub frames: u32,
    /// The `sample` pass with no character transitioning.
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
}

/// The three crowds: quiet, cross-fading, inertializing.
const CROWDS: usize = 3;

/// A crowd of `n` mannequins playing their clips, with room for inertialized transitions.
fn crowd(device: &wgpu::Device, n: u32) -> Result<(Animator, Vec<crate::ClipId>)> {
    let (lib, _, clips) = mannequin::library_in(ClipFormat::Compressed);
    let mut a = Animator::new(
        device,
        &lib,
        &AnimatorDesc {
            max_instances: n,
            inertialization: true,
            ..AnimatorDesc::default()
        },
    )?;
    for i in 0..n {
        let (u, v) = ((i as f32 * 0.618).fract(), (i as f32 * 0.377).fract());
        a.add_instance(&InstanceDesc {
            time: u * 3.0,
            rate: 0.8 + v * 0.4,
            ..InstanceDesc::new(clips[i as usize % clips.len()])
        })?;
    }
    Ok((a, clips))
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
    let transitions = [None, Some(Transition::linear(duration)), Some(Transition::inertialize(duration))];
    // The staged passes are clock, sample, local_to_model, palette.
    const SAMPLE: usize = 1;
    let mut sample_ms = vec![Vec::new(); CROWDS];
    for frame in 0..warmup + frames {
        for (k, ((a, clips), timer)) in crowds.iter_mut().zip(&timers).enumerate() {
            if let Some(t) = transitions[k] {
                for i in (0..n).step_by(4) {
                    let slot = i / 4;
                    if (frame + slot) % period == 0 {
                        let next = clips[(slot + frame / period) as usize % clips.len()];
                        a.play(i as usize, &InstanceDesc::new(next), Some(t))?;
                    }
                }
            }
            a.prepare(queue, DT);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode_timed(&mut encoder, Some(timer));
            timer.resolve(&mut encoder);
            queue.submit([encoder.finish()]);
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| Error::Device(e.to_string()))?;
            let ms = timer.read_ms(device, queue)?;
            if frame >= warmup {
                sample_ms[k].push(ms.get(SAMPLE).copied().unwrap_or(0.0));
            }
        }
    }
    let [quiet, cross_fade, inertialized] = [0, 1, 2].map(|k| median(sample_ms[k].clone()));
    let transitioning = n.div_ceil(4);
    let share = |ms: f64| (quiet / f64::from(n) + (ms - quiet) / f64::from(transitioning)) * 1e3;
    let (cross_fade_us, inertialized_us) = (share(cross_fade), share(inertialized));
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
    }))
}

/// The comparisons as a Markdown table.
#[must_use]
pub fn transitions_table(rows: &[TransitionComparison]) -> String {
    let mut s = String::from(
        "| characters | transitioning | quiet sample ms | cross-fading sample ms | inertializing sample ms | \
         µs per cross-fading character | µs per inertializing character | inertialized ÷ cross-fade |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for c in rows {
        s += &format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} |\n",
            c.characters,
            c.transitioning,
            c.quiet_sample_ms,
            c.cross_fade_sample_ms,
            c.inertialized_sample_ms,
            c.cross_fade_us,
            c.inertialized_us,
            c.ratio
        );
    }
    s
}
