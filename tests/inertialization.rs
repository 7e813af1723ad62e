//! Inertialized transitions (Bollo's offset decay, Holden's dead blending): the sample stage's
//! inertialized frames on the GPU against the CPU mirror (current poses, kept offsets and
//! velocities), the fused path against the staged one (and a thread per character against a
//! SIMD group per character), the mannequin's transitions on the GPU
//! against the f64 reference frame by frame, the continuity of pose and velocity at the switch
//! (the velocity's jump found by running at two frame rates) and through interruptions, the
//! curve's end and its not overshooting, morph weights, and bad input.
//!
//! Tolerances (element-wise, relative to 1 + |expected|):
//! - GPU against mirror: 2e-5 on poses, kept poses and the offsets a kept decay gives, as the
//!   sample stage; velocities are compared times the frame's dt (the difference of two poses
//!   they are), also 2e-5;
//! - GPU against the f64 reference: 1e-4 (f32 sampling, and an offset velocity that is a
//!   difference of two poses over one frame).

mod common;

use common::{affine_error, compare, pose_error, random_state, rng};
use glam::{DVec3, Vec3};
use rand::Rng;
use wgpu_anim::cpu::{self, PageBuffers, inertia as mirror};
use wgpu_anim::gpu::{Blending, CharacterThreads, Transition};
use wgpu_anim::layout::{BlendList, GpuFrame, KEEP_VELOCITY, LocalPose, source_kind};
use wgpu_anim::offline::compress::ClipFormat;
use wgpu_anim::reference::{self, TransformF64, inertia as oracle};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, mannequin};

fn animator(device: &wgpu::Device, lib: &wgpu_anim::AnimationLibrary, n: usize, inertialization: bool) -> Animator {
    Animator::new(
        device,
        lib,
        &AnimatorDesc::default()
            .with_max_instances(n as u32)
            .with_inertialization(inertialization),
    )
    .unwrap()
}

fn step(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, dt: f32) {
    a.prepare(queue, dt);
    let mut e = device.create_command_encoder(&Default::default());
    a.encode(&mut e).unwrap();
    queue.submit([e.finish()]);
}

/// A random transition of every kind: cross-fade, inertialization, dead blending.
fn random_transition(r: &mut impl Rng) -> Transition {
    let duration = r.gen_range(0.05..0.6);
    match r.gen_range(0..3) {
        0 => Transition::linear(duration),
        1 => Transition::inertialize(duration),
        _ => Transition::linear(duration).with_blending(Blending::DeadBlend {
            halflife: r.gen_range(0.0..0.3),
        }),
    }
}

/// The first page's local poses and pose history read back as the page lays them out.
struct Regions {
    /// Current poses, then (with layers) mesh-space deltas.
    local: Vec<LocalPose>,
    /// Snapshots (kept poses or decays), then velocities.
    history: Vec<LocalPose>,
}

