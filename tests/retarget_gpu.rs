//! Run-time retargeting on the GPU (the retargeting reference's step 2): characters of other
//! proportions play the mannequin's clips through the sample stage's per-joint constants, with no
//! baked copy. The GPU against its CPU mirror (staged, fused and culled; compressed clips, root
//! motion and cross-fades), both against the offline retarget (`Retargeter::target_pose`, f64)
//! at the clips' keys, a real take (CMU) onto the mannequin, and the refusals.
//!
//! Tolerances: rotations within 1e-5 rad of the offline result and translations within 1e-5 of
//! `1 + |t|` (f32 sampling and two products against f64); the mirror as `tests/gpu_stages.rs`
//! (2e-5 on local poses, 1e-5 on palettes).

mod common;

use common::{affine_error, compare, device, key_times, mannequin_variant, pose_error, quat_angle as angle, rng};
use glam::{DQuat, DVec3, Mat4, Vec3};
use rand::Rng;
use std::path::Path;
use wgpu_anim::cpu::{self, EventLog, PageBuffers};
use wgpu_anim::gpu::{Layer, LayerMode, Transition};
use wgpu_anim::layout::{GpuFrame, LocalPose};
use wgpu_anim::machine::{
    Condition, MachineId, Motion, Parameter, State, StateMachine, Transition as MachineTransition, Value,
};
use wgpu_anim::mannequin;
use wgpu_anim::offline::compress::ClipFormat;
use wgpu_anim::offline::gltf_import;
use wgpu_anim::offline::retarget::{BoneMap, RetargetOptions, Retargeter};
use wgpu_anim::reference::ClipSampler;
use wgpu_anim::{
    AnimationLibrary, Animator, AnimatorDesc, Clip, ClipId, InstanceDesc, LibraryBuilder, LoopMode, Skeleton,
    SkeletonId,
};

/// A library of `source` and its raw `clips`, and `targets` retargeted from it by the humanoid
/// profile: the library, its clips, the targets' ids and their offline retargeters.
fn library(
    source: &Skeleton,
    clips: &[Clip],
    targets: &[Skeleton],
) -> (AnimationLibrary, Vec<ClipId>, Vec<(SkeletonId, Retargeter)>) {
    let targets: Vec<_> = targets
        .iter()
        .map(|t| (t.clone(), RetargetOptions::default()))
        .collect();
    library_with(source, clips, &targets)
}

/// As [`library`], each target with its options.
fn library_with(
    source: &Skeleton,
    clips: &[Clip],
    targets: &[(Skeleton, RetargetOptions)],
) -> (AnimationLibrary, Vec<ClipId>, Vec<(SkeletonId, Retargeter)>) {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(source.clone());
    let ids = clips.iter().map(|c| b.add_clip(s, c).unwrap()).collect();
    let targets = targets
        .iter()
        .map(|(t, options)| {
            let map = BoneMap::humanoid(source, t).unwrap();
            let offline = Retargeter::new(source, t, &map, options).unwrap();
            (b.add_retargeted_skeleton(t.clone(), s, &map, options).unwrap(), offline)
        })
        .collect();
    (b.build(), ids, targets)
}

/// Local poses of one frame of characters each holding `(clip, skeleton, time)`, read back from
/// the staged sample stage, with the CPU mirror's run on the GPU's own blend lists.
fn frame_poses(
    lib: &AnimationLibrary,
    requests: &[(ClipId, Option<SkeletonId>, f32)],
) -> (Vec<Vec<LocalPose>>, Vec<Vec<LocalPose>>) {
    let (device, queue) = device();
    let desc = AnimatorDesc::default().with_max_instances(requests.len() as u32);
    let mut a = Animator::new(&device, lib, &desc).unwrap();
    for &(clip, skeleton, time) in requests {
        let desc = InstanceDesc::new(clip)
            .with_time(time)
            .with_rate(0.0)
            .with_loop_mode(LoopMode::Once)
            .with_skeleton(skeleton);
        a.controller_mut().add_instance(&desc).unwrap();
    }
    a.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
    assert_eq!(a.controller().page_count(), 1);
    let (_, gpu) = a.read_back_page(&device, &queue, 0).unwrap();
    let mirror = mirror_sample(&device, &queue, &a, lib);
    let split = |all: &[LocalPose]| {
        a.controller()
            .page_instances(0)
            .iter()
            .map(|i| all[i.joint_offset as usize..(i.joint_offset + i.joint_count) as usize].to_vec())
            .collect()
    };
    (split(&gpu.local), split(&mirror))
}

