//! Pose blending and transitions: order independence, sign invariance, no pops, frozen and smooth
//! sources. (Blend-space weights have their own tests in `tests/blend_weights.rs`.)

mod common;

use glam::{Quat, Vec4Swizzles};
use rand::Rng;
use wgpu_anim::gpu::{Curve, Transition};
use wgpu_anim::layout::{BlendList, BlendSample, KEEP_POSE, LocalPose, source_kind};
use wgpu_anim::{
    AnimationLibrary, Animator, AnimatorDesc, ClipId, InstanceDesc, LibraryBuilder, SkeletonId, cpu, mannequin,
};

fn list(samples: &[(u32, f32, f32)]) -> BlendList {
    let mut l = BlendList {
        count: samples.len() as u32,
        ..Default::default()
    };
    for (k, &(clip, time, weight)) in samples.iter().enumerate() {
        l.samples[k] = BlendSample {
            clip,
            time,
            weight,
            layer: 0,
        };
    }
    l
}

fn same_pose(a: &LocalPose, b: &LocalPose) -> f32 {
    let t = (a.translation - b.translation).abs().max_element();
    let s = (a.scale - b.scale).abs().max_element();
    let q = 1.0 - a.rotation.dot(b.rotation).abs();
    t.max(s).max(q)
}

#[test]
fn n_way_blending_does_not_depend_on_input_order() {
    let (lib, skel, _) = mannequin::library();
    let skel = lib.gpu_skeletons()[skel.index() as usize];
    let mut r = common::rng(4);
    let mut worst = 0.0f32;
    for _ in 0..200 {
        let n = r.gen_range(2..=5);
        let samples: Vec<(u32, f32, f32)> = (0..n)
            .map(|_| (r.gen_range(0..6), r.gen_range(0.0..0.7), r.gen_range(0.05..1.0)))
            .collect();
        let mut shuffled = samples.clone();
        shuffled.rotate_left(r.gen_range(1..n));
        shuffled.swap(0, n - 1);
        for j in 0..skel.joint_count {
            let a = cpu::layered_joint(&lib, &list(&samples), &skel, j, 0, &[]).unwrap().0;
            let b = cpu::layered_joint(&lib, &list(&shuffled), &skel, j, 0, &[]).unwrap().0;
            worst = worst.max(same_pose(&a, &b));
        }
    }
    assert!(worst < 1e-5, "order changed the blend by {worst}");
}

#[test]
fn sign_flipped_keys_give_the_same_blend() {
    let m = mannequin::mannequin();
    let mut flipped = m.clips[1].clone();
    flipped.name = "walk_flipped".into();
    for t in &mut flipped.tracks {
        if let Some(rot) = &mut t.rotation {
            for q in &mut rot.values {
                *q = -*q;
            }
        }
    }
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(m.skeleton.clone());
    let walk = b.add_clip(s, &m.clips[1]).unwrap();
    let run = b.add_clip(s, &m.clips[2]).unwrap();
    let walk_flipped = b.add_clip(s, &flipped).unwrap();
    let lib = b.build();
    let skel = lib.gpu_skeletons()[0];
    for t in [0.0f32, 0.13, 0.5, 0.77] {
        for w in [0.2f32, 0.5, 0.8] {
            let a = list(&[(walk.index(), t, w), (run.index(), t * 0.7, 1.0 - w)]);
            let f = list(&[(walk_flipped.index(), t, w), (run.index(), t * 0.7, 1.0 - w)]);
            for j in 0..skel.joint_count {
                let (pa, pf) = (
                    cpu::layered_joint(&lib, &a, &skel, j, 0, &[]).unwrap().0,
                    cpu::layered_joint(&lib, &f, &skel, j, 0, &[]).unwrap().0,
                );
                assert!(same_pose(&pa, &pf) < 1e-5, "joint {j} at t {t}, weight {w}");
            }
        }
    }
}

