//! The GPU against the CPU mirror, stage by stage: each stage's CPU mirror is given the GPU's own
//! input buffer (read back) and its result is compared, joint by joint, with the GPU's output
//! buffer (read back). Thousands of instances, random clips, times, rates and loop modes.
//!
//! Tolerances (element-wise, relative to 1 + |expected|):
//! - clock: 1e-5 on local and sample time, except across a loop boundary (where f32 `floor` may
//!   land on either side), where the two agree modulo the duration;
//! - sample: 2e-5 (slerp's `acos`/`sin` are not correctly rounded on GPUs);
//! - local_to_model, palette: 1e-5 (one matrix product each; FMA contraction may differ).

mod common;

use common::{affine_error, assert_clock, compare, device, pose_error, random_library, random_state, rng};
use rand::Rng;
use wgpu_anim::cpu::{self, PageBuffers};
use wgpu_anim::gpu::{Curve, Transition};
use wgpu_anim::layout::{BlendList, GpuFrame, LocalPose};
use wgpu_anim::{Animator, AnimatorDesc, ClipId, InstanceDesc, LoopMode};

struct Run {
    device: wgpu::Device,
    queue: wgpu::Queue,
    animator: Animator,
    frame: GpuFrame,
}

fn run_frames(instances: usize, seed: u64, dts: &[f32]) -> Run {
    run_frames_with(instances, seed, dts, None)
}

/// `clips`: restrict instances to clips `0..clips` (with a joint budget of one per instance).
fn run_frames_with(instances: usize, seed: u64, dts: &[f32], clips: Option<u32>) -> Run {
    run_frames_on(&random_library(seed).0, instances, seed, dts, clips)
}

/// [`run_frames_with`] on `lib`, a library laid out as [`random_library`]'s.
fn run_frames_on(
    lib: &wgpu_anim::AnimationLibrary,
    instances: usize,
    seed: u64,
    dts: &[f32],
    clips: Option<u32>,
) -> Run {
    let (device, queue) = device();
    let mut animator = Animator::new(
        &device,
        lib,
        &AnimatorDesc::default()
            .with_max_instances(instances as u32)
            .with_max_joints(clips.map(|_| instances as u32)),
    )
    .unwrap();
    let mut r = rng(seed ^ 0x5eed);
    for _ in 0..instances {
        let clip = lib
            .clip_at(r.gen_range(0..clips.unwrap_or(lib.clips().len() as u32)))
            .unwrap();
        let loop_mode = match r.gen_range(0..3) {
            0 => LoopMode::Once,
            1 => LoopMode::Repeat(r.gen_range(1..4)),
            _ => LoopMode::Forever,
        };
        let desc = InstanceDesc::new(clip)
            .with_time(r.gen_range(-1.0..6.0))
            .with_rate(r.gen_range(-2.0..2.0))
            .with_loop_mode(loop_mode);
        // Half the instances play a blend tree of their clip's skeleton with random parameters,
        // some outside the blend spaces.
        let desc = if r.gen_bool(0.5) {
            let trees = common::TREES_PER_SKELETON;
            let tree = lib.clips()[clip.index() as usize].skeleton * trees + r.gen_range(0..trees);
            let tree = lib.blend().tree_at(tree).unwrap();
            let params = [
                r.gen_range(-2.5..2.5),
                r.gen_range(-2.5..2.5),
                r.gen_range(-0.5..1.5),
                r.gen_range(-0.5..1.5),
            ];
            InstanceDesc::tree(tree, params).with_time(r.gen_range(0.0..1.0))
        } else {
            desc
        };
        animator.controller_mut().add_instance(&desc).unwrap();
    }
    // Layers on about a third of the instances: every mode, with and without masks, clips (some
    // sampled at a parameter) and trees.
    common::random_layers(&mut animator, &mut r);
    for (f, &dt) in dts.iter().enumerate() {
        // Transitions: after the first frame a third of the instances cross-fade to another clip
        // of their skeleton; after the second, some of those are interrupted (snapshot source).
        if f == 1 || f == 2 {
            for i in 0..instances {
                if r.gen_range(0..3) != 0 {
                    continue;
                }
                let inst = *animator.controller().instance(i).unwrap();
                let transition = Transition::linear(r.gen_range(0.1..1.0))
                    .with_curve(if r.gen_bool(0.5) { Curve::Smooth } else { Curve::Linear })
                    .with_frozen(r.gen_bool(0.3));
                let desc = {
                    // The fields drawn before the state, as they were.
                    let (time, rate) = (r.gen_range(0.0..1.0), r.gen_range(-1.5..1.5));
                    random_state(&mut r, lib, inst.skeleton).with_time(time).with_rate(rate)
                };
                animator.controller_mut().play(i, &desc, Some(transition)).unwrap();
            }
        }
        animator.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    }
    let frame = GpuFrame {
        dt: *dts.last().unwrap(),
        instance_count: instances as u32,
        snapshot_offset: animator.max_joints(),
        ..Default::default()
    };
    Run {
        device,
        queue,
        animator,
        frame,
    }
}