/// The sample stage's mirror on page 0's instances and blend lists as the GPU left them.
fn mirror_sample(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator, lib: &AnimationLibrary) -> Vec<LocalPose> {
    let insts = a.controller().page_instances(0);
    let frame = GpuFrame {
        instance_count: insts.len() as u32,
        snapshot_offset: a.controller().page_max_joints(0),
        ..Default::default()
    };
    let mut lists = a.read_blend_lists_page(device, queue, 0).unwrap();
    let max = frame.snapshot_offset as usize;
    let mut local = vec![LocalPose::default(); 2 * max];
    let mut history = vec![LocalPose::default(); 2 * max];
    let mut insts_rw = insts.to_vec();
    let mut buffers = PageBuffers::new(&frame, &mut insts_rw)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history);
    cpu::sample(lib, &mut buffers).unwrap();
    local.truncate(max);
    local
}

/// The largest rotation (rad) and translation (relative to `1 + |t|`) errors of `got` against
/// the offline retarget's pose of `exact`.
fn offline_error(got: &[LocalPose], exact: &[wgpu_anim::reference::TransformF64]) -> (f64, f64) {
    assert_eq!(got.len(), exact.len());
    let mut worst = (0.0f64, 0.0f64);
    for (g, e) in got.iter().zip(exact) {
        let q = DQuat::from_vec4(g.rotation.as_dvec4());
        let t: DVec3 = g.translation.truncate().as_dvec3();
        worst.0 = worst.0.max(angle(q, e.rotation));
        worst.1 = worst
            .1
            .max((t - e.translation).length() / (1.0 + e.translation.length()));
    }
    worst
}

#[test]
fn gpu_mirror_and_offline_retarget_agree_at_the_keys() {
    // Two characters of other proportions (legs 1.35 and 0.8, Mixamo names, one with a T-pose
    // rest) and the mannequin itself, each at the walk's and the run's keys.
    let m = mannequin::skeleton();
    let clips: Vec<Clip> = mannequin::clips(&m);
    let targets = [mannequin_variant(1.35, 0.6), mannequin_variant(0.8, 0.0)];
    let (lib, ids, retargets) = library(&m, &clips, &targets);
    let mut requests = Vec::new();
    let mut expected = Vec::new();
    for name in ["walk", "run"] {
        let k = clips.iter().position(|c| c.name == name).unwrap();
        let sampler = ClipSampler::new(&m, &clips[k]);
        for time in key_times(&clips[k]).into_iter().step_by(3) {
            let source = sampler.sample(f64::from(time));
            for (target, offline) in &retargets {
                requests.push((ids[k], Some(*target), time));
                expected.push(offline.target_pose(&source));
            }
        }
    }
    let (gpu, mirror) = frame_poses(&lib, &requests);
    let mut worst = [(0.0f64, 0.0f64); 2];
    for ((g, c), e) in gpu.iter().zip(&mirror).zip(&expected) {
        compare("sample", g, c, 2e-5, pose_error).unwrap();
        for (w, pose) in worst.iter_mut().zip([g, c]) {
            let (r, t) = offline_error(pose, e);
            *w = (w.0.max(r), w.1.max(t));
        }
    }
    for (what, (r, t)) in ["GPU", "mirror"].iter().zip(worst) {
        assert!(
            r <= 1e-5 && t <= 1e-5,
            "{what} against offline: {r:e} rad, {t:e} translation"
        );
    }
    // The comparison sees a wrong table: the long-legged character's poses against the short
    // one's offline retarget.
    let (r, t) = offline_error(&gpu[0], &expected[1]);
    assert!(r > 1e-3 || t > 1e-3, "a wrong target passes: {r:e} rad, {t:e}");
}

#[test]
fn a_motion_capture_take_plays_on_the_mannequin_at_run_time() {
    // The CMU take onto the mannequin: the take's hips, spine and legs pass through joints the
    // mannequin lacks (LHipJoint, LowerBack, Neck1), so chains of several source joints.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/cmu/cmu_01_03.glb");
    let imported = gltf_import::load(&path).expect("the CMU take imports");
    let s = imported.skeletons.into_iter().next().expect("one skeleton");
    let clip = s.clips.into_iter().next().expect("one clip").clip;
    let source = s.skeleton;
    let m = mannequin::skeleton();
    let (lib, ids, retargets) = library(&source, std::slice::from_ref(&clip), &[m]);
    let times = key_times(&clip);
    let picked: Vec<f32> = times.iter().step_by(times.len() / 12).copied().collect();
    assert_agrees_at(&lib, &source, &clip, ids[0], &retargets[0], &picked);
}

