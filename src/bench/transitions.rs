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
use super::{Check, Config, DT, PathKind, median};
use crate::error::{Error, Result};
use crate::gpu::{PassTimer, Transition};
use crate::offline::compress::ClipFormat;
use crate::shaders::Stage;
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
    /// The times against a second clock and their signs ([`Check`]).
    #[serde(default)]
    pub check: Check,
}

/// Runs of the CPU mirror's `sample` stage per crowd.
pub const MIRROR_RUNS: usize = 5;

/// The CPU mirror's `sample` stage on page 0 of `a` as the GPU left it, one thread: the median of
/// [`MIRROR_RUNS`] runs, ms.
fn time_mirror_sample(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Result<f64> {
    let state = MirrorPage::read(device, queue, a)?;
    let mut runs = Vec::with_capacity(MIRROR_RUNS);
    for _ in 0..MIRROR_RUNS {
        runs.push(state.run_sample(a, || {
            let start = std::time::Instant::now();
            move || start.elapsed().as_secs_f64() * 1e3
        }));
    }
    Ok(median(runs))
}

/// Page 0 of an animator as the GPU left it: what the CPU mirror's `sample` stage reads and
/// writes.
struct MirrorPage {
    local: Vec<crate::layout::LocalPose>,
    history: Vec<crate::layout::LocalPose>,
    lists: Vec<crate::layout::BlendList>,
    instances: Vec<crate::layout::GpuInstance>,
    frame: crate::layout::GpuFrame,
}

impl MirrorPage {
    /// Reads page 0 of `a` back.
    fn read(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Result<Self> {
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
        let instances = a.controller().page_instances(0).to_vec();
        let frame = crate::layout::GpuFrame {
            dt: DT,
            instance_count: instances.len() as u32,
            snapshot_offset: a.controller().page_max_joints(0),
            flags: a.frame_uniform(0).map_or(0, |f| f.flags),
            ..Default::default()
        };
        Ok(Self {
            local,
            history,
            lists,
            instances,
            frame,
        })
    }

    /// Runs the mirror's `sample` stage once on a copy of the page (each run from the same
    /// state: the first frame of an offset writes it), between `start()` and the closure it
    /// returns, whose value it returns.
    fn run_sample<T, F: FnOnce() -> T>(&self, a: &Animator, start: impl FnOnce() -> F) -> T {
        let (mut local, mut history) = (self.local.clone(), self.history.clone());
        let (mut lists, mut instances) = (self.lists.clone(), self.instances.clone());
        let mut page = crate::cpu::PageBuffers::new(&self.frame, &mut instances)
            .blend_lists(&mut lists)
            .local_poses(&mut local)
            .pose_history(&mut history);
        let end = start();
        crate::cpu::sample::kernel(a.controller().library(), &mut page);
        end()
    }
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
        a.controller_mut().add_instance(&state(i))?;
    }
    Ok((a, (0..7).map(|k| state(n + 101 * k)).collect()))
}

/// A transition every `PERIOD` frames per transitioning character, the starts spread.
const PERIOD: u32 = 30;
/// Each transition's length, frames: it ends two frames before the next starts, so that no
/// cross-fade interrupts another (which would blend from a kept pose instead of sampling the
/// source).
const TRANSITION_FRAMES: u32 = PERIOD - 2;

/// The transition each crowd plays: none (a cut), a cross-fade, an inertialization.
fn crowd_transitions() -> [Option<Transition>; CROWDS] {
    let duration = TRANSITION_FRAMES as f32 * DT;
    [
        None,
        Some(Transition::linear(duration)),
        Some(Transition::inertialize(duration)),
    ]
}

/// Starts frame `frame`'s transitions in a crowd of `n`: every fourth character goes to its next
/// state every [`PERIOD`] frames, character `4 k` on the frames where `frame + k` is a multiple
/// of it.
///
/// Errors: the animator refuses the state.
fn start_transitions(
    a: &mut Animator,
    states: &[InstanceDesc],
    n: u32,
    frame: u32,
    transition: Option<Transition>,
) -> Result<()> {
    for i in (0..n).step_by(4) {
        let slot = i / 4;
        if (frame + slot).is_multiple_of(PERIOD) {
            let next = &states[(slot + frame / PERIOD) as usize % states.len()];
            a.controller_mut().play(i as usize, next, transition)?;
        }
    }
    Ok(())
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
    let transitions = crowd_transitions();
    let (mut sample_ms, mut times) = (vec![Vec::new(); CROWDS], vec![Vec::new(); CROWDS]);
    // Warmed up until every transitioning character has started its first transition.
    let warmup = warmup.max(PERIOD);
    for frame in 0..warmup + frames {
        for (k, ((a, states), timer)) in crowds.iter_mut().zip(&timers).enumerate() {
            start_transitions(a, states, n, frame, transitions[k])?;
            let (ms, time) = sample_pass_ms(device, queue, a, timer)?;
            if frame >= warmup {
                sample_ms[k].push(ms);
                times[k].push(time);
            }
        }
    }
    let [quiet, cross_fade, inertialized] = [0, 1, 2].map(|k| median(sample_ms[k].clone()));
    let transitioning = n.div_ceil(4);
    let (cross_fade_us, inertialized_us) = (share(quiet, cross_fade, n) * 1e3, share(quiet, inertialized, n) * 1e3);
    let mut mirror_sample_ms = [0.0; CROWDS];
    for (k, (a, _)) in crowds.iter().enumerate() {
        mirror_sample_ms[k] = time_mirror_sample(device, queue, a)?;
    }
    let on_page = crowds[0].0.controller().page_instances(0).len() as u32;
    let [mq, mc, mi] = mirror_sample_ms;
    let mirror_us = [share(mq, mc, on_page) * 1e3, share(mq, mi, on_page) * 1e3];
    let mut check = Check::default();
    let cpu = super::check::is_cpu_adapter(device);
    for (k, what) in ["quiet", "cross-fading", "inertializing"].into_iter().enumerate() {
        check.frames(&format!("the {what} crowd's frame"), &times[k], cpu);
        check.positive(
            &format!("the {what} crowd's sample pass, ms"),
            [quiet, cross_fade, inertialized][k],
        );
        check.positive(&format!("the mirror's {what} sample, ms"), mirror_sample_ms[k]);
    }
    check.positive("µs per cross-fading character", cross_fade_us);
    check.non_negative("µs per inertializing character", inertialized_us);
    check.positive("the mirror's µs per cross-fading character", mirror_us[0]);
    check.non_negative("the mirror's µs per inertializing character", mirror_us[1]);
    Ok(Some(TransitionComparison {
        characters: n,
        transitioning,
        duration: TRANSITION_FRAMES as f32 * DT,
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
        check,
    }))
}

/// A transitioning character's share of a crowd's `sample` pass (module docs), in the unit of
/// `quiet` and `crowd`: its share of the quiet crowd's pass, `quiet` over the `n` characters,
/// plus the crowd's extra over the quiet one, over the transitioning quarter.
fn share(quiet: f64, crowd: f64, n: u32) -> f64 {
    quiet / f64::from(n.max(1)) + (crowd - quiet) / f64::from(n.div_ceil(4).max(1))
}

/// The transition comparisons of `config` ([`compare_transitions`]) at its
/// [`Config::extra_counts`]: with the staged path, on a
/// device with timestamp queries; none otherwise.
pub(super) fn compare_all_transitions(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut super::Progress,
) -> Result<Vec<TransitionComparison>> {
    use super::progress::{Kind, weight};
    let mut out = Vec::new();
    if config.transitions && config.paths.contains(&PathKind::GpuStaged) {
        for n in config.extra_counts() {
            progress.step(
                &format!(
                    "cross-fades and inertialized transitions, {n} characters ({} frames each)",
                    config.frames
                ),
                weight(Kind::Transitions, n, config.frames + PERIOD),
            );
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
         inertializing) | mirror inertialized ÷ cross-fade | check |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|\n",
    );
    for c in rows {
        s += &format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} | {:.3}, {:.3}, {:.3} | {:.3}, {:.3} | {:.2} | {} |\n",
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
            c.mirror_ratio,
            c.check.cell()
        );
    }
    s
}