#[test]
fn every_stage_matches_its_cpu_mirror_for_thousands_of_instances() {
    let run = run_frames(3000, 7, &[0.0, 0.37, 0.016, 0.05]);
    let lib = run.animator.controller().library();
    let insts = run.animator.controller().instances();
    let (clocks, gpu) = run.animator.read_back(&run.device, &run.queue).unwrap();

    // sample: the GPU's blend lists and snapshots in, local poses out.
    let local = cpu_sample_from_gpu(&run);
    let worst_sample = compare_sample(&run, &gpu.local, &local);
    let lists = run.animator.read_blend_lists(&run.device, &run.queue).unwrap();
    let blended = lists.iter().filter(|l| l.count > 1).count();
    let snapshots = lists
        .iter()
        .filter(|l| l.samples[..l.count as usize].iter().any(|s| s.clip == u32::MAX))
        .count();
    assert!(
        blended > 300 && snapshots > 50,
        "{blended} instances blending, {snapshots} from a snapshot"
    );
    let _ = clocks;

    // local_to_model: the GPU's local poses and mesh-space deltas in.
    let mut model = vec![wgpu_anim::Affine::IDENTITY; gpu.model.len()];
    let mut local = gpu_local_regions(&run);
    let mut insts_rw = insts.to_vec();
    let mut page = PageBuffers::new(&run.frame, &mut insts_rw)
        .local_poses(&mut local)
        .model_poses(&mut model);
    cpu::local_to_model(lib, &mut page).unwrap();
    let layered = insts
        .iter()
        .filter(|i| i.flags & (wgpu_anim::layout::LAYER_ON * 7) != 0)
        .count();
    let mesh = insts.iter().filter(|i| cpu::has_mesh_layer(i)).count();
    assert!(
        layered > 500 && mesh > 100,
        "{layered} instances with layers, {mesh} with a mesh-space layer"
    );
    // 1e-5 per matrix; instances with a mesh-space layer also chain model rotations down the
    // hierarchy inside this stage (R_j = R_parent q_j), so theirs grow by 1e-6 per level.
    let mut worst_model = 0.0f32;
    for inst in insts {
        let depths = lib.skeletons()[inst.skeleton as usize].depths();
        let mesh_layer = cpu::has_mesh_layer(inst);
        for (j, &depth) in depths.iter().enumerate().take(inst.joint_count as usize) {
            let slot = inst.joint_offset as usize + j;
            let tolerance = 1e-5 + if mesh_layer { 1e-6 * depth as f32 } else { 0.0 };
            let e = affine_error(&gpu.model[slot], &model[slot]);
            assert!(
                e <= tolerance,
                "local_to_model: joint {j} at depth {depth} off by {e:e} (tolerance {tolerance:e})"
            );
            worst_model = worst_model.max(e);
        }
    }

    // palette: the GPU's model matrices in.
    let mut palette = vec![wgpu_anim::Affine::IDENTITY; gpu.palette.len()];
    cpu_palette(lib, &run.frame, insts, &gpu.model, &mut palette);
    let worst_palette = compare("palette", &gpu.palette, &palette, 1e-5, affine_error).unwrap();

    eprintln!(
        "{} instances, {} joints: worst error sample {worst_sample:e}, local_to_model {worst_model:e}, palette {worst_palette:e}",
        insts.len(),
        gpu.local.len()
    );
    assert!(clocks.iter().all(|c| c.time.to_f32().is_finite()));
}

/// Compares the sample stage joint by joint (tolerance 2e-5). A joint where one of the blended
/// rotations is within 1e-4 of perpendicular (in 4D) to the heaviest one sits on the sign-alignment
/// discontinuity of N-way quaternion blending: a last-bit difference in the sampled rotation can
/// flip that sample's sign on one side only. Such joints (found by re-sampling on the CPU) are
/// counted, not failed, and must stay rare. Returns the worst error elsewhere.
#[test]
fn sample_matches_its_mirror_where_clips_key_their_tracks_at_one_set_of_times() {
    // The random library keys each track at its own times, so the sample stage searches per
    // track; keyed at one set of times per clip, it searches once per character and sample
    // (`CLIP_TIMES`), which this compares with the mirror.
    assert!(!random_library(7).0.clips_share_key_times());
    // The mannequin's takes key each clip's tracks at one set of times; compressed, nothing is
    // searched.
    use wgpu_anim::offline::compress::ClipFormat;
    assert!(
        wgpu_anim::mannequin::library_in(ClipFormat::Raw)
            .0
            .clips_share_key_times()
    );
    assert!(
        !wgpu_anim::mannequin::library_in(ClipFormat::Compressed)
            .0
            .clips_share_key_times()
    );
    let lib = common::random_library_sharing_key_times(7).0;
    assert!(lib.clips_share_key_times());
    assert!(
        wgpu_anim::shaders::library_defs(&lib)
            .iter()
            .any(|d| d.0 == "CLIP_TIMES")
    );
    let run = run_frames_on(&lib, 1500, 7, &[0.0, 0.37, 0.016, 0.05], None);
    let (_, gpu) = run.animator.read_back(&run.device, &run.queue).unwrap();
    let local = cpu_sample_from_gpu(&run);
    let worst = compare_sample(&run, &gpu.local, &local);
    let lists = run.animator.read_blend_lists(&run.device, &run.queue).unwrap();
    let blended = lists.iter().filter(|l| l.count > 1).count();
    assert!(blended > 150, "{blended} instances blending");
    eprintln!("sample with one search per clip sample: worst {worst:e}");
}