#[test]
fn a_second_real_humanoid_plays_the_walk_on_the_gpu() {
    // The Animated Knight (assets/knight: a game control rig, stood in its bind pose's
    // rotations) at the mannequin's walk keys: GPU, mirror and offline agree.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/knight/knight.glb");
    let imported = gltf_import::load(&path).expect("the knight imports");
    let knight = imported.skeletons.into_iter().next().expect("one skeleton");
    let options = RetargetOptions::default()
        .with_target_skinned(knight.skin_joints.clone())
        .with_target_bind_rest();
    let m = mannequin::skeleton();
    let walk: Vec<Clip> = mannequin::clips(&m).into_iter().filter(|c| c.name == "walk").collect();
    let (lib, ids, retargets) = library_with(&m, &walk, &[(knight.skeleton, options)]);
    assert_agrees_at(&lib, &m, &walk[0], ids[0], &retargets[0], &key_times(&walk[0]));
}

/// Characters of a retargeted skeleton holding clip `id` (`clip`, of `source`) at `times`: the
/// GPU against the mirror, both against the offline retarget.
fn assert_agrees_at(
    lib: &AnimationLibrary,
    source: &Skeleton,
    clip: &Clip,
    id: ClipId,
    (target, offline): &(SkeletonId, Retargeter),
    times: &[f32],
) {
    let sampler = ClipSampler::new(source, clip);
    let requests: Vec<_> = times.iter().map(|&t| (id, Some(*target), t)).collect();
    let (gpu, mirror) = frame_poses(lib, &requests);
    for ((g, c), &time) in gpu.iter().zip(&mirror).zip(times) {
        compare("sample", g, c, 2e-5, pose_error).unwrap();
        let exact = offline.target_pose(&sampler.sample(f64::from(time)));
        for (what, pose) in [("GPU", g), ("mirror", c)] {
            let (r, t) = offline_error(pose, &exact);
            assert!(r <= 1e-5 && t <= 1e-5, "{what} at {time}: {r:e} rad, {t:e} translation");
        }
    }
}

/// The crowd's library (compressed gaits with root motion, breathing, the locomotion tree), a
/// state machine of the mannequin (idle, then walk once `moving`), and two characters of other
/// proportions retargeted from the mannequin.
fn crowd() -> (AnimationLibrary, MachineId, Vec<SkeletonId>, Vec<ClipId>, Vec<f64>) {
    let m = mannequin::skeleton();
    let (mut b, s, clips) = mannequin::crowd_library_builder_in(m.clone(), ClipFormat::Compressed);
    let machine = StateMachine {
        name: "go".into(),
        parameters: vec![Parameter::bool("moving", false)],
        states: vec![
            State::new("idle", Motion::clip("idle")),
            State::new("walk", Motion::clip("walk")),
        ],
        entry: "idle".into(),
        transitions: vec![MachineTransition::new("idle", "walk").when(Condition::is_true("moving"))],
    };
    let machine = b.add_state_machine(s, &machine).unwrap();
    let mut targets = Vec::new();
    let mut ratios = Vec::new();
    for t in [mannequin_variant(1.35, 0.6), mannequin_variant(0.8, 0.0)] {
        let map = BoneMap::humanoid(&m, &t).unwrap();
        let options = RetargetOptions::default();
        ratios.push(Retargeter::new(&m, &t, &map, &options).unwrap().height_ratio());
        targets.push(b.add_retargeted_skeleton(t, s, &map, &options).unwrap());
    }
    (b.build(), machine, targets, clips, ratios)
}