/// Frames of each crowd whose `sample` pass [`run_transition_sections`] counts, by default.
pub const COUNTED_FRAMES: u32 = 4;

/// What [`run_transition_sections`] measured, in the order of callgrind's dumps: for each crowd
/// (quiet, cross-fading, inertializing), the GPU `sample` pass of `frames` frames, a section each,
/// then the CPU mirror's `sample` stage once on the last of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransitionSections {
    /// Characters in each crowd.
    pub characters: u32,
    /// Characters on page 0, the one the mirror runs.
    pub on_page: u32,
    /// Frames counted of each crowd.
    pub frames: u32,
}

impl TransitionSections {
    /// The number of sections, one dump each.
    #[must_use]
    pub fn count(&self) -> usize {
        CROWDS * (self.frames as usize + 1)
    }
}

/// Runs the three crowds of [`compare_transitions`] in this process (under valgrind when
/// counting; [`super::cost`]), one after another: each warmed up until every transitioning
/// character has started a transition, then `frames` frames whose `sample` pass is a section of
/// its own (the frame's other passes recorded and waited for around it, unmeasured), then the CPU
/// mirror's `sample` stage on the last frame as the GPU left it, a section.
///
/// Errors: `n` or `frames` of 0; the animators cannot be made; the device fails.
pub fn run_transition_sections(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    frames: u32,
) -> Result<TransitionSections> {
    if n == 0 || frames == 0 {
        return Err(Error::Limit {
            what: "counting transitions needs at least one character and one frame".into(),
        });
    }
    let transitions = crowd_transitions();
    let mut on_page = 0;
    for transition in transitions {
        let (mut a, states) = crowd(device, n)?;
        for frame in 0..PERIOD + frames {
            start_transitions(&mut a, &states, n, frame, transition)?;
            a.prepare(queue, DT);
            for stage in Stage::COMPUTE {
                let counted = frame >= PERIOD && stage == Stage::Sample;
                if counted {
                    super::cost::wgpu_anim_cost_begin();
                }
                super::cost::run_gpu_stage(device, queue, &a, stage, 1)?;
                if counted {
                    super::cost::wgpu_anim_cost_end();
                }
            }
        }
        let page = MirrorPage::read(device, queue, &a)?;
        page.run_sample(&a, || {
            super::cost::wgpu_anim_cost_begin();
            || super::cost::wgpu_anim_cost_end()
        });
        on_page = a.controller().page_instances(0).len() as u32;
    }
    Ok(TransitionSections {
        characters: n,
        on_page,
        frames,
    })
}