#[test]
fn rest_pose_fills_a_near_zero_total_weight() {
    let (lib, skel_id, _) = mannequin::library();
    let skel = lib.gpu_skeletons()[skel_id.index() as usize];
    let rest = &lib.skeletons()[skel_id.index() as usize].rest_pose()[7];
    let p = cpu::layered_joint(&lib, &list(&[]), &skel, 7, 0, &[]).unwrap().0;
    assert!((p.translation.xyz() - rest.translation).abs().max_element() < 1e-6);
    assert!(Quat::from_vec4(p.rotation).angle_between(rest.rotation) < 1e-4);
    let tiny = cpu::layered_joint(&lib, &list(&[(1, 0.3, 1e-9)]), &skel, 7, 0, &[])
        .unwrap()
        .0;
    assert!(
        tiny.rotation.is_finite() && same_pose(&tiny, &p) < 1e-4,
        "a tiny weight leans on the rest pose"
    );
}

/// The built-in library, built once: the clip ids of the tests below are its own.
fn built_in() -> &'static (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    static LIBRARY: std::sync::OnceLock<(AnimationLibrary, SkeletonId, Vec<ClipId>)> = std::sync::OnceLock::new();
    LIBRARY.get_or_init(mannequin::library)
}

struct Sim {
    device: wgpu::Device,
    queue: wgpu::Queue,
    animator: Animator,
}

impl Sim {
    fn new(clip: ClipId) -> Self {
        let (device, queue) = common::device();
        let mut animator =
            Animator::new(&device, &built_in().0, &AnimatorDesc::default().with_max_instances(1)).unwrap();
        animator
            .controller_mut()
            .add_instance(&InstanceDesc::new(clip))
            .unwrap();
        Self {
            device,
            queue,
            animator,
        }
    }
    /// Runs one frame and returns every joint's model-space position.
    fn step(&mut self, dt: f32) -> Vec<glam::Vec3> {
        self.animator.prepare(&self.queue, dt);
        let mut e = self.device.create_command_encoder(&Default::default());
        self.animator.encode(&mut e).unwrap();
        self.queue.submit([e.finish()]);
        let (_, pose) = self.animator.read_back(&self.device, &self.queue).unwrap();
        pose.model
            .iter()
            .map(|m| m.transform_point3(glam::Vec3::ZERO))
            .collect()
    }
}

fn largest_move(a: &[glam::Vec3], b: &[glam::Vec3]) -> f32 {
    a.iter().zip(b).map(|(p, q)| p.distance(*q)).fold(0.0, f32::max)
}

/// The largest per-frame joint movement of a clip played alone at 60 frames per second.
fn clip_speed(clip: ClipId) -> f32 {
    let mut sim = Sim::new(clip);
    let mut last = sim.step(0.0);
    let mut most = 0.0f32;
    for _ in 0..90 {
        let now = sim.step(1.0 / 60.0);
        most = most.max(largest_move(&last, &now));
        last = now;
    }
    most
}

#[test]
fn transitions_and_interrupted_transitions_do_not_pop() {
    let clips = &built_in().2;
    let (idle, walk, run) = (clips[0], clips[1], clips[2]);
    let limit = clip_speed(walk).max(clip_speed(run)).max(clip_speed(idle));
    let mut sim = Sim::new(walk);
    let mut last = sim.step(0.0);
    let mut worst = 0.0f32;
    for frame in 0..120 {
        if frame == 20 {
            let t = Transition::linear(0.5).with_curve(Curve::Smooth);
            sim.animator
                .controller_mut()
                .play(0, &InstanceDesc::new(run), Some(t))
                .unwrap();
        }
        if frame == 35 {
            // Interrupts the walk → run cross-fade half-way: blends from the pose shown now.
            sim.animator
                .controller_mut()
                .play(0, &InstanceDesc::new(idle), Some(Transition::linear(0.4)))
                .unwrap();
        }
        let now = sim.step(1.0 / 60.0);
        worst = worst.max(largest_move(&last, &now));
        last = now;
    }
    eprintln!("largest joint move per frame: transitions {worst:.4}, clips alone {limit:.4}");
    assert!(
        worst <= limit * 1.05,
        "a transition moved a joint {worst} in one frame; the clips move at most {limit}"
    );
    // A cut, for contrast, does pop: the check above can fail.
    let mut sim = Sim::new(walk);
    sim.step(0.0);
    let before = sim.step(0.25);
    sim.animator
        .controller_mut()
        .play(0, &InstanceDesc::new(run).with_time(0.0), None)
        .unwrap();
    let after = sim.step(1.0 / 60.0);
    assert!(
        largest_move(&before, &after) > limit * 1.05,
        "a cut from walk to run should jump"
    );
}