#[test]
fn one_crowd_mixes_proportions_staged_fused_and_culled() {
    // 90 characters, a third each the mannequin and the two others, on random gaits or the
    // locomotion blend space, times and rates, most with root motion, then cross-fades: the staged sample stage against its mirror,
    // the fused and the culled paths' palettes against the staged ones.
    let (device, queue) = device();
    let (lib, machine, targets, clips, ratios) = crowd();
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION).unwrap();
    let count = 90;
    let desc = AnimatorDesc::default().with_max_instances(count);
    let mut staged = Animator::new(&device, &lib, &desc).unwrap();
    let mut fused = Animator::with_library(&device, staged.gpu_library().clone(), &desc).unwrap();
    let mut culled = Animator::with_library(&device, staged.gpu_library().clone(), &desc.with_culling(true)).unwrap();
    fused.set_fused(true).unwrap();
    let mut r = rng(7);
    for i in 0..count as usize {
        let skeleton = [None, Some(targets[0]), Some(targets[1])][i % 3];
        let state = if i % 6 < 3 {
            InstanceDesc::new(clips[r.gen_range(0..clips.len())])
        } else {
            // The locomotion blend space, at a random velocity.
            let v = [r.gen_range(-2.0..2.0), r.gen_range(-2.0..3.0), 0.0, 0.0];
            InstanceDesc::tree(tree, v)
        };
        let desc = state
            .with_time(r.gen_range(0.0..1.0))
            .with_rate(r.gen_range(0.5..1.5))
            .with_world(Mat4::from_translation(Vec3::new(i as f32, 0.0, 0.0)))
            .with_skeleton(skeleton);
        for a in [&mut staged, &mut fused, &mut culled] {
            a.controller_mut().add_instance(&desc).unwrap();
            a.controller_mut().set_root_motion(i, i % 5 != 0).unwrap();
        }
    }
    culled.controller_mut().set_update_rate(4, Some(2)).unwrap();
    // A few follow the mannequin's state machine, retargeted ones among them.
    for i in [10, 11, 12] {
        for a in [&mut staged, &mut fused, &mut culled] {
            a.controller_mut().set_machine(i, Some(machine)).unwrap();
        }
    }
    let run = |animators: &mut [&mut Animator], dt: f32| {
        for a in animators.iter_mut() {
            a.prepare(&queue, dt);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode(&mut encoder).unwrap();
            queue.submit([encoder.finish()]);
        }
    };
    run(&mut [&mut staged, &mut fused, &mut culled], 0.0);
    run(&mut [&mut staged, &mut fused, &mut culled], 0.1);
    for i in [10, 11, 12] {
        for a in [&mut staged, &mut fused, &mut culled] {
            a.controller_mut()
                .set_parameter(i, "moving", Value::Bool(true))
                .unwrap();
        }
    }
    for i in (0..count as usize).step_by(4).filter(|i| !(10..=12).contains(i)) {
        // `None`: a retargeted character keeps its skeleton.
        let desc = InstanceDesc::new(clips[r.gen_range(0..clips.len())]);
        for a in [&mut staged, &mut fused, &mut culled] {
            a.controller_mut()
                .play(i, &desc, Some(Transition::linear(0.4)))
                .unwrap();
        }
    }
    for dt in [0.05, 0.1] {
        run(&mut [&mut staged, &mut fused, &mut culled], dt);
    }
    let (_, gpu) = staged.read_back_page(&device, &queue, 0).unwrap();
    let mirror = mirror_sample(&device, &queue, &staged, &lib);
    let worst = compare("sample", &gpu.local, &mirror[..gpu.local.len()], 2e-5, pose_error).unwrap();
    let (_, f) = fused.read_back_page(&device, &queue, 0).unwrap();
    compare("fused palette", &f.palette, &gpu.palette, 1e-5, affine_error).unwrap();
    let (_, c) = culled.read_back_page(&device, &queue, 0).unwrap();
    let insts = staged.controller().page_instances(0);
    for (i, inst) in insts.iter().enumerate() {
        if i == 4 {
            continue; // evaluated every second frame
        }
        let joints = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
        compare(
            "culled palette",
            &c.palette[joints.clone()],
            &gpu.palette[joints],
            1e-5,
            affine_error,
        )
        .unwrap_or_else(|e| panic!("character {i}: {e}"));
    }
    // Retargeted characters carry their own skeletons and joint counts.
    assert_eq!(insts[1].skeleton, targets[0].index());
    assert_eq!(insts[2].skeleton, targets[1].index());
    assert!(ratios[0] > 1.1, "ratios {ratios:?}");
    println!("sample against mirror: {worst:e}");
}