fn regions(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Regions {
    let max = a.max_joints() as usize;
    let read = |sections: &[u32]| {
        let mut out = vec![LocalPose::default(); sections.len() * max];
        for (k, &region) in sections.iter().enumerate() {
            let r = a.read_local_region(device, queue, region).unwrap();
            out[k * max..k * max + r.len()].copy_from_slice(&r);
        }
        out
    };
    Regions {
        local: read(if a.controller().layers() { &[0, 2] } else { &[0] }),
        history: read(&[1, 3]),
    }
}

/// A velocity slot times `dt`: the pose difference it was made from.
fn times(p: &LocalPose, dt: f32) -> LocalPose {
    LocalPose {
        translation: p.translation * dt,
        rotation: p.rotation * dt,
        scale: p.scale * dt,
    }
}

#[test]
fn inertialized_frames_match_the_cpu_mirror() {
    inertialized_frames_match_the_mirror(true);
}

/// Without layers the local poses keep no mesh-space deltas: the pose history is laid out the
/// same, and the mirror reads and writes it where the GPU does.
#[test]
fn inertialized_frames_without_layers_match_the_cpu_mirror() {
    inertialized_frames_match_the_mirror(false);
}

/// Random transitions of every kind over uneven frames: each frame's current poses, kept poses or
/// decays and velocities on the GPU against the mirror's from the same state, joint by joint.
fn inertialized_frames_match_the_mirror(layers: bool) {
    let (device, queue) = common::device();
    let (lib, _) = common::random_library(21);
    let n = 600;
    let desc = AnimatorDesc::default()
        .with_max_instances(n as u32)
        .with_inertialization(true)
        .with_layers(layers);
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    let mut r = rng(22);
    for _ in 0..n {
        let skeleton = r.gen_range(0..lib.gpu_skeletons().len() as u32);
        let desc = {
            // The fields drawn before the state, as they were.
            let (time, rate) = (r.gen_range(0.0..2.0), r.gen_range(-1.5..1.5));
            random_state(&mut r, &lib, skeleton).with_time(time).with_rate(rate)
        };
        a.controller_mut().add_instance(&desc).unwrap();
    }
    if layers {
        common::random_layers(&mut a, &mut r);
    }
    let dts = [0.0, 0.016, 0.033, 0.016, 0.05, 0.016, 0.1, 0.016];
    let (mut switches, mut holds, mut running, mut from_last_pose) = (0, 0, 0, 0);
    let mut worst = [0.0f32; 3];
    let mut edges = 0;
    for (f, &dt) in dts.iter().enumerate() {
        // Every other frame, a third of the instances start a transition of any kind, which
        // interrupts whatever runs; a third of those cut to another state first, so that the
        // frame before an inertialized one samples the state again rather than take the pose
        // shown (which the cut does not continue).
        if f % 2 == 1 {
            for i in 0..n {
                if r.gen_range(0..3) == 0 {
                    let skel = a.controller().instance(i).unwrap().skeleton;
                    if r.gen_range(0..3) == 0 {
                        a.controller_mut()
                            .play(i, &random_state(&mut r, &lib, skel), None)
                            .unwrap();
                    }
                    let desc = random_state(&mut r, &lib, skel);
                    a.controller_mut()
                        .play(i, &desc, Some(random_transition(&mut r)))
                        .unwrap();
                }
            }
        }
        let before = regions(&device, &queue, &a);
        step(&device, &queue, &mut a, dt);
        let gpu = regions(&device, &queue, &a);
        let mut lists: Vec<BlendList> = a.read_blend_lists(&device, &queue).unwrap();
        use wgpu_anim::layout::inertia::{LAST_POSE, PREVIOUS, SWITCH, VELOCITY};
        switches += lists.iter().filter(|l| l.inertia & SWITCH != 0).count();
        holds += lists.iter().filter(|l| l.inertia & VELOCITY != 0).count();
        from_last_pose += lists.iter().filter(|l| l.inertia & LAST_POSE != 0).count();
        running += lists
            .iter()
            .filter(|l| l.inertia & !(SWITCH | VELOCITY | PREVIOUS | LAST_POSE) != 0)
            .count();
        // The mirror on the GPU's blend lists and the regions from before the frame.
        let frame = GpuFrame {
            dt,
            instance_count: n as u32,
            snapshot_offset: a.max_joints(),
            ..Default::default()
        };
        let (mut local, mut history) = (before.local.clone(), before.history.clone());
        let mut insts = a.controller().instances().to_vec();
        let mut page = PageBuffers::new(&frame, &mut insts)
            .blend_lists(&mut lists)
            .local_poses(&mut local)
            .pose_history(&mut history);
        cpu::sample(a.controller().library(), &mut page).unwrap();
        let (max, joints) = (a.max_joints() as usize, a.controller().joint_count() as usize);
        let at = |k: usize| k * max..k * max + joints;
        if std::env::var("DEBUG_INERTIA").is_ok() && f == 2 {
            for k in [884usize, 906] {
                eprintln!(
                    "slot {k}: x0 gpu {:?}\n   cpu {:?}\n v0 gpu {:?}\n   cpu {:?}\n before snap {:?} vel {:?}",
                    gpu.history[k],
                    history[k],
                    gpu.history[max + k],
                    history[max + k],
                    before.history[k],
                    before.history[max + k]
                );
            }
        }
        let mut check = |what: &str, got: &[LocalPose], want: &[LocalPose], worst: &mut f32| {
            let (within, off): (Vec<usize>, Vec<usize>) =
                (0..got.len()).partition(|&k| pose_error(&got[k], &want[k]) <= 2e-5);
            if std::env::var("DEBUG_INERTIA").is_ok() {
                for &k in off.iter().take(3) {
                    let i = a
                        .controller()
                        .instances()
                        .iter()
                        .position(|x| x.joint_offset as usize <= k && k < (x.joint_offset + x.joint_count) as usize)
                        .unwrap();
                    eprintln!(
                        "{what} slot {k} inst {i} e {} gpu {:?} cpu {:?} list {:?} flags {:x}",
                        pose_error(&got[k], &want[k]),
                        got[k],
                        want[k],
                        lists[i].inertia,
                        a.controller().instances()[i].flags
                    );
                }
            }
            for k in within {
                *worst = worst.max(pose_error(&got[k], &want[k]));
            }
            // A blend whose quaternions are near perpendicular (in 4D) sits on the sign
            // alignment's discontinuity: a last-bit difference may flip one side only
            // (tests/gpu_stages.rs counts the same). It must stay rare.
            assert!(
                off.len() <= 4,
                "frame {f}: {what} of {} joints beyond 2e-5, e.g. joint {}",
                off.len(),
                off[0]
            );
            edges += off.len();
        };
        check("pose", &gpu.local[at(0)], &local[at(0)], &mut worst[0]);
        // A kept decay is compared by the offsets it gives at three times of its transition
        // (its `r = v0 t1 / |x0|` alone is ill-conditioned where |x0| is small; x0 r is not);
        // kept poses as they are, velocities times dt.
        let duration: Vec<Option<f32>> = (0..joints)
            .map(|k| {
                let i =
                    a.controller().instances().iter().position(|x| {
                        (x.joint_offset as usize..(x.joint_offset + x.joint_count) as usize).contains(&k)
                    })?;
                (lists[i].inertia & wgpu_anim::layout::inertia::OFFSET != 0)
                    .then(|| a.controller().instances()[i].transition_duration)
            })
            .collect();
        let kept = |snapshots: &[LocalPose], velocities: &[LocalPose]| -> Vec<LocalPose> {
            (0..joints)
                .map(|k| match duration[k] {
                    Some(d) => {
                        let decay = mirror::Decay::from_slots(&snapshots[k], &velocities[k]);
                        let offset = |u: f32| decay.offset(u * d, d);
                        let (a, b, c) = (offset(0.1), offset(0.4), offset(0.7));
                        LocalPose {
                            translation: (a.t + b.r + c.s).extend(0.0),
                            rotation: (a.r + b.s + c.t).extend(0.0),
                            scale: (a.s + b.t + c.r).extend(0.0),
                        }
                    }
                    None => snapshots[k],
                })
                .collect()
        };
        let velocities = |v: &[LocalPose]| -> Vec<LocalPose> {
            (0..joints)
                .map(|k| {
                    if duration[k].is_some() {
                        LocalPose::default()
                    } else {
                        times(&v[k], dt)
                    }
                })
                .collect()
        };
        check(
            "kept pose or decay",
            &kept(&gpu.history[at(0)], &gpu.history[at(1)]),
            &kept(&history[at(0)], &history[at(1)]),
            &mut worst[1],
        );
        check(
            "velocity × dt",
            &velocities(&gpu.history[at(1)]),
            &velocities(&history[at(1)]),
            &mut worst[2],
        );
    }
    eprintln!(
        "{holds} frames kept a velocity ({from_last_pose} from the pose shown), {switches} started an offset, \
         {running} ran inertialized; worst \
         pose {:e}, kept {:e}, velocity × dt {:e}; {edges} joint values on the sign-alignment edge",
        worst[0], worst[1], worst[2]
    );
    assert!(holds > 300 && switches > 100 && running > 300);
    // Both ways of keeping a velocity ran against the mirror.
    assert!(from_last_pose > 100 && holds - from_last_pose > 50);
}

#[test]
fn the_mirror_comparison_fails_without_the_inertialization() {
    // The same frame as the GPU's, but the mirror told that no transition is inertialized: the
    // poses differ, so the comparison above can fail.
    let (device, queue) = common::device();
    let (lib, _) = common::random_library(23);
    let n = 50;
    let mut a = animator(&device, &lib, n, true);
    let mut r = rng(24);
    for _ in 0..n {
        a.controller_mut().add_instance(&random_state(&mut r, &lib, 0)).unwrap();
    }
    step(&device, &queue, &mut a, 0.0);
    for i in 0..n {
        let desc = random_state(&mut r, &lib, 0);
        a.controller_mut()
            .play(i, &desc, Some(Transition::inertialize(0.5)))
            .unwrap();
    }
    for _ in 0..3 {
        step(&device, &queue, &mut a, 0.05);
    }
    let before = regions(&device, &queue, &a);
    step(&device, &queue, &mut a, 0.05);
    let gpu = a.read_local_region(&device, &queue, 0).unwrap();
    let mut lists: Vec<BlendList> = a.read_blend_lists(&device, &queue).unwrap();
    assert!(lists.iter().all(|l| l.inertia != 0));
    for l in &mut lists {
        l.inertia = 0;
    }
    let frame = GpuFrame {
        dt: 0.05,
        instance_count: n as u32,
        snapshot_offset: a.max_joints(),
        ..Default::default()
    };
    let (mut local, mut history, mut insts) = (before.local, before.history, a.controller().instances().to_vec());
    let mut page = PageBuffers::new(&frame, &mut insts)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history);
    cpu::sample(a.controller().library(), &mut page).unwrap();
    assert!(compare("pose", &gpu, &local[..gpu.len()], 2e-5, pose_error).is_err());
}