fn compare_sample(run: &Run, gpu: &[LocalPose], cpu_local: &[LocalPose]) -> f32 {
    let a = &run.animator;
    let lib = a.controller().library();
    let lists = a.read_blend_lists(&run.device, &run.queue).unwrap();
    let mut worst = 0.0f32;
    let mut ambiguous = 0;
    for (i, inst) in a.controller().instances().iter().enumerate() {
        let l = &lists[i];
        for j in 0..inst.joint_count {
            let slot = (inst.joint_offset + j) as usize;
            let e = pose_error(&gpu[slot], &cpu_local[slot]);
            if e <= 2e-5 {
                worst = worst.max(e);
                continue;
            }
            let rotation = |k: usize| {
                let e = l.samples[k];
                (e.clip != u32::MAX).then(|| {
                    cpu::sample_joint(lib, &lib.clips()[e.clip as usize], j, e.time)
                        .unwrap()
                        .rotation
                })
            };
            let on_edge = match rotation(0) {
                Some(q0) => (1..l.count as usize).any(|k| rotation(k).is_some_and(|q| q0.dot(q).abs() < 1e-4)),
                None => false,
            };
            assert!(
                on_edge,
                "sample: instance {i} joint {j} off by {e:e} (tolerance 2e-5), list {:?}",
                &l.samples[..l.count as usize]
            );
            ambiguous += 1;
        }
    }
    assert!(ambiguous <= 5, "{ambiguous} joints on the sign-alignment edge");
    worst
}

/// The GPU's local pose buffer: current poses and mesh-space deltas (read back).
fn gpu_local_regions(run: &Run) -> Vec<LocalPose> {
    let a = &run.animator;
    let max = a.max_joints() as usize;
    let mut local = vec![LocalPose::default(); 2 * max];
    for (k, region) in [0, 2].into_iter().enumerate() {
        let r = a.read_local_region(&run.device, &run.queue, region).unwrap();
        local[k * max..k * max + r.len()].copy_from_slice(&r);
    }
    local
}

/// A pose history holding `snapshots` (and room for as many velocities).
fn history_of(run: &Run, snapshots: &[LocalPose]) -> Vec<LocalPose> {
    let mut history = vec![LocalPose::default(); 2 * run.animator.max_joints() as usize];
    history[..snapshots.len()].copy_from_slice(snapshots);
    history
}

/// The CPU mirror of `sample` fed the GPU's blend lists and snapshot poses (read back). (No
/// instance keeps its pose in the compared frame, so the snapshots read back are the ones read.)
fn cpu_sample_from_gpu(run: &Run) -> Vec<LocalPose> {
    let a = &run.animator;
    assert!(
        a.controller()
            .instances()
            .iter()
            .all(|i| i.flags & wgpu_anim::layout::KEEP_POSE == 0)
    );
    let lists: Vec<BlendList> = a.read_blend_lists(&run.device, &run.queue).unwrap();
    let snapshots = a.read_snapshots(&run.device, &run.queue).unwrap();
    let mut history = history_of(run, &snapshots);
    let mut local = vec![LocalPose::default(); 2 * a.max_joints() as usize];
    let (mut insts, mut lists) = (a.controller().instances().to_vec(), lists);
    let mut page = PageBuffers::new(&run.frame, &mut insts)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history);
    cpu::sample(a.controller().library(), &mut page).unwrap();
    local.truncate(a.controller().joint_count() as usize);
    local
}

/// The CPU mirror of `palette` fed model matrices `model` (copied, with the instances, into the
/// page it runs on).
fn cpu_palette(
    lib: &wgpu_anim::AnimationLibrary,
    frame: &GpuFrame,
    insts: &[wgpu_anim::layout::GpuInstance],
    model: &[wgpu_anim::Affine],
    palette: &mut [wgpu_anim::Affine],
) {
    let (mut insts, mut model) = (insts.to_vec(), model.to_vec());
    let mut page = PageBuffers::new(frame, &mut insts)
        .model_poses(&mut model)
        .palettes(palette);
    cpu::palette(lib, &mut page).unwrap();
}