/// Cross-fades against inertialized transitions in instructions: [`TransitionComparison`]'s
/// shares counted by callgrind instead of timed (`wgpu-anim cost --transitions`), so that two
/// runs, or two builds, compare exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransitionCost {
    /// Characters in each crowd.
    pub characters: u32,
    /// Characters that transition, a quarter.
    pub transitioning: u32,
    /// Frames counted of each crowd.
    pub frames: u32,
    /// The GPU `sample` pass per frame, instructions (quiet, cross-fading, inertializing):
    /// recording, submitting and a software adapter running it.
    pub gpu: [f64; CROWDS],
    /// The CPU mirror's `sample` stage on page 0, instructions (quiet, cross-fading,
    /// inertializing).
    pub mirror: [f64; CROWDS],
    /// A cross-fading and an inertializing character's share of the GPU pass, instructions.
    pub gpu_per_character: [f64; 2],
    /// The same shares of the mirror's stage.
    pub mirror_per_character: [f64; 2],
    /// `gpu_per_character[1] ÷ gpu_per_character[0]`: the goal is 0.6 or less.
    pub ratio: f64,
    /// `mirror_per_character[1] ÷ mirror_per_character[0]`.
    pub mirror_ratio: f64,
    /// The ratio an inertialization costing nothing would give, GPU and mirror: a quiet
    /// character's share ÷ a cross-fading one's. No inertialization does better.
    pub free_bound: [f64; 2],
}