/// The fused path against the staged one, and each with a thread per character (lavapipe's
/// choice: a thread samples all of its character's joints, at the previous frame's times too)
/// against a SIMD group per character (a GPU's): within 1e-5 between the paths, bit for bit
/// between the thread counts.
#[test]
fn fused_matches_staged_through_inertialized_transitions() {
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_of(8, &[1, 40]);
    let n = 800;
    let make = |fused: bool, character_threads: CharacterThreads| {
        let desc = AnimatorDesc::default()
            .with_max_instances(n as u32)
            .with_inertialization(true)
            .with_character_threads(character_threads);
        let mut a = Animator::new(&device, &lib, &desc).unwrap();
        a.set_fused(fused).unwrap();
        let mut r = rng(41);
        for _ in 0..n {
            let skeleton = r.gen_range(0..2);
            a.controller_mut()
                .add_instance(&random_state(&mut r, &lib, skeleton))
                .unwrap();
        }
        common::random_layers(&mut a, &mut r);
        a
    };
    let (one, narrow) = (CharacterThreads::One, CharacterThreads::Narrow);
    // Staged and fused, each with a thread per character and with a SIMD group per character.
    let mut animators = [
        make(false, one),
        make(true, one),
        make(false, narrow),
        make(true, narrow),
    ];
    assert_eq!(animators[1].fused_character_threads(), Some(one));
    assert_eq!(animators[3].fused_character_threads(), Some(narrow));
    let mut r = rng(42);
    let mut worst = 0.0f32;
    // The staged path takes the velocity kept the frame before an inertialized transition from
    // the pose the frame before showed (inertia::LAST_POSE), the fused path, which keeps no
    // local pose, samples the state again at the previous frame's times: within rounding the
    // same, except where those samples overflow the blend list (MAX_BLEND_CLIPS), which then
    // keeps the heaviest of both times and loses the lightest of the frame's own. Those
    // characters are left out of the comparison from then on.
    let mut overflowed = vec![false; n];
    let mut from_last_pose = 0;
    for (f, dt) in [0.0, 0.016, 0.05, 0.016, 0.1, 0.016, 0.033].into_iter().enumerate() {
        if f % 2 == 1 {
            for i in 0..n {
                if r.gen_range(0..3) == 0 {
                    let skel = animators[0].controller().instance(i).unwrap().skeleton;
                    let desc = random_state(&mut r, &lib, skel);
                    let t = random_transition(&mut r);
                    for a in &mut animators {
                        a.controller_mut().play(i, &desc, Some(t)).unwrap();
                    }
                }
            }
        }
        for a in &mut animators {
            step(&device, &queue, a, dt);
        }
        use wgpu_anim::layout::{MAX_BLEND_CLIPS, inertia};
        let staged_lists = animators[0].read_blend_lists(&device, &queue).unwrap();
        from_last_pose += staged_lists
            .iter()
            .filter(|l| l.inertia & inertia::LAST_POSE != 0)
            .count();
        for (i, l) in animators[1]
            .read_blend_lists(&device, &queue)
            .unwrap()
            .iter()
            .enumerate()
        {
            overflowed[i] |= l.inertia & inertia::VELOCITY != 0 && l.count == MAX_BLEND_CLIPS;
        }
        // Joint slots of the characters compared.
        let mut compared = vec![true; animators[0].max_joints() as usize];
        for (i, inst) in animators[0]
            .controller()
            .instances()
            .iter()
            .enumerate()
            .filter(|(i, _)| overflowed[*i])
        {
            let _ = i;
            compared[inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize].fill(false);
        }
        // The others' entries as zeros, so that an error names the joint slot.
        let only = |v: &[LocalPose]| -> Vec<LocalPose> {
            v.iter()
                .zip(&compared)
                .map(|(p, &c)| if c { *p } else { LocalPose::default() })
                .collect()
        };
        let palettes: Vec<_> = animators
            .iter()
            .map(|a| a.read_back(&device, &queue).unwrap().1.palette)
            .collect();
        // The kept poses, offsets and velocities; the staged path's current poses too (the
        // fused one keeps model matrices there with a thread per character, and nothing without).
        let regions = |a: &Animator, fused: bool| {
            let keep: &[u32] = if fused { &[1, 3] } else { &[0, 1, 3] };
            keep.iter()
                .map(|&k| a.read_local_region(&device, &queue, k).unwrap())
                .collect::<Vec<_>>()
        };
        let kept: Vec<_> = animators
            .iter()
            .enumerate()
            .map(|(k, a)| regions(a, k % 2 == 1))
            .collect();
        for (staged, fused) in [(0, 1), (2, 3)] {
            for (region, (got, want)) in kept[fused].iter().zip(&kept[staged][1..]).enumerate() {
                // Two estimates of one velocity, each within rounding: 1e-4 (the decay's set-up
                // divides by the offset, which scales their difference up where it is small).
                compare(
                    "kept pose, offset or velocity",
                    &only(got),
                    &only(want),
                    1e-4,
                    pose_error,
                )
                .unwrap_or_else(|e| panic!("frame {f}, region {}: {e}", [1, 3][region]));
            }
            let palette = |k: usize| -> Vec<_> {
                // The others' as the staged path's, so that an error names the joint slot.
                let others = palettes[k].iter().zip(&palettes[staged]).zip(&compared);
                others.map(|((m, w), &c)| if c { *m } else { *w }).collect()
            };
            worst = worst.max(
                compare("palette", &palette(fused), &palette(staged), 1e-4, affine_error)
                    .unwrap_or_else(|e| panic!("frame {f}: {e}")),
            );
        }
        for (a, b) in [(0, 2), (1, 3)] {
            assert!(
                kept[a] == kept[b],
                "frame {f}: the thread counts' poses differ ({a} against {b})"
            );
            assert!(
                palettes[a] == palettes[b],
                "frame {f}: the thread counts' palettes differ ({a} against {b})"
            );
        }
    }
    let left_out = overflowed.iter().filter(|&&o| o).count();
    eprintln!(
        "fused vs staged through inertialized transitions: worst palette error {worst:e}; {from_last_pose} \
         velocities from the pose shown before; {left_out} characters left out (blend list full)"
    );
    assert!(
        from_last_pose > 50,
        "the staged path took {from_last_pose} velocities from the pose shown before"
    );
    assert!(
        left_out < n / 10,
        "{left_out} of {n} characters overflowed their blend lists"
    );
}