#[test]
fn poses_kept_for_interrupting_cross_fades_match_the_cpu_mirror() {
    // Cross-fades still run after these frames; interrupting them holds the new ones back a frame
    // in which the instances keep their pose as the snapshot.
    let mut run = run_frames(3000, 13, &[0.0, 0.05, 0.05]);
    let mut r = rng(14);
    for i in (0..3000).step_by(2) {
        let inst = *run.animator.controller().instance(i).unwrap();
        let desc = random_state(&mut r, run.animator.controller().library(), inst.skeleton);
        run.animator
            .controller_mut()
            .play(i, &desc, Some(Transition::linear(0.5)))
            .unwrap();
    }
    let keeping = run
        .animator
        .controller()
        .instances()
        .iter()
        .filter(|i| i.flags & wgpu_anim::layout::KEEP_POSE != 0)
        .count();
    assert!(keeping > 200, "{keeping} instances keep their pose");
    let before = run.animator.read_snapshots(&run.device, &run.queue).unwrap();
    let dt = 0.016;
    run.animator.prepare(&run.queue, dt);
    let mut encoder = run.device.create_command_encoder(&Default::default());
    run.animator.encode(&mut encoder).unwrap();
    run.queue.submit([encoder.finish()]);
    run.frame.dt = dt;

    // The mirror of sample on the GPU's blend lists and the snapshots from before the frame.
    let a = &run.animator;
    let joints = a.controller().joint_count() as usize;
    let mut lists = a.read_blend_lists(&run.device, &run.queue).unwrap();
    let mut local = vec![LocalPose::default(); 2 * a.max_joints() as usize];
    let mut history = history_of(&run, &before);
    let mut insts = a.controller().instances().to_vec();
    let mut page = PageBuffers::new(&run.frame, &mut insts)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history);
    cpu::sample(a.controller().library(), &mut page).unwrap();
    let gpu = gpu_local_regions(&run);
    compare_sample(&run, &gpu[..joints], &local[..joints]);
    let snapshots = &a.read_snapshots(&run.device, &run.queue).unwrap()[..joints];
    compare_sample(&run, snapshots, &history[..joints]);
    // The kept snapshots are this frame's poses, not the ones from before.
    let changed = (0..joints).filter(|&k| snapshots[k] != before[k]).count();
    assert!(changed > 1000, "{changed} snapshot joints written");
}

#[test]
fn clock_stage_matches_its_cpu_mirror() {
    // Transitions run (and some start in the compared frame); one more frame on both sides,
    // starting from the GPU's clocks.
    let mut run = run_frames(3000, 11, &[0.0, 0.2, 0.3]);
    let (before, _) = run.animator.read_back(&run.device, &run.queue).unwrap();
    let mut r = rng(12);
    for i in (0..3000).step_by(7) {
        let inst = *run.animator.controller().instance(i).unwrap();
        let desc = {
            // The fields drawn before the state, as they were.
            let time = r.gen_range(0.0..1.0);
            random_state(&mut r, run.animator.controller().library(), inst.skeleton).with_time(time)
        };
        run.animator
            .controller_mut()
            .play(i, &desc, Some(Transition::linear(0.5)))
            .unwrap();
    }
    let dt = 0.21;
    run.animator.prepare(&run.queue, dt);
    let mut encoder = run.device.create_command_encoder(&Default::default());
    run.animator.encode(&mut encoder).unwrap();
    run.queue.submit([encoder.finish()]);
    let (after, _) = run.animator.read_back(&run.device, &run.queue).unwrap();
    let gpu_lists = run.animator.read_blend_lists(&run.device, &run.queue).unwrap();
    let mut expected = before.clone();
    let mut lists = vec![BlendList::default(); expected.len()];
    run.frame.dt = dt;
    let lib = run.animator.controller().library();
    let mut insts = run.animator.controller().instances().to_vec();
    let mut page = PageBuffers::new(&run.frame, &mut insts)
        .layer_defs(run.animator.controller().layer_defs())
        .clocks(&mut expected)
        .blend_lists(&mut lists);
    cpu::clock(lib, &mut page).unwrap();
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * (1.0 + b.abs());
    let mut transitions = 0;
    for (i, (g, w)) in after.iter().zip(&expected).enumerate() {
        assert_clock(&run.animator, dt, i, g, w);
        let (gl, wl) = (&gpu_lists[i], &lists[i]);
        assert_eq!(gl.count, wl.count, "instance {i}: samples");
        for k in 0..gl.count as usize {
            let (a, b) = (gl.samples[k], wl.samples[k]);
            assert!(
                a.clip == b.clip && close(a.weight, b.weight),
                "instance {i} sample {k}: {a:?} vs {b:?}"
            );
            assert!(close(a.time, b.time), "instance {i} sample {k}: {a:?} vs {b:?}");
        }
        transitions += usize::from(gl.count > 1);
    }
    assert!(transitions > 300, "only {transitions} instances were in a transition");
}

#[test]
fn the_comparison_fails_on_a_deliberately_altered_buffer() {
    let run = run_frames(500, 3, &[0.0, 0.25]);
    let lib = run.animator.controller().library();
    let insts = run.animator.controller().instances();
    let (_, gpu) = run.animator.read_back(&run.device, &run.queue).unwrap();
    let mut palette = vec![wgpu_anim::Affine::IDENTITY; gpu.palette.len()];
    cpu_palette(lib, &run.frame, insts, &gpu.model, &mut palette);
    assert!(compare("palette", &gpu.palette, &palette, 1e-5, affine_error).is_ok());
    let mut altered = gpu.palette.clone();
    let j = altered.len() / 2;
    altered[j].y.w += 1e-3;
    let err = compare("palette", &altered, &palette, 1e-5, affine_error).unwrap_err();
    assert!(err.contains(&format!("entry {j}")), "{err}");
    // The sample comparison, with its sign-edge exemption, still catches an altered pose.
    let local = cpu_sample_from_gpu(&run);
    let mut altered = gpu.local.clone();
    let k = j % altered.len();
    altered[k].translation.x += 1e-3;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compare_sample(&run, &altered, &local)));
    assert!(caught.is_err(), "an altered local pose passed the sample comparison");
    // And a stale buffer (the model matrices instead of the palette) is caught too.
    assert!(compare("palette", &gpu.model, &palette, 1e-5, affine_error).is_err());
}