/// The shares of [`run_transition_sections`]'s `sections`, from their callgrind `dumps` (one per
/// section, in order).
///
/// Errors: a dump missing.
pub fn transition_cost(sections: &TransitionSections, dumps: &[u64]) -> Result<TransitionCost> {
    super::cost::one_dump_each(sections.count(), dumps.len(), "transitions")?;
    let per_crowd = sections.frames as usize + 1;
    let mut gpu = [0.0; CROWDS];
    let mut mirror = [0.0; CROWDS];
    for k in 0..CROWDS {
        let crowd = &dumps[k * per_crowd..(k + 1) * per_crowd];
        let (frames, last) = crowd.split_at(sections.frames as usize);
        gpu[k] = frames.iter().map(|&d| d as f64).sum::<f64>() / f64::from(sections.frames);
        mirror[k] = last[0] as f64;
    }
    let shares = |c: [f64; CROWDS], n: u32| [share(c[0], c[1], n), share(c[0], c[2], n)];
    let gpu_per_character = shares(gpu, sections.characters);
    let mirror_per_character = shares(mirror, sections.on_page);
    Ok(TransitionCost {
        characters: sections.characters,
        transitioning: sections.characters.div_ceil(4),
        frames: sections.frames,
        gpu,
        mirror,
        gpu_per_character,
        mirror_per_character,
        ratio: gpu_per_character[1] / gpu_per_character[0].max(1e-12),
        mirror_ratio: mirror_per_character[1] / mirror_per_character[0].max(1e-12),
        free_bound: [
            share(gpu[0], gpu[0], sections.characters) / gpu_per_character[0].max(1e-12),
            share(mirror[0], mirror[0], sections.on_page) / mirror_per_character[0].max(1e-12),
        ],
    })
}

/// [`TransitionCost`] as a Markdown table, a row per side.
#[must_use]
pub fn transition_cost_table(c: &TransitionCost) -> String {
    let mut s = String::from(
        "| side | quiet crowd | cross-fading crowd | inertializing crowd | per cross-fading character | \
         per inertializing character | inertialized ÷ cross-fade | with a free inertialization |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let sides = [
        (
            "GPU `sample` pass, per frame",
            c.gpu,
            c.gpu_per_character,
            c.ratio,
            c.free_bound[0],
        ),
        (
            "CPU mirror `sample` stage",
            c.mirror,
            c.mirror_per_character,
            c.mirror_ratio,
            c.free_bound[1],
        ),
    ];
    for (side, crowd, per, ratio, bound) in sides {
        s += &format!(
            "| {side} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {ratio:.3} | {bound:.3} |\n",
            crowd[0], crowd[1], crowd[2], per[0], per[1]
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_shares_average_the_frames_and_split_the_extra_over_the_transitioning_quarter() {
        // 8 characters, 2 transitioning; two frames and the mirror per crowd.
        let sections = TransitionSections {
            characters: 8,
            on_page: 8,
            frames: 2,
        };
        let dumps = [790, 810, 400, 1_180, 1_220, 600, 990, 1_010, 440];
        let c = transition_cost(&sections, &dumps).unwrap();
        assert_eq!(c.gpu, [800.0, 1_200.0, 1_000.0]);
        assert_eq!(c.mirror, [400.0, 600.0, 440.0]);
        // 800 / 8 + 400 / 2 and 800 / 8 + 200 / 2.
        assert_eq!(c.gpu_per_character, [300.0, 200.0]);
        assert!((c.ratio - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(c.mirror_per_character, [150.0, 70.0]);
        let table = transition_cost_table(&c);
        // A quiet character's 100 against a cross-fading one's 300.
        assert!((c.free_bound[0] - 1.0 / 3.0).abs() < 1e-12);
        assert!(table.contains("| 300 | 200 | 0.667 | 0.333 |"), "{table}");
        // A dump missing is an error, not a share of nothing.
        assert!(transition_cost(&sections, &dumps[..8]).is_err());
    }
}