/// The mannequin's raw clips (so that the f64 reference samples what the GPU samples).
struct Mannequin {
    lib: wgpu_anim::AnimationLibrary,
    skeleton: wgpu_anim::Skeleton,
    clips: Vec<wgpu_anim::Clip>,
    ids: Vec<wgpu_anim::ClipId>,
}

fn mannequin_raw() -> &'static Mannequin {
    static M: std::sync::OnceLock<Mannequin> = std::sync::OnceLock::new();
    M.get_or_init(|| {
        let (lib, _, ids) = mannequin::library_in(ClipFormat::Raw);
        let skeleton = mannequin::skeleton();
        let clips = mannequin::clips(&skeleton);
        Mannequin {
            lib,
            skeleton,
            clips,
            ids,
        }
    })
}

/// Clip `k` of the mannequin at `t` seconds (looping), every joint's local pose in f64.
fn clip_pose(m: &Mannequin, k: usize, t: f64) -> Vec<TransformF64> {
    let clip = &m.clips[k];
    let d = f64::from(clip.duration);
    reference::sample(&m.skeleton, clip, t.rem_euclid(d))
}

fn as_f64(p: &LocalPose) -> TransformF64 {
    TransformF64 {
        translation: p.translation.truncate().as_dvec3(),
        rotation: glam::DQuat::from_vec4(p.rotation.as_dvec4()),
        scale: p.scale.truncate().as_dvec3(),
    }
}

fn transform_error(got: &TransformF64, want: &TransformF64) -> f64 {
    let e = |a: DVec3, b: DVec3| ((a - b).abs() / (b.abs() + 1.0)).max_element();
    let q = |a: glam::DQuat| glam::DVec4::from(a);
    let (g, mut w) = (q(got.rotation), q(want.rotation));
    if g.dot(w) < 0.0 {
        w = -w;
    }
    e(got.translation, want.translation)
        .max(e(got.scale, want.scale))
        .max(((g - w).abs() / (w.abs() + 1.0)).max_element())
}

/// One mannequin plays `walk` from 0.3 s, and `play` is called before frame `at` (at 60 frames a
/// second) with `run` from 0 s and `transition`. Returns each frame's local poses read back.
fn play_transition(transition: Transition, frames: usize, at: usize) -> Vec<Vec<LocalPose>> {
    play_transition_at(transition, frames, at, 60.0)
}

/// As [`play_transition`], at `rate` frames a second.
fn play_transition_at(transition: Transition, frames: usize, at: usize, rate: f32) -> Vec<Vec<LocalPose>> {
    let m = mannequin_raw();
    let (device, queue) = common::device();
    let mut a = animator(&device, &m.lib, 1, true);
    a.controller_mut()
        .add_instance(&InstanceDesc::new(m.ids[1]).with_time(0.3))
        .unwrap();
    let mut out = Vec::new();
    for f in 0..frames {
        if f == at {
            a.controller_mut()
                .play(0, &InstanceDesc::new(m.ids[2]), Some(transition))
                .unwrap();
        }
        step(&device, &queue, &mut a, if f == 0 { 0.0 } else { 1.0 / rate });
        out.push(a.read_local_region(&device, &queue, 0).unwrap());
    }
    out
}

/// What the f64 reference shows at each frame of [`play_transition`]; with `velocity` false, of a
/// transition that forgets the shown pose's velocity (it starts at rest).
fn reference_transition(transition: Transition, frames: usize, at: usize, velocity: bool) -> Vec<Vec<TransformF64>> {
    reference_transition_at(transition, frames, at, 60.0, velocity)
}