#[test]
fn gpu_matches_the_f64_reference_end_to_end() {
    let (device, queue) = device();
    let (lib, clips) = random_library(21);
    let mut r = rng(99);
    let requests: Vec<(ClipId, f32)> = (0..200)
        .map(|_| {
            let c = r.gen_range(0..clips.len());
            (lib.clip_at(c as u32).unwrap(), r.gen_range(0.0..clips[c].duration))
        })
        .collect();
    let poses = wgpu_anim::testing::evaluate_poses(&device, &queue, &lib, &requests).unwrap();
    let mut worst = 0.0f64;
    for ((clip, t), pose) in requests.iter().zip(&poses) {
        let skel = &lib.skeletons()[lib.clips()[clip.index() as usize].skeleton as usize];
        let local = wgpu_anim::reference::sample(skel, &clips[clip.index() as usize], f64::from(*t));
        let model = wgpu_anim::reference::local_to_model(skel, &local);
        let pal = wgpu_anim::reference::palette(skel, &model);
        for (j, (g, w)) in pose.palette.iter().zip(&pal).enumerate() {
            let e = wgpu_anim::math::mat4_max_abs_diff(&g.to_mat4(), &w.as_mat4()) as f64;
            assert!(e < 1e-3, "clip {} at {t}: joint {j} off by {e}", clip.index());
            worst = worst.max(e);
        }
    }
    eprintln!("GPU vs f64 reference, 200 random poses: worst palette element error {worst:e}");
}

#[test]
fn more_instances_than_one_dispatch_dimension_holds() {
    // 70,000 single-joint instances: the per-instance-workgroup passes need a 2D dispatch.
    let run = run_frames_with(70_000, 5, &[0.1], Some(3));
    let lib = run.animator.controller().library();
    let insts = run.animator.controller().instances();
    let (clocks, gpu) = run.animator.read_back(&run.device, &run.queue).unwrap();
    let mut palette = vec![wgpu_anim::Affine::IDENTITY; gpu.palette.len()];
    let _ = clocks;
    let local = cpu_sample_from_gpu(&run);
    compare_sample(&run, &gpu.local, &local);
    cpu_palette(lib, &run.frame, insts, &gpu.model, &mut palette);
    compare("palette", &gpu.palette, &palette, 1e-5, affine_error).unwrap();
}

#[test]
fn skeletons_beyond_a_thousand_joints_run_on_the_gpu() {
    // 1,500 joints in a binary tree (11 levels, like a skeleton with many fingers, props and
    // face joints): the staged path has no joint cap below the library's 4,096.
    let (device, queue) = device();
    let mut r = rng(13);
    let joints = (0..1500usize)
        .map(|i| {
            let rest = wgpu_anim::Transform::new(
                glam::Vec3::new(r.gen_range(-0.2..0.2), r.gen_range(0.05..0.3), r.gen_range(-0.2..0.2)),
                common::random_quat(&mut r),
                glam::Vec3::ONE,
            );
            (format!("j{i}"), i.checked_sub(1).map(|p| p / 2), rest)
        })
        .collect();
    let skel = wgpu_anim::Skeleton::from_rest_pose("big", joints).unwrap();
    let mut b = wgpu_anim::LibraryBuilder::new();
    let id = b.add_skeleton(skel.clone());
    let clips: Vec<wgpu_anim::Clip> = (0..3)
        .map(|c| common::random_clip(&mut r, &skel, &format!("c{c}")))
        .collect();
    for c in &clips {
        b.add_clip(id, c).unwrap();
    }
    let lib = b.build();
    let requests: Vec<(ClipId, f32)> = (0..3)
        .map(|c| (lib.clip_at(c).unwrap(), 0.37 * (c + 1) as f32))
        .collect();
    let poses = wgpu_anim::testing::evaluate_poses(&device, &queue, &lib, &requests).unwrap();
    let depths = skel.depths();
    assert_eq!(*depths.iter().max().unwrap(), 10);
    for ((clip, t), pose) in requests.iter().zip(&poses) {
        let cpu = cpu::pose_at(&lib, *clip, *t).unwrap();
        compare("sample", &pose.local, &cpu.local, 2e-5, pose_error).unwrap();
        // End to end, each level of the hierarchy adds about one stage's rounding (1e-5).
        for (j, (g, w)) in pose.palette.iter().zip(&cpu.palette).enumerate() {
            let tolerance = 1e-5 * (depths[j] + 2) as f32;
            assert!(
                affine_error(g, w) <= tolerance,
                "clip {} joint {j}: {:e} > {tolerance:e}",
                clip.index(),
                affine_error(g, w)
            );
        }
        let t = f64::from(t.min(lib.clips()[clip.index() as usize].duration));
        let reference = wgpu_anim::reference::palette(
            &skel,
            &wgpu_anim::reference::local_to_model(
                &skel,
                &wgpu_anim::reference::sample(&skel, &clips[clip.index() as usize], t),
            ),
        );
        let worst = pose
            .palette
            .iter()
            .zip(&reference)
            .map(|(g, w)| wgpu_anim::math::mat4_max_abs_diff(&g.to_mat4(), &w.as_mat4()))
            .fold(0.0, f32::max);
        assert!(worst < 1e-3, "clip {}: {worst} from the f64 reference", clip.index());
    }
}