#[test]
fn root_motion_scales_by_the_height_ratio() {
    // The same gait from the same time on the mannequin and on each other character: each moves
    // h_T / h_S as far, and the clock stage's mirror moves each the same way frame by frame.
    let (device, queue) = device();
    let (lib, _, targets, clips, ratios) = crowd();
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(3)).unwrap();
    for skeleton in [None, Some(targets[0]), Some(targets[1])] {
        let i = a
            .controller_mut()
            .add_instance(&InstanceDesc::new(clips[1]).with_skeleton(skeleton))
            .unwrap();
        a.controller_mut().set_root_motion(i, true).unwrap();
    }
    for dt in [0.0, 0.1, 0.1, 0.1, 0.1] {
        a.prepare(&queue, dt);
        // The clock stage's mirror, from the same state, moves each root as the GPU does.
        let mut roots = a.read_outputs_page(&device, &queue, 0).unwrap();
        let (mut clocks, _) = a.read_back(&device, &queue).unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let gpu = a.read_outputs_page(&device, &queue, 0).unwrap();
        let frame = GpuFrame {
            dt,
            instance_count: 3,
            snapshot_offset: a.max_joints(),
            ..Default::default()
        };
        let mut instances = a.controller().instances().to_vec();
        let mut lists = vec![Default::default(); instances.len()];
        let mut log = EventLog::default();
        let mut page = PageBuffers::new(&frame, &mut instances)
            .layer_defs(a.controller().layer_defs())
            .clocks(&mut clocks)
            .blend_lists(&mut lists)
            .outputs(&mut roots)
            .events(&mut log);
        cpu::clock(&lib, &mut page).unwrap();
        for (i, (g, w)) in gpu.iter().zip(&roots).enumerate() {
            let scale = 1.0 + w.world.x.w.abs().max(w.world.y.w.abs()).max(w.world.z.w.abs());
            let e = g.world.max_abs_diff(&w.world) / scale;
            assert!(e < 2e-5, "character {i}: world off the mirror's by {e:e}");
        }
    }
    let outputs = a.read_outputs_page(&device, &queue, 0).unwrap();
    let moved = |i: usize| Vec3::new(outputs[i].world.x.w, outputs[i].world.y.w, outputs[i].world.z.w);
    let base = moved(0);
    assert!(base.length() > 0.1, "the gait moves: {base}");
    for (k, ratio) in ratios.iter().enumerate() {
        let want = base * *ratio as f32;
        let got = moved(k + 1);
        assert!(
            (got - want).length() <= 1e-4 * (1.0 + want.length()),
            "character {}: moved {got}, expected {want} (ratio {ratio})",
            k + 1
        );
    }
}

#[test]
fn what_a_retargeted_skeleton_cannot_do_is_refused() {
    let m = mannequin::skeleton();
    let clips = mannequin::clips(&m);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(m.clone());
    let walk = b.add_clip(s, &clips[0]).unwrap();
    let t = mannequin_variant(1.2, 0.0);
    let map = BoneMap::humanoid(&m, &t).unwrap();
    let long = b
        .add_retargeted_skeleton(t.clone(), s, &map, &RetargetOptions::default())
        .unwrap();
    // Clips of its own go to a skeleton added with add_skeleton.
    let e = b.add_clip(long, &clips[0]).unwrap_err().to_string();
    assert!(e.contains("through a retarget") && e.contains("mannequin"), "{e}");
    // No retarget of a retarget.
    let e = b
        .add_retargeted_skeleton(m.clone(), long, &BoneMap::by_name(&t, &m), &RetargetOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("retarget from that skeleton"), "{e}");
    // A skeleton the clip's skeleton is not retargeted onto.
    let other = b.add_skeleton(t);
    let lib = b.build();
    let (device, _) = device();
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_layers(true)).unwrap();
    let e = a
        .controller_mut()
        .add_instance(&InstanceDesc::new(walk).with_skeleton(Some(other)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("add_retargeted_skeleton"), "{e}");
    let i = a
        .controller_mut()
        .add_instance(&InstanceDesc::new(walk).with_skeleton(Some(long)))
        .unwrap();
    // Additive layers of the source's difference poses: refused; override layers play.
    let additive = Layer::clip(LayerMode::AdditiveLocal, walk);
    let e = a
        .controller_mut()
        .set_layer(i, 0, Some(&additive), true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("additive") && e.contains("retarget"), "{e}");
    a.controller_mut()
        .set_layer(i, 0, Some(&Layer::clip(LayerMode::Override, walk)), true)
        .unwrap();
    // `play` without a skeleton keeps the character's.
    a.controller_mut().play(i, &InstanceDesc::new(walk), None).unwrap();
    assert_eq!(a.controller().instances()[i].skeleton, long.index());
    assert_eq!(
        a.controller().instances()[i].joint_count as usize,
        lib.skeletons()[long.index() as usize].joint_count()
    );
}