#[test]
fn an_interrupting_cross_fade_starts_a_frame_later_from_the_pose_that_frame_kept() {
    let clips = &built_in().2;
    let (idle, walk, run) = (clips[0], clips[1], clips[2]);
    let mut sim = Sim::new(walk);
    sim.step(0.0);
    sim.animator
        .controller_mut()
        .play(0, &InstanceDesc::new(run), Some(Transition::linear(0.5)))
        .unwrap();
    sim.step(0.1);
    // Not running: the first cross-fade starts at once, from the walk clip.
    assert_eq!(
        sim.animator.controller().instance(0).unwrap().source_kind(),
        source_kind::CLIP
    );
    sim.animator
        .controller_mut()
        .play(0, &InstanceDesc::new(idle), Some(Transition::linear(0.4)))
        .unwrap();
    // Interrupting: the running cross-fade stays one more frame and keeps its pose; the rate set
    // meanwhile goes to the new state.
    sim.animator.controller_mut().set_rate(0, 0.5).unwrap();
    let held = *sim.animator.controller().instance(0).unwrap();
    assert_eq!(
        (held.clip, held.flags & KEEP_POSE, held.rate),
        (run.index(), KEEP_POSE, 1.0)
    );
    sim.step(0.1);
    let shown = sim.animator.read_local_region(&sim.device, &sim.queue, 0).unwrap();
    let kept = sim.animator.read_snapshots(&sim.device, &sim.queue).unwrap();
    assert_eq!(shown, kept, "the snapshot is the pose the frame showed");
    let lists = sim.animator.read_blend_lists(&sim.device, &sim.queue).unwrap();
    assert!(
        lists[0].samples[..lists[0].count as usize]
            .iter()
            .all(|s| s.clip != u32::MAX)
    );
    // The next frame starts the new cross-fade from that snapshot.
    sim.step(0.1);
    let started = *sim.animator.controller().instance(0).unwrap();
    assert_eq!(
        (
            started.clip,
            started.source_kind(),
            started.flags & KEEP_POSE,
            started.rate
        ),
        (idle.index(), source_kind::SNAPSHOT, 0, 0.5)
    );
    let lists = sim.animator.read_blend_lists(&sim.device, &sim.queue).unwrap();
    let from_snapshot = lists[0].samples[..lists[0].count as usize]
        .iter()
        .find(|s| s.clip == u32::MAX)
        .expect("a snapshot sample");
    assert!((from_snapshot.weight - 0.75).abs() < 1e-5, "{from_snapshot:?}");
    assert_eq!(sim.animator.read_snapshots(&sim.device, &sim.queue).unwrap(), kept);
}

#[test]
fn frozen_transitions_stop_the_source_clock_and_smooth_ones_keep_it_running() {
    let clips = &built_in().2;
    for frozen in [false, true] {
        let mut sim = Sim::new(clips[1]);
        sim.step(0.0);
        sim.step(0.3);
        let t = Transition::linear(1.0).with_frozen(frozen);
        sim.animator
            .controller_mut()
            .play(0, &InstanceDesc::new(clips[2]), Some(t))
            .unwrap();
        sim.step(0.1);
        let (a, _) = sim.animator.read_back(&sim.device, &sim.queue).unwrap();
        sim.step(0.1);
        let (b, _) = sim.animator.read_back(&sim.device, &sim.queue).unwrap();
        let moved = (b[0].source_time.to_f32() - a[0].source_time.to_f32()).abs();
        if frozen {
            assert_eq!(moved, 0.0, "frozen source clock moved");
            assert!((a[0].source_time.to_f32() - 0.3).abs() < 1e-5, "{:?}", a[0]);
        } else {
            assert!((moved - 0.1).abs() < 1e-4, "smooth source clock moved {moved}");
        }
        assert!((b[0].transition_time.to_f32() - 0.2).abs() < 1e-5);
    }
}