#[test]
fn trees_of_sixteen_weighted_leaves_match_the_cpu_mirror() {
    // A direct blend of 16 children and a bilinear space of four bilinear spaces, with every
    // parameter inside the spaces and positive: all 16 leaves are weighted, the most a blend list
    // holds. The GPU's clocks and blend lists equal the mirror's; its poses and palettes agree
    // within the stage tolerances.
    let (device, queue) = device();
    let (lib, _) = random_library(41);
    let n = 600;
    let mut animator = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(n)).unwrap();
    let mut r = rng(42);
    let mut expected_total = Vec::new();
    for i in 0..n {
        let skeleton = i % 3;
        let which = [common::DIRECT_16, common::BILINEAR_OF_BILINEARS][r.gen_range(0..2)];
        let tree = lib
            .blend()
            .tree_at(skeleton * common::TREES_PER_SKELETON + which)
            .unwrap();
        let params = [
            r.gen_range(0.1..2.0),
            r.gen_range(0.1..2.0),
            r.gen_range(0.05..0.95),
            r.gen_range(0.05..0.95),
        ];
        // A direct blend does not normalize: its leaves' weights sum to 4 × the parameters' sum.
        expected_total.push(if which == common::DIRECT_16 {
            4.0 * params.iter().sum::<f32>()
        } else {
            1.0
        });
        let desc = InstanceDesc::tree(tree, params).with_time(r.gen_range(0.0..1.0));
        animator.controller_mut().add_instance(&desc).unwrap();
    }
    let step = |animator: &mut Animator, dt: f32| {
        animator.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    };
    step(&mut animator, 0.0);
    let (before, _) = animator.read_back(&device, &queue).unwrap();
    let dt = 0.1;
    step(&mut animator, dt);
    let frame = GpuFrame {
        dt,
        instance_count: n,
        snapshot_offset: animator.max_joints(),
        ..Default::default()
    };

    // clock: from the GPU's clocks before the frame.
    let gpu_lists = animator.read_blend_lists(&device, &queue).unwrap();
    let (after, gpu) = animator.read_back(&device, &queue).unwrap();
    let mut clocks = before;
    let mut lists = vec![BlendList::default(); n as usize];
    let mut insts = animator.controller().instances().to_vec();
    let mut page = PageBuffers::new(&frame, &mut insts)
        .layer_defs(animator.controller().layer_defs())
        .clocks(&mut clocks)
        .blend_lists(&mut lists);
    cpu::clock(animator.controller().library(), &mut page).unwrap();
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * (1.0 + b.abs());
    for (i, (g, w)) in gpu_lists.iter().zip(&lists).enumerate() {
        assert_eq!(g.count, wgpu_anim::layout::MAX_BLEND_CLIPS, "instance {i}: GPU list");
        assert_eq!(w.count, g.count, "instance {i}: CPU list");
        assert_eq!(after[i], clocks[i], "instance {i}: clock");
        for k in 0..g.count as usize {
            let (a, b) = (g.samples[k], w.samples[k]);
            assert!(
                a.clip == b.clip && close(a.weight, b.weight) && close(a.time, b.time),
                "instance {i} sample {k}: {a:?} vs {b:?}"
            );
        }
        let total: f32 = g.samples[..g.count as usize].iter().map(|s| s.weight).sum();
        assert!(
            (total - expected_total[i]).abs() <= 1e-5 * expected_total[i],
            "instance {i}: leaf weights sum to {total}, expected {}",
            expected_total[i]
        );
    }

    // sample, local_to_model and palette: each mirror fed the GPU's input.
    let run = Run {
        device: device.clone(),
        queue: queue.clone(),
        animator,
        frame,
    };
    let local = cpu_sample_from_gpu(&run);
    compare_sample(&run, &gpu.local, &local);
    let (lib, insts) = (
        run.animator.controller().library(),
        run.animator.controller().instances(),
    );
    let mut model = vec![wgpu_anim::Affine::IDENTITY; gpu.model.len()];
    let mut regions = gpu_local_regions(&run);
    let mut insts_rw = insts.to_vec();
    let mut page = PageBuffers::new(&run.frame, &mut insts_rw)
        .local_poses(&mut regions)
        .model_poses(&mut model);
    cpu::local_to_model(lib, &mut page).unwrap();
    compare("local_to_model", &gpu.model, &model, 1e-5, affine_error).unwrap();
    let mut palette = vec![wgpu_anim::Affine::IDENTITY; gpu.palette.len()];
    cpu_palette(lib, &run.frame, insts, &gpu.model, &mut palette);
    compare("palette", &gpu.palette, &palette, 1e-5, affine_error).unwrap();
}