/// As [`reference_transition`], at `rate` frames a second.
fn reference_transition_at(
    transition: Transition,
    frames: usize,
    at: usize,
    rate: f64,
    velocity: bool,
) -> Vec<Vec<TransformF64>> {
    let m = mannequin_raw();
    let dt = 1.0 / rate;
    let walk = |f: usize| clip_pose(m, 1, 0.3 + f as f64 * dt);
    // The hold frame `at` shows the walk and keeps its velocity; the run starts the frame after
    // from 0 s, stepping first to dt.
    let source = walk(at);
    let velocity: Vec<_> = source
        .iter()
        .zip(walk(at - 1))
        .map(|(now, before)| oracle::velocity(now, &before, dt).scaled(if velocity { 1.0 } else { 0.0 }))
        .collect();
    let duration = f64::from(transition.duration);
    (0..frames)
        .map(|f| {
            if f <= at {
                return walk(f);
            }
            let k = f - at;
            let time = k as f64 * dt;
            let run = clip_pose(m, 2, time);
            match transition.blending {
                Blending::DeadBlend { halflife } => (0..run.len())
                    .map(|j| oracle::dead_blend(&source[j], &velocity[j], &run[j], time, duration, f64::from(halflife)))
                    .collect(),
                _ => {
                    let (before, first) = (clip_pose(m, 2, 0.0), clip_pose(m, 2, dt));
                    (0..run.len())
                        .map(|j| {
                            let (x0, v0) = oracle::start_offset(&source[j], &velocity[j], &before[j], &first[j], dt);
                            oracle::add(&run[j], &oracle::decay_offset(&x0, &v0, time, duration))
                        })
                        .collect()
                }
            }
        })
        .collect()
}