#[test]
fn a_crowd_in_several_pages_matches_the_cpu_mirror_page_by_page() {
    // 2,000 instances in pages of 700: three pages, each with its own buffers, four dispatches
    // each per frame. Every stage's mirror, fed each page's own input buffers, matches; the fused
    // path gives the same palettes; the pages' palettes are not mixed up.
    let (device, queue) = device();
    let (lib, _) = common::random_library_of(51, &[1, 37]);
    let desc = AnimatorDesc::default()
        .with_max_instances(2000)
        .with_page_instances(Some(700));
    let mut staged = Animator::new(&device, &lib, &desc).unwrap();
    let mut fused = Animator::with_library(&device, staged.gpu_library().clone(), &desc).unwrap();
    assert_eq!(staged.controller().page_count(), 3);
    let mut r = rng(52);
    for _ in 0..2000 {
        let skeleton = r.gen_range(0..2);
        let desc = {
            // The fields drawn before the state, as they were.
            let time = r.gen_range(0.0..2.0);
            random_state(&mut r, &lib, skeleton).with_time(time)
        };
        staged.controller_mut().add_instance(&desc).unwrap();
        fused.controller_mut().add_instance(&desc).unwrap();
    }
    assert_eq!(
        (staged.controller().page_range(1), staged.controller().page_of(1400)),
        (700..1400, Some((2, 0)))
    );
    fused.set_fused(true).unwrap();
    assert_eq!((staged.dispatches_per_frame(), fused.dispatches_per_frame()), (12, 6));
    for dt in [0.0, 0.1] {
        for a in [&mut staged, &mut fused] {
            a.prepare(&queue, dt);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode(&mut encoder).unwrap();
            queue.submit([encoder.finish()]);
        }
    }
    for page in 0..3 {
        let insts = staged.controller().page_instances(page);
        let frame = GpuFrame {
            dt: 0.1,
            instance_count: insts.len() as u32,
            snapshot_offset: staged.controller().page_max_joints(page),
            ..Default::default()
        };
        let (_, gpu) = staged.read_back_page(&device, &queue, page).unwrap();
        let mut lists = staged.read_blend_lists_page(&device, &queue, page).unwrap();
        let max = frame.snapshot_offset as usize;
        let mut local = vec![LocalPose::default(); 2 * max];
        let mut history = vec![LocalPose::default(); 2 * max];
        let mut insts_rw = insts.to_vec();
        let mut buffers = PageBuffers::new(&frame, &mut insts_rw)
            .blend_lists(&mut lists)
            .local_poses(&mut local)
            .pose_history(&mut history);
        cpu::sample(&lib, &mut buffers).unwrap();
        compare("sample", &gpu.local, &local[..gpu.local.len()], 2e-5, pose_error)
            .unwrap_or_else(|e| panic!("page {page}: {e}"));
        let mut model = vec![wgpu_anim::Affine::IDENTITY; gpu.model.len()];
        // The current poses and the mesh-space deltas.
        let mut gpu_local = vec![LocalPose::default(); 2 * max];
        for (k, region) in [0, 2].into_iter().enumerate() {
            let r = staged.read_local_region_page(&device, &queue, page, region).unwrap();
            gpu_local[k * max..k * max + r.len()].copy_from_slice(&r);
        }
        let mut buffers = PageBuffers::new(&frame, &mut insts_rw)
            .local_poses(&mut gpu_local)
            .model_poses(&mut model);
        cpu::local_to_model(&lib, &mut buffers).unwrap();
        compare("local_to_model", &gpu.model, &model, 1e-5, affine_error)
            .unwrap_or_else(|e| panic!("page {page}: {e}"));
        let mut palette = vec![wgpu_anim::Affine::IDENTITY; gpu.palette.len()];
        cpu_palette(&lib, &frame, insts, &gpu.model, &mut palette);
        compare("palette", &gpu.palette, &palette, 1e-5, affine_error).unwrap_or_else(|e| panic!("page {page}: {e}"));
        let (_, f) = fused.read_back_page(&device, &queue, page).unwrap();
        compare("fused palette", &f.palette, &gpu.palette, 1e-5, affine_error)
            .unwrap_or_else(|e| panic!("page {page}: {e}"));
    }
    // Pages hold different instances: page 1's palettes are not page 0's.
    let (_, p0) = staged.read_back_page(&device, &queue, 0).unwrap();
    let (_, p1) = staged.read_back_page(&device, &queue, 1).unwrap();
    let n = p0.palette.len().min(p1.palette.len());
    assert!(compare("pages", &p0.palette[..n], &p1.palette[..n], 1e-5, affine_error).is_err());

    // Each page keeps its own snapshots (the last page holds fewer instances, so its joint
    // capacity differs): cross-fades interrupted on every instance keep each page's current pose
    // as its snapshot.
    for round in 0..2 {
        for i in 0..2000 {
            let inst = *staged.controller().instance(i).unwrap();
            let desc = random_state(&mut r, &lib, inst.skeleton);
            staged
                .controller_mut()
                .play(i, &desc, Some(Transition::linear(0.5)))
                .unwrap();
        }
        staged.prepare(&queue, if round == 0 { 0.05 } else { 0.0 });
        let mut encoder = device.create_command_encoder(&Default::default());
        staged.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    }
    assert_ne!(
        staged.controller().page_max_joints(2),
        staged.controller().page_max_joints(0)
    );
    for page in 0..3 {
        let kept: Vec<_> = staged
            .controller()
            .page_instances(page)
            .iter()
            .filter(|i| i.flags & wgpu_anim::layout::KEEP_POSE != 0)
            .copied()
            .collect();
        assert!(
            kept.len() > 500,
            "page {page}: {} instances keep their pose",
            kept.len()
        );
        let current = staged.read_local_region_page(&device, &queue, page, 0).unwrap();
        let snapshots = staged.read_local_region_page(&device, &queue, page, 1).unwrap();
        for inst in kept {
            let joints = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
            assert!(
                snapshots[joints.clone()] == current[joints.clone()],
                "page {page}: joints {joints:?} keep their pose, but their snapshot is not it"
            );
        }
    }
}