/// Per frame, the largest second difference of any joint's local translation and rotation:
/// the change of its per-frame motion.
fn second_differences(frames: &[Vec<TransformF64>]) -> Vec<f64> {
    (2..frames.len())
        .map(|f| {
            (0..frames[f].len())
                .map(|j| {
                    let d = |a: &TransformF64, b: &TransformF64| oracle::sub(a, b);
                    let (d1, d0) = (
                        d(&frames[f][j], &frames[f - 1][j]),
                        d(&frames[f - 1][j], &frames[f - 2][j]),
                    );
                    (d1.t - d0.t).length().max((d1.r - d0.r).length())
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

#[test]
fn transitions_on_the_gpu_match_the_f64_reference_and_do_not_jump() {
    let (frames, at) = (60, 10);
    for transition in [
        Transition::inertialize(0.4),
        Transition::dead_blend(0.4),
        Transition::linear(0.3).with_blending(Blending::DeadBlend { halflife: 0.0 }),
    ] {
        let gpu = play_transition(transition, frames, at);
        let want = reference_transition(transition, frames, at, true);
        let mut worst = 0.0f64;
        for (f, (g, w)) in gpu.iter().zip(&want).enumerate() {
            for (j, (g, w)) in g.iter().zip(w).enumerate() {
                let e = transform_error(&as_f64(g), w);
                assert!(
                    e <= 1e-4,
                    "{transition:?}: frame {f} joint {j} off by {e:e} from the reference"
                );
                worst = worst.max(e);
            }
        }
        // No jump in pose or velocity at the switch: the motion changes there by no more than it
        // does within the clips themselves.
        let got: Vec<Vec<TransformF64>> = gpu.iter().map(|p| p.iter().map(as_f64).collect()).collect();
        let accel = second_differences(&got);
        let within_clips = accel[..at - 2]
            .iter()
            .chain(&accel[at + 30..])
            .fold(0.0f64, |a, &b| a.max(b));
        let switch = accel[at - 2..at + 3].iter().fold(0.0f64, |a, &b| a.max(b));
        eprintln!(
            "{transition:?}: worst error {worst:e}; largest change of motion at the switch {switch:.2e}, \
             within the clips {within_clips:.2e}"
        );
        assert!(
            switch <= 1.5 * within_clips,
            "{transition:?}: the motion changes by {switch} at the switch, {within_clips} within the clips"
        );
        // Once the duration has passed the target plays alone: offset and velocity are 0.
        let m = mannequin_raw();
        let end = at + 1 + (f64::from(transition.duration) * 60.0).ceil() as usize;
        for (f, pose) in gpu.iter().enumerate().skip(end) {
            let run = clip_pose(m, 2, (f - at) as f64 / 60.0);
            for (j, (g, w)) in pose.iter().zip(&run).enumerate() {
                let e = transform_error(&as_f64(g), w);
                assert!(
                    e <= 2e-5,
                    "{transition:?}: frame {f} joint {j} is {e:e} off the target after the transition"
                );
            }
        }
    }
    // A cut does jump: the measure above can fail.
    let cut = play_transition(Transition::linear(0.0), frames, at);
    let got: Vec<Vec<TransformF64>> = cut.iter().map(|p| p.iter().map(as_f64).collect()).collect();
    let accel = second_differences(&got);
    let within_clips = accel[..at - 2].iter().fold(0.0f64, |a, &b| a.max(b));
    assert!(accel[at - 2..at + 3].iter().any(|&a| a > 1.5 * within_clips));
}

#[test]
fn an_inertialized_offset_never_passes_zero() {
    // On the GPU: each joint's offset from the target keeps the side of zero it started on, in
    // every channel, along its starting direction.
    let (frames, at) = (50, 10);
    let m = mannequin_raw();
    let gpu = play_transition(Transition::inertialize(0.5), frames, at);
    let dt = 1.0 / 60.0;
    let offset = |f: usize| -> Vec<oracle::DeltaF64> {
        let run = clip_pose(m, 2, (f - at) as f64 * dt);
        gpu[f]
            .iter()
            .zip(&run)
            .map(|(g, w)| oracle::sub(&as_f64(g), w))
            .collect()
    };
    let first = offset(at + 1);
    let mut checked = 0;
    for f in at + 2..frames {
        for (j, (o, x)) in offset(f).iter().zip(&first).enumerate() {
            for (a, b) in [(o.t, x.t), (o.r, x.r)] {
                if b.length() > 1e-3 {
                    checked += 1;
                    assert!(
                        a.dot(b.normalize()) >= -1e-5,
                        "frame {f} joint {j}: the offset passed zero ({a} against {b})"
                    );
                }
            }
        }
    }
    assert!(checked > 100, "{checked} offsets checked");
}

#[test]
fn interrupted_transitions_stay_continuous() {
    // walk → run (inertialized), interrupted by idle (inertialized), by walk (cross-fade), by run
    // (dead blending): no frame changes a joint's motion more than the clips do, and none moves
    // it much faster (the decaying offset's own motion adds to the target's).
    let m = mannequin_raw();
    let (device, queue) = common::device();
    let mut a = animator(&device, &m.lib, 1, true);
    a.controller_mut().add_instance(&InstanceDesc::new(m.ids[1])).unwrap();
    let plays = [
        (10, 2, Transition::inertialize(0.5)),
        (18, 0, Transition::inertialize(0.4)),
        (24, 1, Transition::linear(0.3)),
        (29, 2, Transition::dead_blend(0.4)),
        (33, 0, Transition::inertialize(0.3)),
    ];
    let mut poses = Vec::new();
    for f in 0..70 {
        for &(at, clip, t) in &plays {
            if f == at {
                a.controller_mut()
                    .play(0, &InstanceDesc::new(m.ids[clip]), Some(t))
                    .unwrap();
            }
        }
        step(&device, &queue, &mut a, if f == 0 { 0.0 } else { 1.0 / 60.0 });
        let local = a.read_local_region(&device, &queue, 0).unwrap();
        poses.push(local.iter().map(as_f64).collect::<Vec<_>>());
    }
    // The clips alone, sampled in f64 at the same rate.
    let alone: Vec<Vec<Vec<TransformF64>>> = (0..3)
        .map(|k| (0..70).map(|f| clip_pose(m, k, f as f64 / 60.0)).collect())
        .collect();
    let speed = |frames: &[Vec<TransformF64>]| {
        (1..frames.len())
            .map(|f| {
                frames[f]
                    .iter()
                    .zip(&frames[f - 1])
                    .map(|(a, b)| {
                        let d = oracle::sub(a, b);
                        d.t.length().max(d.r.length())
                    })
                    .fold(0.0, f64::max)
            })
            .fold(0.0, f64::max)
    };
    let accel = |frames: &[Vec<TransformF64>]| second_differences(frames).into_iter().fold(0.0, f64::max);
    let clip_speed = alone.iter().map(|c| speed(c)).fold(0.0, f64::max);
    let clip_accel = alone.iter().map(|c| accel(c)).fold(0.0, f64::max);
    let (got_speed, got_accel) = (speed(&poses), accel(&poses));
    eprintln!(
        "interrupted transitions: speed {got_speed:.3e} (clips {clip_speed:.3e}), change of motion \
         {got_accel:.3e} (clips {clip_accel:.3e})"
    );
    assert!(got_speed <= 1.25 * clip_speed, "a joint moved {got_speed} in a frame");
    assert!(
        got_accel <= 1.5 * clip_accel,
        "a joint's motion changed by {got_accel} in a frame"
    );
}

#[test]
fn the_decay_curves_end_at_rest_and_never_pass_zero() {
    let mut r = rng(7);
    let mut worst = 0.0f64;
    for _ in 0..20_000 {
        let x0 = Vec3::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0));
        let scale = if r.gen_bool(0.2) { 1e-4 } else { 1.0 };
        let x0 = x0 * scale;
        let v0 = Vec3::new(
            r.gen_range(-30.0..30.0),
            r.gen_range(-30.0..30.0),
            r.gen_range(-30.0..30.0),
        ) * scale;
        let t1: f32 = r.gen_range(0.05..1.0);
        // An offset that small counts as none (its direction is rounding's): all of v0 leaves
        // and returns.
        let negligible = x0.length() <= mirror::DECAY_NEGLIGIBLE * (1.0 + v0.length() * t1);
        let dir = if negligible { Vec3::ZERO } else { x0.normalize() };
        for k in 0..=200 {
            let t = t1 * k as f32 / 200.0;
            let x = mirror::decay_vector(x0, v0, t, t1);
            // Never past zero along the starting offset (f32's rounding of the offset's scale
            // aside).
            let size = x0.length() + v0.length() * t1;
            assert!(
                x.dot(dir) >= -1e-6 * size,
                "x0 {x0} v0 {v0} t1 {t1}: at {t} the offset is {x}"
            );
            // The mirror against the f64 reference.
            let want = oracle::decay(x0.as_dvec3(), v0.as_dvec3(), f64::from(t), f64::from(t1));
            let e = (x.as_dvec3() - want).length() / (x0.length() + v0.length() * t1).max(1e-30) as f64;
            worst = worst.max(e);
        }
        // Starts at x0 with velocity v0; ends at 0 with velocity and acceleration 0.
        let (x0d, v0d, t1d) = (x0.as_dvec3(), v0.as_dvec3(), f64::from(t1));
        let h = 1e-6 * t1d;
        let at = |t: f64| oracle::decay(x0d, v0d, t, t1d);
        let start = if negligible { DVec3::ZERO } else { x0d };
        assert!((at(0.0) - start).length() <= 1e-12 * f64::from(scale));
        assert!(((at(h) - at(0.0)) / h - v0d).length() <= 1e-3 * (v0d.length() + x0d.length() / t1d));
        assert_eq!(at(t1d), DVec3::ZERO);
        let near = at(t1d - h);
        assert!(
            near.length() <= 1e-9 * (v0d.length() + x0d.length()),
            "not at rest at the end: {near}"
        );
    }
    eprintln!("decay: mirror against the f64 reference, worst {worst:e} of the offset's scale");
    assert!(worst < 1e-5);
}

#[test]
fn dead_blending_starts_at_the_source_with_its_velocity_and_ends_at_the_target() {
    let mut r = rng(8);
    for _ in 0..2000 {
        let pose = |r: &mut rand::rngs::SmallRng| TransformF64 {
            translation: DVec3::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)),
            rotation: common::random_quat(r).as_dquat().normalize(),
            scale: DVec3::splat(r.gen_range(0.5..1.5)),
        };
        let (source, target) = (pose(&mut r), pose(&mut r));
        let v = oracle::DeltaF64 {
            t: DVec3::new(r.gen_range(-2.0..2.0), 0.5, -0.3),
            r: DVec3::new(r.gen_range(-2.0..2.0), 0.1, 0.2),
            s: DVec3::ZERO,
        };
        let (duration, halflife) = (r.gen_range(0.1..1.0), r.gen_range(0.01..0.5));
        let at = |t: f64| oracle::dead_blend(&source, &v, &target, t, duration, halflife);
        let h = 1e-6;
        let moved = oracle::sub(&at(h), &at(0.0)).scaled(1.0 / h);
        assert!(transform_error(&at(0.0), &source) < 1e-9);
        assert!((moved.t - v.t).length() < 1e-3 && (moved.r - v.r).length() < 1e-3);
        assert!(transform_error(&at(duration), &target) < 1e-9);
        // The f32 mirror against it.
        let f32_pose = |p: &TransformF64| LocalPose {
            translation: p.translation.as_vec3().extend(0.0),
            rotation: glam::Vec4::from(p.rotation.as_quat()),
            scale: p.scale.as_vec3().extend(0.0),
        };
        let vf = mirror::PoseDelta {
            t: v.t.as_vec3(),
            r: v.r.as_vec3(),
            s: v.s.as_vec3(),
        };
        for k in 0..=10 {
            let t = duration * f64::from(k) / 10.0;
            let got = mirror::dead_blend(
                &f32_pose(&source),
                &vf,
                &f32_pose(&target),
                t as f32,
                duration as f32,
                halflife as f32,
            );
            let e = transform_error(&as_f64(&got), &at(t));
            assert!(e < 1e-5, "dead blending at {t}: {e:e}");
        }
    }
}

#[test]
fn bad_inertialized_transitions_are_refused() {
    let m = mannequin_raw();
    let (device, _) = common::device();
    // No room kept: refused, nothing changes.
    let mut a = animator(&device, &m.lib, 1, false);
    a.controller_mut().add_instance(&InstanceDesc::new(m.ids[1])).unwrap();
    let before = *a.controller().instance(0).unwrap();
    let e = a
        .controller_mut()
        .play(0, &InstanceDesc::new(m.ids[2]), Some(Transition::inertialize(0.3)))
        .unwrap_err();
    assert!(e.to_string().contains("AnimatorDesc::inertialization"), "{e}");
    assert_eq!(*a.controller().instance(0).unwrap(), before);
    // A cross-fade still works there.
    a.controller_mut()
        .play(0, &InstanceDesc::new(m.ids[2]), Some(Transition::linear(0.3)))
        .unwrap();
    // Durations and half-lives that are not finite or negative.
    let mut a = animator(&device, &m.lib, 1, true);
    let controller = a.controller_mut();
    controller.add_instance(&InstanceDesc::new(m.ids[1])).unwrap();
    for t in [
        Transition::inertialize(f32::NAN),
        Transition::inertialize(-1.0),
        Transition::dead_blend(f32::INFINITY),
        Transition::linear(0.3).with_blending(Blending::DeadBlend { halflife: f32::NAN }),
        Transition::linear(0.3).with_blending(Blending::DeadBlend { halflife: -0.1 }),
    ] {
        let e = controller.play(0, &InstanceDesc::new(m.ids[2]), Some(t)).unwrap_err();
        assert!(e.to_string().contains("instance 0"), "{e}");
        assert_eq!(controller.instance(0).unwrap().flags & KEEP_VELOCITY, 0);
    }
    // A good one holds the instance a frame that keeps its velocity, then starts.
    controller
        .play(0, &InstanceDesc::new(m.ids[2]), Some(Transition::inertialize(0.3)))
        .unwrap();
    assert_ne!(controller.instance(0).unwrap().flags & KEEP_VELOCITY, 0);
    assert_eq!(controller.instance(0).unwrap().source_kind(), source_kind::NONE);
}

#[test]
fn morph_weights_mix_in_from_those_shown() {
    // The mannequin's gaits breathe (a weight track each, at their own phase) and it holds its
    // second target at 0.6: walk → run inertialized, the weights drawn against the mirror
    // (blended as the pose, then mixed in from the kept ones), and with no jump at the switch.
    let (lib, _, clips) = mannequin::library_breathing_in(ClipFormat::Raw);
    let (device, queue) = common::device();
    let desc = AnimatorDesc::default()
        .with_max_instances(2)
        .with_morph_weights(2)
        .with_inertialization(true);
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    for k in 0..2 {
        a.controller_mut().add_instance(&InstanceDesc::new(clips[1])).unwrap();
        a.controller_mut().set_morph_weights(k, &[0.0, 0.6]).unwrap();
    }
    let read = |a: &Animator, part: usize| -> Vec<f32> {
        let all: Vec<f32> = a
            .read_page_buffer(
                &device,
                &queue,
                0,
                wgpu_anim::shaders::Resource::MorphWeights,
                0,
                3 * 2 * 2,
            )
            .unwrap();
        let base = part * a.controller().page_capacity(0) as usize * 2;
        all[base..base + 4].to_vec()
    };
    let (at, duration) = (10, 0.4);
    let mut drawn = Vec::new();
    for f in 0..40 {
        if f == at {
            // Instance 0 inertializes, instance 1 cuts.
            a.controller_mut()
                .play(0, &InstanceDesc::new(clips[2]), Some(Transition::inertialize(duration)))
                .unwrap();
            a.controller_mut().play(1, &InstanceDesc::new(clips[2]), None).unwrap();
        }
        step(&device, &queue, &mut a, if f == 0 { 0.0 } else { 1.0 / 60.0 });
        let (weights, kept) = (read(&a, 0), read(&a, 2));
        let lists = a.read_blend_lists(&device, &queue).unwrap();
        let own = a.controller().morph_weights(0).unwrap();
        let blended = cpu::blend_morph_weights(&lib, &lists[0], &own[..2], &kept[..2]);
        for t in 0..2 {
            let want =
                mirror::inertia_morph_weight(lists[0].inertia, lists[0].inertia_time, duration, kept[t], blended[t]);
            assert!(
                (weights[t] - want).abs() <= 1e-6,
                "frame {f} target {t}: {} against {want}",
                weights[t]
            );
        }
        drawn.push(weights);
    }
    let step_of = |k: usize, f: usize| (drawn[f][k] - drawn[f - 1][k]).abs();
    let within = (1..at).map(|f| step_of(0, f)).fold(0.0f32, f32::max);
    let at_switch = (at..at + 3).map(|f| step_of(0, f)).fold(0.0f32, f32::max);
    let cut = step_of(2, at);
    eprintln!("breathing weight: largest step {within:.4} before, {at_switch:.4} at the switch, {cut:.4} cut");
    assert!(
        at_switch <= 1.5 * within,
        "the breathing weight jumps by {at_switch} at the switch"
    );
    assert!(cut > 1.5 * within, "a cut jumps ({cut}): the check above can fail");
    // The held weight is the instance's own throughout.
    assert!(drawn.iter().all(|w| (w[1] - 0.6).abs() < 1e-6));
}

/// Per joint, the largest change of motion (second difference of translation and rotation) over
/// frames `range`.
fn joint_second_differences(frames: &[Vec<TransformF64>], range: std::ops::Range<usize>) -> Vec<f64> {
    let joints = frames[0].len();
    (0..joints)
        .map(|j| {
            range
                .clone()
                .filter(|&f| f >= 2 && f < frames.len())
                .map(|f| {
                    let d1 = oracle::sub(&frames[f][j], &frames[f - 1][j]);
                    let d0 = oracle::sub(&frames[f - 1][j], &frames[f - 2][j]);
                    (d1.t - d0.t).length().max((d1.r - d0.r).length())
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

#[test]
fn the_velocity_does_not_jump_at_the_switch() {
    // A jump in velocity changes the motion between two frames by as much however short they
    // are; a smooth curve by less, in proportion to the frame. So m, the largest change of motion
    // around the switch per second of frame, is J + S dt: the jump J, and the smooth part. From
    // 60 and 240 frames a second, J = (4 m(240) - m(60)) / 3, which must be under a tenth of
    // m(60). A transition that forgets the shown pose's velocity (the reference started at rest)
    // has a J of a fifth of m(60) or more: the check can fail.
    let seconds = 1.0 / 6.0; // when `play` is called
    let measure = |poses: &[Vec<TransformF64>], rate: f64| -> f64 {
        let at = (seconds * rate).round() as usize;
        joint_second_differences(poses, at..at + 4)
            .into_iter()
            .fold(0.0, f64::max)
            * rate
    };
    for transition in [Transition::inertialize(0.4), Transition::dead_blend(0.4)] {
        let mut got = Vec::new();
        let mut forgetful = Vec::new();
        for rate in [60.0, 240.0] {
            let at = (seconds * rate).round() as usize;
            let frames = at + 8;
            let gpu: Vec<Vec<TransformF64>> = play_transition_at(transition, frames, at, rate as f32)
                .iter()
                .map(|p| p.iter().map(as_f64).collect())
                .collect();
            got.push(measure(&gpu, rate));
            forgetful.push(measure(
                &reference_transition_at(transition, frames, at, rate, false),
                rate,
            ));
        }
        let jump = |m: &[f64]| (4.0 * m[1] - m[0]) / 3.0;
        eprintln!(
            "{transition:?}: largest change of motion per second at 60 and 240 frames a second {:.3} and \
             {:.3}, jump {:.3}; forgetting the velocity {:.3} and {:.3}, jump {:.3}",
            got[0],
            got[1],
            jump(&got),
            forgetful[0],
            forgetful[1],
            jump(&forgetful)
        );
        assert!(
            jump(&got) <= 0.1 * got[0],
            "{transition:?}: the velocity jumps at the switch"
        );
        assert!(
            jump(&forgetful) >= 0.2 * forgetful[0],
            "{transition:?}: forgetting the velocity should jump"
        );
    }
}

#[test]
fn a_frame_too_short_to_measure_a_velocity_gives_none_not_a_nan() {
    // A frame of 1e-40 s (a finite dt the API takes) at the frame that keeps the velocity and at
    // the first frame: 1 / dt is infinite there, so the velocity is taken as 0 (frames under
    // VELOCITY_MIN_DT) and every pose stays finite on the GPU.
    let m = mannequin_raw();
    let (device, queue) = common::device();
    let mut a = animator(&device, &m.lib, 2, true);
    for _ in 0..2 {
        a.controller_mut().add_instance(&InstanceDesc::new(m.ids[1])).unwrap();
    }
    step(&device, &queue, &mut a, 1.0 / 60.0);
    a.controller_mut()
        .play(0, &InstanceDesc::new(m.ids[2]), Some(Transition::inertialize(0.3)))
        .unwrap();
    a.controller_mut()
        .play(1, &InstanceDesc::new(m.ids[2]), Some(Transition::dead_blend(0.3)))
        .unwrap();
    for dt in [1e-40, 1e-40, 1.0 / 60.0, 1.0 / 60.0] {
        step(&device, &queue, &mut a, dt);
        let (_, pose) = a.read_back(&device, &queue).unwrap();
        let local = a.read_local_region(&device, &queue, 0).unwrap();
        assert!(
            local
                .iter()
                .all(|p| p.translation.is_finite() && p.rotation.is_finite() && p.scale.is_finite())
        );
        assert!(
            pose.palette
                .iter()
                .all(|m| m.x.is_finite() && m.y.is_finite() && m.z.is_finite())
        );
    }
    assert!(mirror::pose_velocity(&LocalPose::default(), &LocalPose::default(), 1e-40) == mirror::PoseDelta::default());
}