#[test]
fn an_edit_uploads_only_the_instances_it_changed() {
    let (device, queue) = device();
    let (lib, _) = random_library(61);
    let mut a = Animator::new(
        &device,
        &lib,
        &AnimatorDesc::default()
            .with_max_instances(10_000)
            .with_max_joints(Some(10_000)),
    )
    .unwrap();
    for _ in 0..10_000 {
        a.controller_mut()
            .add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap()))
            .unwrap();
    }
    a.prepare(&queue, 0.0);
    let frame = size_of::<GpuFrame>() as u64;
    a.prepare(&queue, 0.1);
    assert_eq!(
        a.uploaded_bytes(),
        frame,
        "an ordinary frame uploads the frame uniform only"
    );
    let controller = a.controller_mut();
    controller.set_rate(3, 2.0).unwrap();
    controller.set_rate(9_000, 2.0).unwrap();
    controller.set_rate(9_001, 2.0).unwrap();
    a.prepare(&queue, 0.1);
    let instance = size_of::<wgpu_anim::layout::GpuInstance>() as u64;
    assert_eq!(
        a.uploaded_bytes(),
        frame + 3 * instance,
        "two runs: instance 3, instances 9,000-9,001"
    );
}

/// Clocks in integer ticks agree bit for bit with the mirror under rates and frame lengths far
/// from the usual — many loops in a frame, backwards, tiny and huge `dt`s, subnormal rates, long
/// clips and trees — frame after frame, each frame starting from the GPU's own clocks.
#[test]
fn clocks_match_the_mirror_bit_for_bit_at_extremes() {
    let (device, queue) = device();
    let (lib, _) = random_library(31);
    let n = 600;
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(n)).unwrap();
    let rates = [1.0, -1.0, 1e-40, 3.7e4, -2.9e5, 1e30, 0.999_999_9, -1.5];
    let mut r = rng(32);
    for i in 0..n as usize {
        let loop_mode = match i % 3 {
            0 => LoopMode::Once,
            1 => LoopMode::Repeat(r.gen_range(1..1000)),
            _ => LoopMode::Forever,
        };
        let state = random_state(&mut r, &lib, lib.clips()[i % lib.clips().len()].skeleton);
        let desc = state
            .with_rate(rates[i % rates.len()])
            .with_time(r.gen_range(-50.0..50.0))
            .with_loop_mode(loop_mode);
        a.controller_mut().add_instance(&desc).unwrap();
    }
    let mut frame = GpuFrame {
        dt: 0.0,
        instance_count: n,
        snapshot_offset: a.max_joints(),
        ..Default::default()
    };
    let mut loops_seen = 0;
    // A first frame uploads the starting clocks; the comparison starts from what it left.
    a.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
    for (f, dt) in [1.0 / 60.0, 1e3, -0.37, 1e-30, 3.7, 1.0 / 144.0]
        .into_iter()
        .enumerate()
    {
        let (before, _) = a.read_back(&device, &queue).unwrap();
        if f == 0 || f == 4 {
            // States started in the compared frame, most outside the loops they play: a
            // reverse clip past its end steps from its end, a forward one before 0 from 0.
            for i in (f..n as usize).step_by(3) {
                let skeleton = a.controller().instance(i).unwrap().skeleton;
                let desc = {
                    let (rate, time, loop_mode) = (
                        rates[(i + f) % rates.len()],
                        r.gen_range(-50.0..50.0),
                        [LoopMode::Once, LoopMode::Repeat(r.gen_range(1..5))][i % 2],
                    );
                    random_state(&mut r, a.controller().library(), skeleton)
                        .with_rate(rate)
                        .with_time(time)
                        .with_loop_mode(loop_mode)
                };
                a.controller_mut().play(i, &desc, None).unwrap();
            }
        }
        a.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let (after, _) = a.read_back(&device, &queue).unwrap();
        let mut expected = before.clone();
        let mut lists = vec![BlendList::default(); n as usize];
        frame.dt = dt;
        let mut insts = a.controller().instances().to_vec();
        let mut page = PageBuffers::new(&frame, &mut insts)
            .layer_defs(a.controller().layer_defs())
            .clocks(&mut expected)
            .blend_lists(&mut lists);
        cpu::clock(a.controller().library(), &mut page).unwrap();
        for (i, (g, w)) in after.iter().zip(&expected).enumerate() {
            assert_clock(&a, dt, i, g, w);
        }
        loops_seen += after.iter().zip(&before).filter(|(x, y)| x.loops != y.loops).count();
    }
    assert!(loops_seen > 500, "only {loops_seen} clocks crossed a loop");
}
